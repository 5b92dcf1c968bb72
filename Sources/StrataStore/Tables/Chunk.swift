// Column chunks: the values of one property for the objects of one cluster, stored as one
// engine value. The store is columnar (see docs/ARCHITECTURE.md): a scan or a filter over one
// property reads one packed array per cluster, and an update of one property rewrites only that
// property's chunk.
//
// Fixed-width chunk:  count u32 | format u8 (1) | width u8 | hasNulls u8 | 0 u8
//                     | nulls: count bytes (1 = null), padded to 8, when hasNulls
//                     | values: count × width bytes, little-endian
// Variable chunk:     count u32 | format u8 (2) | 0 0 0
//                     | entries: count × (offset u32, length u32; length 0xFFFF_FFFF = null)
//                     | bytes (offsets are relative to the start of the bytes)
//
// Chunks sit wherever the engine put them, so every load is unaligned.
//
// `ChunkView` reads a chunk through raw pointers, sound under these invariants:
// - `init(encoded:)` checks the header, the lengths of the null, value and entry areas against
//   the bytes it is given, and the width against the property's type, so reads of rows below
//   `count` stay inside the chunk; a variable entry pointing past the byte area reads as empty.
// - The memory outlives the view: an engine value stays mapped and unchanged while its
//   transaction is open (the store never writes a cluster tree before commit), and a
//   `ColumnBuffer`'s values never move (its byte area may: see ColumnBuffer.swift). Views
//   handed out carry the session's generation, which moves when either stops holding.

package enum ChunkFormat {
    static let fixed: UInt8 = 1
    static let variable: UInt8 = 2
    static let headerSize = 8
    static let nullLength: UInt32 = 0xFFFF_FFFF
}

