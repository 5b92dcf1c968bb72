/// Big-endian key builders for the store's trees.
enum TreeKey {
    /// Bytes in a cluster entry's key: first object key (8, big-endian) and column id (2).
    static let clusterKeyLength = 10

    static func cluster(_ firstKey: Int64, column: UInt16) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(10)
        UnsafeBytes.appendBigEndian(UInt64(bitPattern: firstKey), to: &out)
        out.append(UInt8(column >> 8)); out.append(UInt8(column & 0xFF))
        return out
    }

    /// Calls `body` with `cluster(firstKey, column:)`'s bytes on the stack.
    @inline(__always)
    static func withCluster<R>(_ firstKey: Int64, column: UInt16, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var key: (UInt64, UInt16) = (UInt64(bitPattern: firstKey).bigEndian, column.bigEndian)
        return try withUnsafeBytes(of: &key) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(10))) }
    }

    /// Calls `body` with `u64(v)`'s bytes on the stack.
    @inline(__always)
    static func withU64<R>(_ v: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var key = v.bigEndian
        return try withUnsafeBytes(of: &key) { try body($0) }
    }

    /// The column id under which a map's keys are stored in the list tree, beside its values
    /// (which are under the property's own id). Column ids stay below `0x8000`
    /// (`ObjectSchema.validate()`), so the two never meet.
    static func mapKeysColumn(_ column: UInt16) -> UInt16 { column | 0x8000 }

    static func list(column: UInt16, _ key: ObjectKey) -> [UInt8] {
        var out: [UInt8] = [UInt8(column >> 8), UInt8(column & 0xFF)]
        out.reserveCapacity(10)
        UnsafeBytes.appendBigEndian(UInt64(bitPattern: key.rawValue), to: &out)
        return out
    }

    static func u64(_ v: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        UnsafeBytes.appendBigEndian(v, to: &out)
        return out
    }

    /// The first object key of a cluster entry's key, whose length the caller checked to be
    /// `clusterKeyLength`: one unaligned big-endian load of its first 8 bytes.
    @inline(__always)
    static func clusterFirstKey(_ key: UnsafeRawBufferPointer) -> Int64 {
        Int64(bitPattern: UnsafeBytes.loadBigEndian(UInt64.self, from: key))
    }

    static func readU64(_ bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt64 {
        var v: UInt64 = 0
        for i in offset..<(offset + 8) { v = v << 8 | UInt64(bytes[i]) }
        return v
    }
}
