/// Exact equality, hashing and a total order for ``SyncValue``.
///
/// Replicas compare values to merge them (set members are dictionary keys of the merged
/// state) and sort them to encode deterministically, so both must agree with the bytes that
/// travel: floating-point values compare by bit pattern and strings by their UTF-8 bytes. With
/// Swift's own `==`, `NaN` would never equal itself (a set member that could never be removed)
/// and `0.0 == -0.0` would keep whichever spelling arrived first, so replicas that saw the
/// operations in another order would hold different bytes.
extension SyncValue: Hashable, Comparable {
    /// Exact equality: same kind and same bits (see the extension's comment).
    public static func == (lhs: SyncValue, rhs: SyncValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        case (.data(let a), .data(let b)): a == b
        case (.date(let a), .date(let b)): a.bitPattern == b.bitPattern
        case (.objectID(let a), .objectID(let b)): a == b
        case (.uuid(let a), .uuid(let b)): a == b
        case (.decimal128(let a), .decimal128(let b)): a == b
        case (.link(let a), .link(let b)): a == b
        case (.embedded(let a), .embedded(let b)): a == b
        case (.mixedList(let a), .mixedList(let b)): a == b
        case (.mixedDictionary(let a), .mixedDictionary(let b)):
            // Keys by their UTF-8 bytes, as the encoding compares them.
            a.sortedForEncoding.elementsEqual(b.sortedForEncoding) { $0.key.utf8.elementsEqual($1.key.utf8) && $0.value == $1.value }
        default: false
        }
    }

    /// Hashes the kind and the exact bits, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(kindRank)
        switch self {
        case .null: break
        case .bool(let value): hasher.combine(value)
        case .int(let value): hasher.combine(value)
        case .float(let value): hasher.combine(value.bitPattern)
        case .double(let value), .date(let value): hasher.combine(value.bitPattern)
        case .string(let value):
            hasher.combine(value.utf8.count)
            for byte in value.utf8 { hasher.combine(byte) }
        case .data(let bytes), .objectID(let bytes), .uuid(let bytes), .decimal128(let bytes): hasher.combine(bytes)
        case .link(let reference): hasher.combine(reference)
        case .embedded(let value): hasher.combine(value)
        case .mixedList(let values): hasher.combine(values)
        case .mixedDictionary(let entries):
            hasher.combine(entries.count)
            for (key, value) in entries.sortedForEncoding {
                for byte in key.utf8 { hasher.combine(byte) }
                hasher.combine(value)
            }
        }
    }

    /// A total order over values, for deterministic output (set members, encodings); not a
    /// user-facing sort. Values of different kinds order by kind (null, bool, int, float,
    /// double, string, data, date, objectID, uuid, decimal128, link, embedded, nested list,
    /// nested dictionary); within a kind:
    /// false before true, integers numerically, floating-point values by IEEE 754 total order
    /// of their bits (so `-0.0` before `0.0`, NaNs at the ends), strings and bytes
    /// lexicographically by byte, links by class name then primary key, embedded values by
    /// their encoded bytes, nested lists and dictionaries too. Consistent with `==`: exactly one of `a < b`, `a == b`, `b < a`.
    public static func < (lhs: SyncValue, rhs: SyncValue) -> Bool {
        let (leftRank, rightRank) = (lhs.kindRank, rhs.kindRank)
        if leftRank != rightRank { return leftRank < rightRank }
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): return !a && b
        case (.int(let a), .int(let b)): return a < b
        case (.float(let a), .float(let b)):
            return totalOrderKey(UInt64(a.bitPattern) << 32) < totalOrderKey(UInt64(b.bitPattern) << 32)
        case (.double(let a), .double(let b)), (.date(let a), .date(let b)):
            return totalOrderKey(a.bitPattern) < totalOrderKey(b.bitPattern)
        case (.string(let a), .string(let b)): return a.utf8.lexicographicallyPrecedes(b.utf8)
        case (.data(let a), .data(let b)), (.objectID(let a), .objectID(let b)), (.uuid(let a), .uuid(let b)),
             (.decimal128(let a), .decimal128(let b)):
            return a.lexicographicallyPrecedes(b)
        case (.link(let a), .link(let b)):
            if !a.className.utf8.elementsEqual(b.className.utf8) {
                return a.className.utf8.lexicographicallyPrecedes(b.className.utf8)
            }
            return a.primaryKey < b.primaryKey
        case (.embedded(let a), .embedded(let b)):
            var left = BinaryWriter(), right = BinaryWriter()
            left.write(a)
            right.write(b)
            return left.bytes.lexicographicallyPrecedes(right.bytes)
        case (.mixedList, .mixedList), (.mixedDictionary, .mixedDictionary):
            var left = BinaryWriter(), right = BinaryWriter()
            left.write(lhs)
            right.write(rhs)
            return left.bytes.lexicographicallyPrecedes(right.bytes)
        default:
            return false
        }
    }

    /// The kind's place in the order, and its tag on the wire.
    var kindRank: UInt8 {
        switch self {
        case .null: 0
        case .bool: 1
        case .int: 2
        case .float: 3
        case .double: 4
        case .string: 5
        case .data: 6
        case .date: 7
        case .objectID: 8
        case .uuid: 9
        case .decimal128: 10
        case .link: 11
        case .embedded: 12
        case .mixedList: 13
        case .mixedDictionary: 14
        }
    }

    /// Maps IEEE 754 bits (a float's in the high half) to an unsigned key whose order is the
    /// standard's total order: negative values reversed below the positive ones.
    private static func totalOrderKey(_ bits: UInt64) -> UInt64 {
        bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }
}

extension EmbeddedValue {
    /// Exact equality, as for ``SyncValue``: equal exactly when the encodings are, so property
    /// names and map keys compare by UTF-8 bytes rather than by canonical equivalence.
    public static func == (lhs: EmbeddedValue, rhs: EmbeddedValue) -> Bool {
        var left = BinaryWriter(), right = BinaryWriter()
        left.write(lhs)
        right.write(rhs)
        return left.bytes == right.bytes
    }

    /// Hashes the encoding, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        var writer = BinaryWriter()
        writer.write(self)
        hasher.combine(writer.bytes)
    }
}

extension EmbeddedField {
    /// Exact equality, as for ``EmbeddedValue``: equal exactly when the encodings are.
    public static func == (lhs: EmbeddedField, rhs: EmbeddedField) -> Bool {
        var left = BinaryWriter(), right = BinaryWriter()
        left.write(lhs)
        right.write(rhs)
        return left.bytes == right.bytes
    }

    /// Hashes the encoding, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        var writer = BinaryWriter()
        writer.write(self)
        hasher.combine(writer.bytes)
    }
}
