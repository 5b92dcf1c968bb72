/// One table as the file stores it: its key, name, columns and cluster tree.
///
/// A table's top array holds: 0 the spec, 2 the cluster tree, 3 the table key (tagged),
/// 4 one search index ref per column (0 for none), 7 and 8 each column's opposite table and
/// opposite column (for links and backlinks), 11 the primary key's column key (tagged),
/// 12 flags whose low two bits are the table type (0 top-level, 1 embedded, 2 asymmetric).
/// The spec holds: 0 column types (for a dictionary, the key's type in bits 16 and up),
/// 1 names of the public columns (backlink columns have none and come last), 2 attributes,
/// 4 enumerated-string keys (unused by Realm Core 14's object store), 5 column keys.
struct TableInfo {
    struct Column {
        let name: String
        let key: ColumnKey
        let type: ColumnType
        let attributes: ColumnAttributes
        let dictionaryKeyType: ColumnType?
        let hasSearchIndex: Bool
        let oppositeTableKey: Int64?
        let oppositeColumnKey: Int64?

        var isNullable: Bool { attributes.contains(.nullable) }
        var collection: RealmCollectionKind {
            if attributes.contains(.list) || type == .linkList { return .list }
            if attributes.contains(.set) { return .set }
            if attributes.contains(.dictionary) { return .dictionary }
            return .none
        }
    }

    let name: String
    let key: Int64
    let clusterTreeRef: Int?
    let columns: [Column]
    let primaryKey: ColumnKey?
    let tableType: Int

    /// The class name for a table named `class_…`, else nil (Realm's internal tables).
    var className: String? {
        name.hasPrefix("class_") ? String(name.dropFirst(6)) : nil
    }
    var isEmbedded: Bool { tableType == 1 }

    /// Reads the table whose top array is at `ref`.
    init(graph: NodeGraph, name: String, ref: Int) throws {
        let top = try graph.node(ref)
        guard top.hasRefs, top.count >= 4 else {
            throw RealmFileError.corrupted(reason: "the top array of table \(name) at \(ref) is malformed")
        }
        self.name = name
        key = try top.tagged(at: 3)
        clusterTreeRef = try top.ref(at: 2)
        if top.count > 11, try top.integer(at: 11) & 1 == 1 {
            primaryKey = ColumnKey(rawValue: try top.tagged(at: 11))
        } else {
            primaryKey = nil
        }
        tableType = top.count > 12 ? Int(try top.tagged(at: 12) & 3) : 0
        guard let specNode = try graph.child(of: top, at: 0), specNode.hasRefs, specNode.count >= 3 else {
            throw RealmFileError.corrupted(reason: "table \(name) has no spec")
        }
        guard let typeNode = try graph.child(of: specNode, at: 0), let nameNode = try graph.child(of: specNode, at: 1),
              let attributeNode = try graph.child(of: specNode, at: 2) else {
            throw RealmFileError.corrupted(reason: "the spec of table \(name) lacks its types, names or attributes")
        }
        if specNode.count > 4, try specNode.ref(at: 4) != nil {
            throw RealmFileError.unsupportedFeature("enumerated string columns (table \(name))")
        }
        let types = try typeNode.integers()
        let names = try StringLeaf.strings(graph: graph, node: nameNode, nullable: false).map { $0 ?? "" }
        let attributes = try attributeNode.integers()
        let keyNode = specNode.count > 5 ? try graph.child(of: specNode, at: 5) : nil
        let keys = try keyNode?.integers() ?? types.indices.map { Int64($0) }
        guard attributes.count == types.count, keys.count == types.count, names.count <= types.count else {
            throw RealmFileError.corrupted(reason: "the spec of table \(name) has arrays of different lengths")
        }
        let searchIndexes = top.count > 4 ? try graph.child(of: top, at: 4) : nil
        let oppositeTables = top.count > 8 ? try graph.child(of: top, at: 7) : nil
        let oppositeColumns = top.count > 8 ? try graph.child(of: top, at: 8) : nil
        var columns: [Column] = []
        for position in types.indices {
            guard let type = ColumnType(rawValue: Int(types[position] & 0xFFFF)) else {
                throw RealmFileError.unsupportedFeature("column type \(types[position] & 0xFFFF) in table \(name)")
            }
            let columnKey = ColumnKey(rawValue: keys[position])
            let index = columnKey.index
            var dictionaryKeyType: ColumnType?
            let attributeBits = ColumnAttributes(rawValue: attributes[position])
            if attributeBits.contains(.dictionary) {
                dictionaryKeyType = ColumnType(rawValue: Int(types[position] >> 16))
            }
            let hasIndex = try searchIndexes.map { index < $0.count ? try $0.integer(at: index) != 0 : false } ?? false
            var oppositeTable: Int64?
            var oppositeColumn: Int64?
            if type == .link || type == .linkList || type == .backlink {
                guard let oppositeTables, let oppositeColumns, index < oppositeTables.count, index < oppositeColumns.count else {
                    throw RealmFileError.corrupted(reason: "link column \(position) of table \(name) has no target table")
                }
                oppositeTable = try oppositeTables.integer(at: index)
                oppositeColumn = try oppositeColumns.integer(at: index)
            }
            columns.append(Column(name: position < names.count ? names[position] : "", key: columnKey, type: type,
                                  attributes: attributeBits, dictionaryKeyType: dictionaryKeyType,
                                  hasSearchIndex: hasIndex, oppositeTableKey: oppositeTable,
                                  oppositeColumnKey: oppositeColumn))
        }
        self.columns = columns
    }
}
