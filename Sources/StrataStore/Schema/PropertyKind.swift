/// How a property's values are stored.
public enum PropertyKind: UInt8, Sendable, Hashable, Codable, CustomStringConvertible {
    case bool = 1, int, float, double, string, data, date, uuid, objectId, decimal128
    /// A link to an object of another (or the same) type.
    case link
    /// A value of any of the kinds above, or nil: RealmSwift's `AnyRealmValue`. Stored with
    /// variable width, a tag byte (the value's kind) before the value's bytes; a link names
    /// its target's table (`StoreValue.typedLink`). Always optional: nil is `.none`.
    case mixed

    /// Bytes per value in a fixed-width column; 0 for variable-width kinds.
    public var width: Int {
        switch self {
        case .bool: 1
        case .int, .double, .date, .link: 8
        case .float: 4
        case .string, .data, .mixed: 0
        case .uuid, .decimal128: 16
        case .objectId: 12
        }
    }

    /// Whether the values have a variable length (strings and data).
    public var isVariable: Bool { self == .string || self == .data || self == .mixed }

    /// Kinds a primary key may have.
    public var canBePrimaryKey: Bool {
        switch self {
        case .int, .string, .objectId, .uuid, .bool: true
        default: false
        }
    }

    /// Whether a property of this kind stores a (non-nil) value of kind `kind`: its own kind,
    /// or for a mixed property any kind but a plain link (a mixed value's object names its
    /// table: `StoreValue.typedLink`, of kind `.mixed`).
    @inline(__always)
    public func stores(_ kind: PropertyKind) -> Bool {
        kind == self || (self == .mixed && kind != .link)
    }

    /// Kinds whose values `@sum` and `@avg` add up (and `@min` and `@max` order, with dates):
    /// numbers, and mixed values, of which the numbers count.
    public var isSummable: Bool {
        switch self {
        case .int, .float, .double, .decimal128, .mixed: true
        default: false
        }
    }

    /// Kinds a secondary index may cover.
    public var canBeIndexed: Bool {
        switch self {
        case .int, .string, .bool, .date, .objectId, .uuid, .mixed: true
        default: false
        }
    }

    /// The kind's name in the stored schema and in messages: `int`, `string`, `object`, ….
    public var description: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .uuid: "uuid"
        case .objectId: "objectId"
        case .decimal128: "decimal128"
        case .link: "object"
        case .mixed: "mixed"
        }
    }
}
