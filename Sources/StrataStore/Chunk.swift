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

/// The writer's mutable copy of one column chunk. Fixed-width buffers are allocated at the
/// cluster's capacity and never move, so views into them stay valid while values change;
/// variable-width bytes are appended (old bytes become garbage, dropped when encoded).
final class ColumnBuffer {
    let width: Int          // 0: variable
    let hasNulls: Bool
    let capacity: Int
    /// Whether the column holds `.mixed` values (each stored as `MixedEncoding` bytes).
    let isMixed: Bool
    // Unchecked exclusivity: a buffer belongs to one write transaction's table, used by its
    // writer alone, and no method holds an access to one of these across a call that reaches
    // the same buffer (the checks were a few percent of a bulk insert).
    @exclusivity(unchecked) private(set) var count: Int
    private let values: UnsafeMutableRawPointer        // fixed values, or variable entries
    private let nulls: UnsafeMutablePointer<UInt8>?
    @exclusivity(unchecked) private var bytes: UnsafeMutableRawPointer?
    @exclusivity(unchecked) private var byteCount = 0
    @exclusivity(unchecked) private var byteCapacity = 0
    @exclusivity(unchecked) private var liveBytes = 0

    init(width: Int, hasNulls: Bool, capacity: Int, isMixed: Bool = false) {
        self.isMixed = isMixed
        self.width = width
        self.hasNulls = hasNulls && width > 0
        self.capacity = capacity
        self.count = 0
        let stride = width == 0 ? 8 : width
        values = .allocate(byteCount: max(1, capacity * stride), alignment: 8)
        nulls = self.hasNulls ? .allocate(capacity: capacity) : nil
    }

    convenience init(kind: PropertyKind, optional: Bool, capacity: Int) {
        self.init(width: kind.width, hasNulls: optional, capacity: capacity, isMixed: kind == .mixed)
    }

    deinit {
        values.deallocate()
        nulls?.deallocate()
        bytes?.deallocate()
    }

    /// An independent copy (for a chained write's savepoint, ChainedWrites.swift).
    func copy() -> ColumnBuffer {
        let copy = ColumnBuffer(width: width, hasNulls: hasNulls, capacity: capacity, isMixed: isMixed)
        copy.count = count
        copy.values.copyMemory(from: values, byteCount: count * (width == 0 ? 8 : width))
        if let nulls, let target = copy.nulls { target.update(from: nulls, count: count) }
        if let bytes, byteCapacity > 0 {
            let fresh = UnsafeMutableRawPointer.allocate(byteCount: byteCapacity, alignment: 8)
            fresh.copyMemory(from: bytes, byteCount: byteCount)
            copy.bytes = fresh
            copy.byteCapacity = byteCapacity
        }
        copy.byteCount = byteCount
        copy.liveBytes = liveBytes
        return copy
    }

    /// Fills the buffer from an encoded chunk (or with `count` defaults when absent).
    func load(_ view: ChunkView, count: Int) {
        require(count <= capacity, "cluster larger than its capacity")
        self.count = count
        if width > 0 {
            if let source = view.values {
                values.copyMemory(from: source, byteCount: count * width)
            } else {
                values.initializeMemory(as: UInt8.self, repeating: 0, count: count * width)
            }
            if let nulls {
                for row in 0..<count { nulls[row] = view.isNull(row) ? 1 : 0 }
            }
        } else {
            var total = 0
            for row in 0..<count where !view.isNull(row) { total += view.variableBytes(row).count }
            reserveBytes(total)
            byteCount = 0
            for row in 0..<count {
                if view.values == nil || view.isNull(row) {
                    setEntry(row, offset: 0, length: ChunkFormat.nullLength)
                } else {
                    let source = view.variableBytes(row)
                    setEntry(row, offset: UInt32(byteCount), length: UInt32(source.count))
                    if source.count > 0 { (bytes! + byteCount).copyMemory(from: source.baseAddress!, byteCount: source.count) }
                    byteCount += source.count
                }
            }
            liveBytes = byteCount
        }
    }