/// A read-only view of one column chunk, valid while the transaction (or the write-side buffer
/// it points into) is unchanged. An absent chunk (`base == nil`) reads as all default values:
/// that is how a column added by a migration looks before anything is written to it.
@frozen
package struct ChunkView {
    @usableFromInline let values: UnsafeRawPointer?
    @usableFromInline let nulls: UnsafeRawPointer?
    @usableFromInline let bytes: UnsafeRawPointer?
    /// Bytes per value of a fixed-width chunk; 0 for a variable one.
    @usableFromInline let width: Int
    package let count: Int
    /// The size of a variable chunk's byte area: entries pointing past it read as empty.
    @usableFromInline let byteCount: Int

    @inlinable
    init(values: UnsafeRawPointer?, nulls: UnsafeRawPointer?, bytes: UnsafeRawPointer?, width: Int, count: Int, byteCount: Int = 0) {
        self.values = values
        self.nulls = nulls
        self.bytes = bytes
        self.width = width
        self.count = count
        self.byteCount = byteCount
    }

    /// A view of nothing: every row reads as null (or zero).
    package static var absent: ChunkView { ChunkView(values: nil, nulls: nil, bytes: nil, width: 0, count: 0) }

    /// A view of an encoded chunk; throws when the bytes do not form a valid chunk, or (with
    /// `expectedWidth`: the property type's width, 0 for strings and data) one of another
    /// width — readers load values of the property's type, so a chunk of narrower values
    /// would otherwise be read past its end.
    package init(encoded chunk: UnsafeRawBufferPointer, expectedCount: Int? = nil, expectedWidth: Int? = nil) throws(StoreError) {
        try self.init(encoded: chunk, expectedCount: expectedCount)
        if let expectedWidth, expectedWidth != width {
            throw .corrupted(width == 0 || expectedWidth == 0
                ? "a column chunk holds \(width == 0 ? "variable-length" : "fixed-width") values where its property's type needs \(expectedWidth == 0 ? "variable-length" : "fixed-width") ones"
                : "a column chunk holds \(width)-byte values where its property's type needs \(expectedWidth)-byte ones")
        }
    }

    private init(encoded chunk: UnsafeRawBufferPointer, expectedCount: Int?) throws(StoreError) {
        guard chunk.count >= ChunkFormat.headerSize, let base = chunk.baseAddress else {
            throw .corrupted("a column chunk of \(chunk.count) bytes is too short")
        }
        let count = Int(base.loadUnaligned(as: UInt32.self))
        if let expectedCount, expectedCount != count {
            throw .corrupted("a column chunk holds \(count) values where its cluster has \(expectedCount) objects")
        }
        let format = base.load(fromByteOffset: 4, as: UInt8.self)
        if format == ChunkFormat.fixed {
            let width = Int(base.load(fromByteOffset: 5, as: UInt8.self))
            let hasNulls = base.load(fromByteOffset: 6, as: UInt8.self) != 0
            let nullBytes = hasNulls ? (count + 7) & ~7 : 0
            guard width > 0, chunk.count == ChunkFormat.headerSize + nullBytes + count * width else {
                throw .corrupted("a fixed-width column chunk has the wrong length")
            }
            self.init(values: base + ChunkFormat.headerSize + nullBytes,
                      nulls: hasNulls ? base + ChunkFormat.headerSize : nil, bytes: nil, width: width, count: count)
        } else if format == ChunkFormat.variable {
            let entriesEnd = ChunkFormat.headerSize + count * 8
            guard chunk.count >= entriesEnd else { throw .corrupted("a variable column chunk is truncated") }
            // Entries are bounds-checked where they are read (a damaged entry reads as empty),
            // so opening a chunk costs the same whatever its size.
            self.init(values: base + ChunkFormat.headerSize, nulls: nil, bytes: base + entriesEnd,
                      width: 0, count: count, byteCount: chunk.count - entriesEnd)
        } else {
            throw .corrupted("a column chunk has the unknown format \(format)")
        }
    }

    // MARK: Reading (row must be < count, except on an absent chunk)

    @inlinable @inline(__always)
    package func isNull(_ row: Int) -> Bool {
        guard let values else { return true }
        if width == 0 {
            return values.loadUnaligned(fromByteOffset: row &* 8 &+ 4, as: UInt32.self) == ChunkFormat.nullLength
        }
        guard let nulls else { return false }
        return nulls.load(fromByteOffset: row, as: UInt8.self) != 0
    }

    @inlinable @inline(__always)
    package func int(_ row: Int) -> Int64 {
        guard let values else { return 0 }
        return values.loadUnaligned(fromByteOffset: row &* 8, as: Int64.self)
    }

    @inlinable @inline(__always)
    package func double(_ row: Int) -> Double {
        guard let values else { return 0 }
        return values.loadUnaligned(fromByteOffset: row &* 8, as: Double.self)
    }

    @inlinable @inline(__always)
    package func float(_ row: Int) -> Float {
        guard let values else { return 0 }
        return values.loadUnaligned(fromByteOffset: row &* 4, as: Float.self)
    }

    @inlinable @inline(__always)
    package func bool(_ row: Int) -> Bool {
        guard let values else { return false }
        return values.load(fromByteOffset: row, as: UInt8.self) != 0
    }

    /// The bytes of a fixed-width value (UUID, ObjectId, Decimal128).
    @inlinable @inline(__always)
    package func fixedBytes(_ row: Int) -> UnsafeRawBufferPointer {
        guard let values else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: values + row &* width, count: width)
    }

    /// The bytes of a string or data value (empty for null; check `isNull`).
    @inlinable @inline(__always)
    package func variableBytes(_ row: Int) -> UnsafeRawBufferPointer {
        guard let values, let bytes else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let offset = values.loadUnaligned(fromByteOffset: row &* 8, as: UInt32.self)
        let length = values.loadUnaligned(fromByteOffset: row &* 8 &+ 4, as: UInt32.self)
        if length == ChunkFormat.nullLength || Int(offset) &+ Int(length) > byteCount {
            return UnsafeRawBufferPointer(start: bytes, count: 0)
        }
        return UnsafeRawBufferPointer(start: bytes + Int(offset), count: Int(length))
    }

    @inlinable
    package func string(_ row: Int) -> String {
        let raw = variableBytes(row)
        return String(unsafeUninitializedCapacity: raw.count) { buffer in
            guard raw.count > 0 else { return 0 }
            buffer.baseAddress!.update(from: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: raw.count)
            return raw.count
        }
    }
}
