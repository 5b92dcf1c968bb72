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
    /// A list nested in a mixed value: its elements are mixed values (`.null` for none), and
    /// may themselves be nested lists or dictionaries, up to
    /// `MixedEncoding.maximumNestingDepth` levels. Only `.mixed` properties, mixed lists and
    /// mixed map values store it.
    case mixedList([StoreValue])
    /// A dictionary nested in a mixed value, keyed by strings; its values are as a
    /// `mixedList`'s elements.
    case mixedDictionary([String: StoreValue])

    /// Whether this is `.null`.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// Whether this is a list or dictionary nested in a mixed value.
    public var isNestedCollection: Bool {
        switch self {
        case .mixedList, .mixedDictionary: true
        default: false
        }
    }

    /// How many collections deep the value nests: 0 for a plain value, 1 for a list or
    /// dictionary of plain values, and so on.
    public var nestingDepth: Int {
        switch self {
        case .mixedList(let elements): 1 + (elements.lazy.map(\.nestingDepth).max() ?? 0)
        case .mixedDictionary(let entries): 1 + (entries.values.lazy.map(\.nestingDepth).max() ?? 0)
        default: 0
        }
    }

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
        case .typedLink, .mixedList, .mixedDictionary: .mixed
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
        case .mixedList(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .mixedDictionary(let entries):
            entries.isEmpty ? "[:]"
                : "[" + entries.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                    .map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "]"
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