    var view: ChunkView {
        if width > 0 {
            return ChunkView(values: UnsafeRawPointer(values), nulls: nulls.map { UnsafeRawPointer($0) }, bytes: nil, width: width, count: count)
        }
        return ChunkView(values: UnsafeRawPointer(values), nulls: nil, bytes: UnsafeRawPointer(bytes ?? values), width: 0, count: count,
                         byteCount: byteCapacity)  // appends within the capacity keep views valid
    }

    // MARK: Rows

    /// Opens a gap at `row` holding a default (null or zero) value.
    func insertRow(at row: Int) {
        require(count < capacity && row <= count, "cluster row out of range")
        let stride = width == 0 ? 8 : width
        if row < count {
            (values + (row + 1) * stride).copyMemory(from: values + row * stride, byteCount: (count - row) * stride)
            if let nulls { (nulls + row + 1).update(from: nulls + row, count: count - row) }
        }
        count += 1
        setDefault(at: row)
    }

    /// Appends a row holding a default (null or zero) value: `insertRow(at: count)` without
    /// the gap, small enough to inline into the insert path.
    @inline(__always)
    func appendDefaultRow() {
        let row = count
        if row >= capacity { fatalError("cluster row out of range") }
        count = row &+ 1
        setDefault(at: row)
    }

    /// Writes the default value (null, zero or "no entry") into `row`: stores rather than a
    /// `memset` call for the common widths.
    @inline(__always)
    private func setDefault(at row: Int) {
        switch width {
        case 8: values.storeBytes(of: 0 as UInt64, toByteOffset: row &* 8, as: UInt64.self)
        case 0: setEntry(row, offset: 0, length: ChunkFormat.nullLength)
        case 1: values.storeBytes(of: 0 as UInt8, toByteOffset: row, as: UInt8.self)
        case 4: values.storeBytes(of: 0 as UInt32, toByteOffset: row &* 4, as: UInt32.self)
        default: (values + row * width).initializeMemory(as: UInt8.self, repeating: 0, count: width)
        }
        // Variable-width buffers have no null bytes (a null is an entry's length).
        if let nulls { nulls[row] = hasNulls ? 1 : 0 }
    }

    /// Drops the rows from `rows` on (rows appended since a chained write's point, on a return
    /// to it: ChainedWrites.swift). A variable column's bytes of those rows stay until the
    /// buffer is compacted.
    func truncate(to rows: Int) {
        guard rows < count else { return }
        if width == 0 {
            for row in rows..<count {
                let length = entryLength(row)
                if length != ChunkFormat.nullLength { liveBytes -= Int(length) }
            }
        }
        count = rows
    }

    func removeRow(at row: Int) {
        require(row < count, "cluster row out of range")
        let stride = width == 0 ? 8 : width
        if width == 0 {
            let length = entryLength(row)
            if length != ChunkFormat.nullLength { liveBytes -= Int(length) }
        }
        if row < count - 1 {
            (values + row * stride).copyMemory(from: values + (row + 1) * stride, byteCount: (count - row - 1) * stride)
            if let nulls { (nulls + row).update(from: nulls + row + 1, count: count - row - 1) }
        }
        count -= 1
    }

    // MARK: Values

    func setNull(_ row: Int) {
        if width == 0 {
            let length = entryLength(row)
            if length != ChunkFormat.nullLength { liveBytes -= Int(length) }
            setEntry(row, offset: 0, length: ChunkFormat.nullLength)
        } else {
            (values + row * width).initializeMemory(as: UInt8.self, repeating: 0, count: width)
            nulls?[row] = 1
        }
    }

    @inline(__always)
    func setFixed<T>(_ value: T, at row: Int) {
        values.storeBytes(of: value, toByteOffset: row * width, as: T.self)
        nulls?[row] = 0
    }

    func setFixedBytes(_ source: UnsafeRawBufferPointer, at row: Int) {
        require(source.count == width, "fixed-width value of the wrong size")
        (values + row * width).copyMemory(from: source.baseAddress!, byteCount: width)
        nulls?[row] = 0
    }

