public import Foundation

/// One stored value, for the paths that handle values generically (creating objects from
/// dictionaries, key-value access, migrations, dumps). Hot paths read chunks directly.
public enum StoreValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case uuid(UUID)
    case objectId(ObjectId)
    case decimal128(Decimal128)
    case link(ObjectKey)
    /// A link that names its target's table: what a `.mixed` property holds for an object
    /// (a link property's type names the table, so `.link` needs only the key).
    case typedLink(table: UInt32, key: ObjectKey)

    /// Whether this is `.null`.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The value as sets and `distinct()` tell values apart: strings by their UTF-8 bytes (as
    /// queries compare them, and as RealmSwift does), where `==` on `.string` is Swift's
    /// (canonically equivalent strings are equal); numbers by their value, whatever their
    /// kind (a mixed set holds `5`, `5.0` and a decimal `5` once, as Realm's sets do), where
    /// `==` tells the kinds apart. Within one kind this is the kind's own equality, but that
    /// every NaN is one value.
    package var identity: StoreValueIdentity {
        switch self {
        case .string(let text): return .utf8(Data(text.utf8))
        case .int(let value): return .integer(value)
        case .double(let value): return Self.numberIdentity(value)
        case .float(let value): return Self.numberIdentity(Double(value))  // exact
        case .decimal128(let value):
            if value.isNaN { return Self.numberIdentity(.nan) }
            if let whole = value.exactInt64 { return .integer(whole) }
            // A decimal that reads as a Double the same way (`0.5`, `0.1`) is that Double's
            // number, as a decimal made from the Double would be.
            let double = value.doubleValue
            if Decimal128(double) == value { return Self.numberIdentity(double) }
            return .decimal(value)
        default: return .value(self)
        }
    }

    /// A binary floating-point number's identity: a whole number in `Int64`'s range as that
    /// integer (so `-0.0` is `0`), any NaN as one value, anything else by its bits.
    private static func numberIdentity(_ value: Double) -> StoreValueIdentity {
        if value.isNaN { return .binary(Double.nan.bitPattern) }
        if let whole = Int64(exactly: value) { return .integer(whole) }
        return .binary(value.bitPattern)
    }

    /// The kind of value, or nil for null.
    public var kind: PropertyKind? {
        switch self {
        case .null: nil
        case .bool: .bool
        case .int: .int
        case .float: .float
        case .double: .double
        case .string: .string
        case .data: .data
        case .date: .date
        case .uuid: .uuid
        case .objectId: .objectId
        case .decimal128: .decimal128
        case .link: .link
        case .typedLink: .mixed
        }
    }

    /// The value for messages and dumps: `3`, `"text"`, `null`, `<4 bytes>`, `link#7`.
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let v): "\(v)"
        case .int(let v): "\(v)"
        case .float(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .data(let v): "<\(v.count) bytes>"
        case .date(let v): "\(v)"
        case .uuid(let v): v.uuidString
        case .objectId(let v): "ObjectId(\(v))"
        case .decimal128(let v): "\(v)"
        case .link(let v): "link\(v)"
        case .typedLink(let table, let key): "link(table \(table))\(key)"
        }
    }
}

extension Array where Element == StoreValue {
    /// The values with repeats removed, first kept, as a set holds its members (by
    /// `identity`).
    package func distinctMembers() -> [StoreValue] {
        var seen: Set<StoreValueIdentity> = []
        return filter { seen.insert($0.identity).inserted }
    }
}
