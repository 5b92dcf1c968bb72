// A writer's column as raw memory: one allocation of `capacity` values (or, for strings, data
// and mixed values, of 8-byte entries `offset u32 | length u32`), an optional null byte per
// row, and a growing byte area for variable values.
//
// Unsafe, and sound under these invariants:
// - Rows below `count` are initialised; every access checks or is given a row below `count`
//   (or `capacity` for the append that makes it so). A cluster never holds more than
//   `Cluster.capacity` rows, the capacity clusters' buffers are made with.
// - The values and nulls allocations never move while the buffer lives, so `ChunkView`s of
//   them stay valid as values change. The byte area moves when it grows or is compacted:
//   `setVariable` (and `set`) return true then, and the caller bumps the session's
//   generation (`StoreSession.invalidateViews`) so that no view into the old bytes is read.
// - A variable entry's offset and length lie within the bytes written (`byteCount`).
// - The buffer belongs to one write transaction's table and is used by its writer alone.

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
    // the same buffer (every insert and load of a row goes through these).
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

    /// An independent copy (for a chained write's savepoint, StoreSession+ChainedWrites.swift).
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
    /// to it: StoreSession+ChainedWrites.swift). A variable column's bytes of those rows stay until the
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
