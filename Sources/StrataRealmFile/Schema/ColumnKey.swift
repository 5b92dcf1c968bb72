/// Realm's column key (`ColKey`): bits 0–15 the column's index (its slot in every cluster is
/// index + 1, after the object keys), bits 16–21 the column type, bits 22–29 attributes
/// fixed at creation, bits 30–63 a tag that keeps keys of deleted columns from being reused.
struct ColumnKey: Hashable, Sendable {
    let rawValue: Int64

    /// The column's index among the table's columns.
    var index: Int { Int(rawValue & 0xFFFF) }
    /// The slot of the column's leaf in a cluster.
    var clusterSlot: Int { index + 1 }
}

/// Realm's stored column types (`ColumnType`), as the spec's type array and column keys hold them.
enum ColumnType: Int, Sendable {
    case int = 0
    case bool = 1
    case string = 2
    case binary = 4
    case mixed = 6
    case timestamp = 8
    case float = 9
    case double = 10
    case decimal = 11
    case link = 12
    case linkList = 13
    case backlink = 14
    case objectID = 15
    case typedLink = 16
    case uuid = 17
}

/// The spec's per-column attribute bits (`ColumnAttr`).
struct ColumnAttributes: OptionSet, Sendable {
    let rawValue: Int64
    static let indexed = ColumnAttributes(rawValue: 1)
    static let unique = ColumnAttributes(rawValue: 2)
    static let strongLinks = ColumnAttributes(rawValue: 8)
    static let nullable = ColumnAttributes(rawValue: 16)
    static let list = ColumnAttributes(rawValue: 32)
    static let dictionary = ColumnAttributes(rawValue: 64)
    static let set = ColumnAttributes(rawValue: 128)
    static let fullTextIndexed = ColumnAttributes(rawValue: 256)
}