    /// Stores variable bytes; returns true when the byte storage moved (views are stale).
    @discardableResult
    func setVariable(_ source: UnsafeRawBufferPointer, at row: Int) -> Bool {
        let old = entryLength(row)
        if old != ChunkFormat.nullLength { liveBytes -= Int(old) }
        var moved = false
        if byteCount + source.count > byteCapacity {
            if liveBytes + source.count <= byteCapacity / 2 {
                compact()
            }
            if byteCount + source.count > byteCapacity {
                reserveBytes(max(byteCapacity * 2, byteCount + source.count, 256))
            }
            moved = true
        }
        if source.count > 0 { (bytes! + byteCount).copyMemory(from: source.baseAddress!, byteCount: source.count) }
        setEntry(row, offset: UInt32(byteCount), length: UInt32(source.count))
        byteCount += source.count
        liveBytes += source.count
        return moved
    }

    private func entryLength(_ row: Int) -> UInt32 {
        values.load(fromByteOffset: row * 8 + 4, as: UInt32.self)
    }

    private func setEntry(_ row: Int, offset: UInt32, length: UInt32) {
        values.storeBytes(of: offset, toByteOffset: row * 8, as: UInt32.self)
        values.storeBytes(of: length, toByteOffset: row * 8 + 4, as: UInt32.self)
    }

    private func reserveBytes(_ needed: Int) {
        guard needed > byteCapacity else { return }
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: needed, alignment: 8)
        if let bytes {
            fresh.copyMemory(from: bytes, byteCount: byteCount)
            bytes.deallocate()
        }
        bytes = fresh
        byteCapacity = needed
    }

    /// Drops garbage bytes, keeping row order.
    private func compact() {
        guard let bytes else { return }
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: max(byteCapacity, 1), alignment: 8)
        var cursor = 0
        for row in 0..<count {
            let length = entryLength(row)
            guard length != ChunkFormat.nullLength else { continue }
            let offset = Int(values.load(fromByteOffset: row * 8, as: UInt32.self))
            (fresh + cursor).copyMemory(from: bytes + offset, byteCount: Int(length))
            setEntry(row, offset: UInt32(cursor), length: length)
            cursor += Int(length)
        }
        bytes.deallocate()
        self.bytes = fresh
        byteCount = cursor
        liveBytes = cursor
    }

    /// The chunk's encoding.
    func encode(into out: inout [UInt8]) {
        let length = encodedLength()
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: repeatElement(0, count: length))
        out.withUnsafeMutableBytes { encode(into: $0) }
    }

    /// The length of the chunk's encoding (a variable chunk drops its garbage bytes first, as
    /// its encoding does).
    func encodedLength() -> Int {
        if width > 0 { return ChunkFormat.headerSize + (nulls == nil ? 0 : (count + 7) & ~7) + count * width }
        if liveBytes < byteCount { compact() }
        return ChunkFormat.headerSize + count * 8 + byteCount
    }

    /// Writes the chunk's encoding into `out`, which holds exactly `encodedLength()` bytes
    /// (called just before): straight into the engine's page image for the value.
    func encode(into out: UnsafeMutableRawBufferPointer) {
        guard let base = out.baseAddress else { return }
        require(out.count == encodedLength(), "a chunk's encoding must fill the bytes asked for")
        base.storeBytes(of: UInt32(count).littleEndian, as: UInt32.self)
        base.storeBytes(of: width > 0 ? ChunkFormat.fixed : ChunkFormat.variable, toByteOffset: 4, as: UInt8.self)
        base.storeBytes(of: UInt8(width), toByteOffset: 5, as: UInt8.self)
        base.storeBytes(of: hasNulls ? 1 : 0, toByteOffset: 6, as: UInt8.self)
        base.storeBytes(of: 0, toByteOffset: 7, as: UInt8.self)
        var at = ChunkFormat.headerSize
        if width > 0 {
            if let nulls {
                (base + at).copyMemory(from: nulls, byteCount: count)
                let padded = (count + 7) & ~7
                (base + at + count).initializeMemory(as: UInt8.self, repeating: 0, count: padded - count)
                at += padded
            }
            if count > 0 { (base + at).copyMemory(from: values, byteCount: count * width) }
        } else {
            if count > 0 { (base + at).copyMemory(from: values, byteCount: count * 8) }
            at += count * 8
            if byteCount > 0, let bytes { (base + at).copyMemory(from: bytes, byteCount: byteCount) }
        }
    }
}
