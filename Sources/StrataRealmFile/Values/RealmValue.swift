public import Foundation

/// One value read from a Realm file, in Realm's own types.
///
/// Collections keep Realm's order: a list in list order, a set in the order Realm keeps it
/// (sorted), a dictionary's keys in the order stored (sorted by their UTF-8 bytes).
public enum RealmValue: Sendable, Equatable {
    /// No value: a null optional, a null link, or a mixed value holding null.
    case null
    /// An integer (Realm's `Int`, `Int8`…`Int64` properties all store 64 bits).
    case int(Int64)
    /// A boolean.
    case bool(Bool)
    /// A `Float`, bit for bit as stored.
    case float(Float)
    /// A `Double`, bit for bit as stored.
    case double(Double)
    /// A string (valid UTF-8; may contain NUL).
    case string(String)
    /// Binary data (`Data` in RealmSwift).
    case binary([UInt8])
    /// A date, as Realm stores it.
    case timestamp(RealmTimestamp)
    /// An `ObjectId`.
    case objectID(RealmObjectID)
    /// A `UUID`.
    case uuid(UUID)
    /// A `Decimal128`.
    case decimal128(RealmDecimal128)
    /// A link to another object (a `Link`, a link in a list/set/dictionary, or a typed link in
    /// a mixed value).
    case link(RealmLink)
    /// An embedded object, read in full.
    case embedded(RealmObject)
    /// A list's elements in list order (also a mixed value holding a list).
    case list([RealmValue])
    /// A set's elements in Realm's order.
    case set([RealmValue])
    /// A dictionary's entries in stored order.
    case dictionary([RealmDictionaryEntry])

    /// Compares floating-point values by bit pattern, so NaN equals the same NaN and −0.0
    /// differs from 0.0: the comparison an importer's round-trip check needs.
    public static func == (lhs: RealmValue, rhs: RealmValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.int(a), .int(b)): return a == b
        case let (.bool(a), .bool(b)): return a == b
        case let (.float(a), .float(b)): return a.bitPattern == b.bitPattern
        case let (.double(a), .double(b)): return a.bitPattern == b.bitPattern
        case let (.string(a), .string(b)): return a == b
        case let (.binary(a), .binary(b)): return a == b
        case let (.timestamp(a), .timestamp(b)): return a == b
        case let (.objectID(a), .objectID(b)): return a == b
        case let (.uuid(a), .uuid(b)): return a == b
        case let (.decimal128(a), .decimal128(b)): return a == b
        case let (.link(a), .link(b)): return a == b
        case let (.embedded(a), .embedded(b)): return a == b
        case let (.list(a), .list(b)): return a == b
        case let (.set(a), .set(b)): return a == b
        case let (.dictionary(a), .dictionary(b)): return a == b
        default: return false
        }
    }
}

/// A link to an object: the target's class and its object key in that class's table.
public struct RealmLink: Hashable, Sendable {
    /// The target object's class name.
    public let className: String
    /// The target object's key (Realm's `ObjKey`), as `RealmObject.key` reports it.
    public let objectKey: Int64

    /// A link to the object with `objectKey` in `className`.
    public init(className: String, objectKey: Int64) {
        self.className = className
        self.objectKey = objectKey
    }
}

/// One entry of a dictionary.
public struct RealmDictionaryEntry: Sendable, Equatable {
    /// The entry's key.
    public let key: String
    /// The entry's value.
    public let value: RealmValue

    /// An entry with `key` and `value`.
    public init(key: String, value: RealmValue) {
        self.key = key
        self.value = value
    }
}
