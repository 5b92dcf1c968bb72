public import Foundation

/// The identity of an object within its table: stable for the object's life, never reused.
@frozen
public struct ObjectKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64
    @inlinable public init(_ rawValue: Int64) { self.rawValue = rawValue }
    @inlinable public static func < (lhs: ObjectKey, rhs: ObjectKey) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "#\(rawValue)" }
}

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

/// What sets and `distinct()` tell values apart by (`StoreValue.identity`): a string by its
/// UTF-8 bytes (kept apart from data with the same bytes, which a mixed set may also hold), a
/// number by its value (an integer, a binary fraction's bits, or a decimal that is neither),
/// anything else as itself.
package enum StoreValueIdentity: Hashable {
    case utf8(Data)
    case integer(Int64)
    case binary(UInt64)
    case decimal(Decimal128)
    case value(StoreValue)
}

// MARK: Reading and writing a StoreValue through a chunk

extension ChunkView {
    /// The value at `row`, decoded generically.
    package func value(_ row: Int, kind: PropertyKind) -> StoreValue {
        if isNull(row) { return .null }
        switch kind {
        case .bool: return .bool(bool(row))
        case .int: return .int(int(row))
        case .float: return .float(float(row))
        case .double: return .double(double(row))
        case .string: return .string(string(row))
        case .data: return .data(Data(variableBytes(row)))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: double(row)))
        case .uuid:
            let b = fixedBytes(row)
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .objectId: return .objectId(ObjectId(storedBytes: fixedBytes(row)))
        case .decimal128: return .decimal128(Decimal128(storedBytes: fixedBytes(row)))
        case .link:
            let key = int(row)
            return key < 0 ? .null : .link(ObjectKey(key))
        case .mixed:
            return MixedEncoding.decode(variableBytes(row)) ?? .null
        }
    }
}

extension ColumnBuffer {
    /// Appends a row holding `value` (already checked against the column's kind): one call
    /// where `insertRow` and `set` take two, for inserts.
    func append(_ value: StoreValue) {
        let row = count
        insertRow(at: row)
        set(value, at: row)
    }

    /// Stores a value already checked against the column's kind. Returns true when views of
    /// this buffer became stale.
    @discardableResult
    func set(_ value: StoreValue, at row: Int) -> Bool {
        if isMixed { return setMixed(value, at: row) }
        switch value {
        case .null:
            setNull(row)
            if width == 8 && !hasNulls { setFixed(Int64(-1), at: row) }  // a link column
        case .bool(let v): setFixed(UInt8(v ? 1 : 0), at: row)
        case .int(let v): setFixed(v, at: row)
        case .float(let v): setFixed(v, at: row)
        case .double(let v): setFixed(v, at: row)
        case .date(let v): setFixed(v.timeIntervalSinceReferenceDate, at: row)
        case .link(let v): setFixed(v.rawValue, at: row)
        case .string(var v):
            return v.withUTF8 { setVariable(UnsafeRawBufferPointer($0), at: row) }
        case .data(let v):
            return v.withUnsafeBytes { setVariable($0, at: row) }
        case .uuid(let v):
            withUnsafeBytes(of: v.uuid) { setFixedBytes($0, at: row) }
        case .objectId(let v):
            v.withStoredBytes { setFixedBytes($0, at: row) }
        case .decimal128(let v):
            v.withStoredBytes { setFixedBytes($0, at: row) }
        case .typedLink:
            preconditionFailure("a link naming its table can only be stored in a mixed column")
        }
        return false
    }

    /// Stores any value in a `.mixed` column: its tag and bytes (`MixedEncoding`), or null.
    private func setMixed(_ value: StoreValue, at row: Int) -> Bool {
        if value.isNull {
            setNull(row)
            return false
        }
        return MixedEncoding.withEncoded(value) { setVariable($0, at: row) }
    }
}

extension ObjectId {
    /// The 12 stored bytes.
    package init(storedBytes: UnsafeRawBufferPointer) {
        self = ObjectId(bytes: storedBytes) ?? ObjectId(bytes: [UInt8](repeating: 0, count: 12))!
    }

    package func withStoredBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try byteArray.withUnsafeBytes(body)
    }
}

extension Decimal128 {
    /// The 16 stored bytes: the low then the high 64 bits of the BID encoding, little-endian.
    package init(storedBytes: UnsafeRawBufferPointer) {
        let low = storedBytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        let high = storedBytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        self.init(bidHigh: high, bidLow: low)
    }

    package func withStoredBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var pair = (bidLow, bidHigh)
        return try withUnsafeBytes(of: &pair) { try body($0) }
    }
}
