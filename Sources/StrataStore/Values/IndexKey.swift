// Order-preserving byte encodings of values, for the primary-key and secondary indexes.
//
// An index entry's key is `encoded value | object key (8 bytes, big-endian)`, with an empty
// value, so equal values sort together and in object-key order. Long strings and data are
// cut to a prefix plus a hash; a lookup then confirms candidates by reading the object.

enum IndexKey {
    /// Encoded values longer than this are cut to a prefix and a hash.
    static let maximumValueBytes = 160

    /// Appends the encoding of `value` to `out`; returns whether it was cut (lookups must
    /// confirm candidates).
    @discardableResult
    static func append(_ value: StoreValue, to out: inout [UInt8]) -> Bool {
        switch value {
        case .null:
            out.append(0)
            return false
        case .bool(let v):
            out.append(1); out.append(v ? 1 : 0)
        case .int(let v):
            out.append(1); UnsafeBytes.appendBigEndian(UInt64(bitPattern: v) ^ (1 << 63), to: &out)
        case .date(let v):
            out.append(1); UnsafeBytes.appendBigEndian(orderedBits(v.timeIntervalSinceReferenceDate), to: &out)
        case .double(let v):
            out.append(1); UnsafeBytes.appendBigEndian(orderedBits(v), to: &out)
        case .float(let v):
            out.append(1); UnsafeBytes.appendBigEndian(orderedBits(Double(v)), to: &out)
        case .link(let v):
            out.append(1); UnsafeBytes.appendBigEndian(UInt64(bitPattern: v.rawValue) ^ (1 << 63), to: &out)
        case .typedLink(let table, let key):
            // Mixed properties are not indexed; an ordered encoding all the same.
            out.append(1); UnsafeBytes.appendBigEndian(UInt64(table), to: &out)
            UnsafeBytes.appendBigEndian(UInt64(bitPattern: key.rawValue) ^ (1 << 63), to: &out)
        case .uuid(let v):
            out.append(1); UnsafeBytes.appendMemory(of: v.uuid, to: &out)
        case .objectId(let v):
            out.append(1); v.withStoredBytes { out.append(contentsOf: $0) }
        case .decimal128(let v):
            out.append(1); v.withStoredBytes { out.append(contentsOf: $0) }
        case .string(var v):
            out.append(1)
            return v.withUTF8 { appendBytes(UnsafeRawBufferPointer($0), to: &out) }
        case .data(let v):
            out.append(1)
            return v.withUnsafeBytes { appendBytes($0, to: &out) }
        case .mixedList, .mixedDictionary:
            // An indexed mixed property indexes its values' encodings as data; an ordered
            // encoding all the same.
            out.append(1)
            return MixedNestedEncoding.encode(value).withUnsafeBytes { appendBytes($0, to: &out) }
        }
        return false
    }

    static func encode(_ value: StoreValue) -> (bytes: [UInt8], cut: Bool) {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        let cut = append(value, to: &out)
        return (out, cut)
    }

    /// Calls `body` with the encoding of `value` and whether it was cut. Fixed-width values
    /// (everything but strings and data) are encoded into a stack buffer, so a primary-key
    /// lookup allocates nothing; the bytes are the same as `encode(_:)`'s.
    @inline(__always)
    static func withEncoded<R>(_ value: StoreValue, _ body: (UnsafeRawBufferPointer, Bool) throws -> R) rethrows -> R {
        switch value {
        case .string, .data, .typedLink, .mixedList, .mixedDictionary:
            let (bytes, cut) = encode(value)
            return try bytes.withUnsafeBytes { try body($0, cut) }
        case .int(let v):
            return try withFixed(1, UInt64(bitPattern: v) ^ (1 << 63), body)
        case .link(let v):
            return try withFixed(1, UInt64(bitPattern: v.rawValue) ^ (1 << 63), body)
        default:
            return try withUnsafeTemporaryAllocation(byteCount: 24, alignment: 8) { buffer in
                var count = 0
                func put(_ byte: UInt8) { buffer[count] = byte; count += 1 }
                func put(_ bytes: UnsafeRawBufferPointer) { for b in bytes { put(b) } }
                func putBigEndian(_ bits: UInt64) { UnsafeBytes.storeBigEndian(bits, into: buffer, at: count); count += 8 }
                switch value {
                case .null: put(0)
                case .bool(let v): put(1); put(v ? 1 : 0)
                case .date(let v): put(1); putBigEndian(orderedBits(v.timeIntervalSinceReferenceDate))
                case .double(let v): put(1); putBigEndian(orderedBits(v))
                case .float(let v): put(1); putBigEndian(orderedBits(Double(v)))
                case .uuid(let v): put(1); withUnsafeBytes(of: v.uuid) { put($0) }
                case .objectId(let v): put(1); v.withStoredBytes { put($0) }
                case .decimal128(let v): put(1); v.withStoredBytes { put($0) }
                case .int, .link, .string, .data, .typedLink, .mixedList, .mixedDictionary: break  // handled above
                }
                return try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count]), false)
            }
        }
    }

    /// A one-byte tag and a big-endian integer, from a stack buffer.
    @inline(__always)
    private static func withFixed<R>(_ tag: UInt8, _ bits: UInt64, _ body: (UnsafeRawBufferPointer, Bool) throws -> R) rethrows -> R {
        var words: (UInt64, UInt64) = (0, 0)
        return try withUnsafeMutableBytes(of: &words) { raw in
            raw[0] = tag
            UnsafeBytes.storeBigEndian(bits, into: raw, at: 1)
            return try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(raw)[0..<9]), false)
        }
    }

    /// An entry key: the value's encoding and the object key.
    static func entry(_ value: StoreValue, _ key: ObjectKey) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        append(value, to: &out)
        UnsafeBytes.appendBigEndian(UInt64(bitPattern: key.rawValue), to: &out)
        return out
    }

    static func objectKey(fromEntry entry: UnsafeRawBufferPointer) -> ObjectKey {
        var v: UInt64 = 0
        for i in (entry.count - 8)..<entry.count { v = v << 8 | UInt64(entry[i]) }
        return ObjectKey(Int64(bitPattern: v))
    }

    /// Doubles as unsigned integers in numeric order (negative values reversed).
    static func orderedBits(_ d: Double) -> UInt64 {
        let bits = d.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    /// Escaped bytes (0 → 0 255) and a 0 0 terminator, so that prefixes sort first; cut to a
    /// prefix, a 0 1 marker and a 64-bit hash when long.
    private static func appendBytes(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) -> Bool {
        let start = out.count
        for b in bytes {
            out.append(b)
            if b == 0 { out.append(255) }
            if out.count - start > maximumValueBytes {
                out.removeSubrange((start + maximumValueBytes)...)
                out.append(0); out.append(1)
                UnsafeBytes.appendBigEndian(hash(bytes), to: &out)
                return true
            }
        }
        out.append(0); out.append(0)
        return false
    }

    /// FNV-1a, 64 bits.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return h
    }
}
