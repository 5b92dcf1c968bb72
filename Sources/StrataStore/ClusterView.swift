// A cluster: up to `Cluster.capacity` consecutive objects of one table, stored as one key
// chunk (column 0) and one chunk per property, each an engine value under
// `first object key | column id`. A cluster's chunks are adjacent in the tree, so one cursor
// descent finds them all.

import StrataStorage

enum Cluster {
    /// Objects per cluster: large enough that per-cluster costs vanish in scans, small enough
    /// that a one-object update rewrites little (see docs/ARCHITECTURE.md).
    static let capacity = 256
    /// The column id of the object-key chunk.
    static let keyColumn: UInt16 = 0

    /// Decodes a cluster's key chunk: eight-byte keys, at most `capacity` of them. Strata never
    /// writes a larger cluster, so a file that holds one is damaged; the write path's buffers
    /// are sized for `capacity`, and loading a larger cluster into them used to stop the
    /// process instead of reporting the damage.
    static func keys(encoded chunk: UnsafeRawBufferPointer, table: @autoclosure () -> String) throws(StoreError) -> ChunkView {
        let keys = try ChunkView(encoded: chunk, expectedWidth: 8)
        try checkCount(keys.count, table: table())
        return keys
    }

    /// Throws unless `count` objects fit in one cluster. The table's name (for the message)
    /// is only read when it does not: scans call this for every cluster.
    @inline(__always)
    static func checkCount(_ count: Int, table: @autoclosure () -> String) throws(StoreError) {
        guard count <= capacity else {
            throw .corrupted("a cluster of '\(table())' holds \(count) objects, more than the \(capacity) a cluster can hold")
        }
    }
}

/// The writer's copy of a cluster: its keys and the columns it has touched.
final class DirtyCluster {
    let firstKey: Int64
    let keys: ColumnBuffer
    /// By property index; nil while the column is unchanged (read from the snapshot).
    /// Unchecked exclusivity: only the transaction's writer touches it, never across a call
    /// that reaches the same cluster (every insert reads it).
    @exclusivity(unchecked) var columns: [ColumnBuffer?]
    /// Whether the cluster exists in the snapshot (false: created by this transaction). Set
    /// when a committed cluster is carried into the next transaction (`TableAccess.carryOver`).
    var existsInSnapshot: Bool
    /// Whether every non-list column is loaded (rows can then be inserted and removed).
    var complete = false
    /// Held by a chained write's point (ChainedWrites.swift) with this many rows: rows may be
    /// appended after them in place (a return to the point drops them again, `truncate`), but
    /// any other change works on a copy. Nil when no point holds the cluster.
    var frozenRows: Int?
    /// Whether a chained write's point holds the cluster.
    var frozen: Bool { frozenRows != nil }

    init(firstKey: Int64, columnCount: Int, existsInSnapshot: Bool) {
        self.firstKey = firstKey
        self.keys = ColumnBuffer(width: 8, hasNulls: false, capacity: Cluster.capacity)
        self.columns = Array(repeating: nil, count: columnCount)
        self.existsInSnapshot = existsInSnapshot
    }

    /// Appends a row for a new object: its key, and null (zero, or "no object" in a link
    /// column) in each of `scalarColumns` and `linkColumns`, which must all be loaded. Returns
    /// the row.
    @inline(__always)
    func appendRow(key: Int64, scalarColumns: [Int], linkColumns: [Int]) -> Int {
        let row = Unmanaged.passUnretained(keys)._withUnsafeGuaranteedRef { keys in
            let row = keys.count
            keys.appendDefaultRow()
            keys.setFixed(key, at: row)
            return row
        }
        withUnmanagedColumns { columns in
            for index in scalarColumns { columns[index].unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.appendDefaultRow() } }
            for index in linkColumns { columns[index].unsafelyUnwrapped._withUnsafeGuaranteedRef { _ = $0.set(.null, at: row) } }
        }
        return row
    }

    /// Calls `body` with the column buffers as unmanaged references, which the cluster holds
    /// for the call: loading and calling them counts no references (a retain and a release
    /// per column and insert otherwise). An optional class reference and an optional
    /// `Unmanaged` of it are both one pointer, nil as zero.
    @inline(__always)
    func withUnmanagedColumns<R>(_ body: (UnsafeBufferPointer<Unmanaged<ColumnBuffer>?>) -> R) -> R {
        columns.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: Unmanaged<ColumnBuffer>?.self) { body($0) }
        }
    }

    /// Drops the rows appended since a chained write's point froze the cluster (a return to
    /// that point), in the keys and every loaded column.
    func truncateToFrozenRows() {
        guard let rows = frozenRows, rows < keys.count else { return }
        keys.truncate(to: rows)
        for column in columns { column?.truncate(to: rows) }
    }

    /// A copy that can change while this one stays as it is.
    func copy() -> DirtyCluster {
        let copy = DirtyCluster(firstKey: firstKey, keys: keys.copy(), columns: columns.map { $0?.copy() }, existsInSnapshot: existsInSnapshot)
        copy.complete = complete
        return copy
    }

    private init(firstKey: Int64, keys: ColumnBuffer, columns: [ColumnBuffer?], existsInSnapshot: Bool) {
        self.firstKey = firstKey
        self.keys = keys
        self.columns = columns
        self.existsInSnapshot = existsInSnapshot
    }
}

/// A read view of one cluster in one version (or in the writer's current state): its keys and
/// a view of every column's chunk. Valid while `generation` equals its session's.
package final class ClusterView {
    // Variables so that a column scan can reuse one view for every cluster it passes
    // (`ColumnScan`); every other view is made once and never changed.
    // Unchecked exclusivity: a view belongs to one session (see `keyLayout`), and lookups
    // read these on every call.
    @exclusivity(unchecked) package private(set) var firstKey: Int64
    @exclusivity(unchecked) package private(set) var keys: ChunkView
    /// The session generation the view is valid for. Read by every lookup and every
    /// materialised object, also from the object layer, through the computed property: another
    /// module reading a stored property directly checks exclusivity dynamically whatever the
    /// declaration says.
    package internal(set) var generation: UInt64 {
        get { validGeneration }
        set { validGeneration = newValue }
    }
    @exclusivity(unchecked) private var validGeneration: UInt64
    let dirty: DirtyCluster?
    /// One view per property, by property index (absent chunks read as defaults).
    package let columns: UnsafeMutablePointer<ChunkView>
    private let columnCount: Int
    /// Whether the keys are consecutive (no deletions inside the cluster: the usual case),
    /// measured on the first `row(of:)`. A view belongs to one session, and a frozen
    /// instance reads under its lock, so the lazy write races with nothing; unchecked
    /// exclusivity keeps the check off the lookup path.
    @exclusivity(unchecked) private var keyLayout = KeyLayout.unmeasured
    /// keys[0], when `keyLayout` is `.consecutive`.
    @exclusivity(unchecked) private var consecutiveFirst: Int64 = 0

    private enum KeyLayout: UInt8 {
        case unmeasured
        /// keys[r] == keys[0] &+ r for every row r.
        case consecutive
        /// Anything else (gaps, an empty cluster, a writer's cluster whose keys can change).
        case other
    }

    init(firstKey: Int64, keys: ChunkView, columns: [ChunkView], dirty: DirtyCluster?, generation: UInt64) {
        self.firstKey = firstKey
        self.keys = keys
        self.dirty = dirty
        validGeneration = generation
        columnCount = columns.count
        self.columns = .allocate(capacity: max(columns.count, 1))
        self.columns.initialize(from: columns, count: columns.count)
    }

    deinit {
        columns.deallocate()
    }

    /// Number of objects in the cluster.
    @inlinable package var count: Int { keys.count }

    @inlinable package func key(at row: Int) -> ObjectKey { ObjectKey(keys.int(row)) }

    /// The row of `key`, or nil when the cluster does not hold it.
    package func row(of key: Int64) -> Int? {
        if keyLayout == .unmeasured { measureKeyLayout() }
        if keyLayout == .consecutive {
            // keys[r] == keys[0] &+ r was checked for every row, so the row is the difference
            // and holds exactly `key`: no load from the key chunk (its first, last and middle
            // lines were three cache misses per random lookup).
            let row = UInt64(bitPattern: key &- consecutiveFirst)
            return row < UInt64(keys.count) ? Int(row) : nil
        }
        let count = keys.count
        guard count > 0 else { return nil }
        let first = keys.int(0), last = keys.int(count &- 1)
        guard key >= first, key <= last else { return nil }
        // The keys are distinct ascending integers, so keys[r] ≥ first + r and
        // keys[r] ≤ last − (count − 1 − r): `key` can only be in rows
        // count − 1 − (last − key) ... key − first. Where keys are dense (no deletions in the
        // cluster, the usual case) that is one row, found without a binary search. The
        // differences are taken as unsigned, where they cannot overflow.
        let above = UInt64(bitPattern: last &- key), below = UInt64(bitPattern: key &- first)
        var low = above >= UInt64(count) ? 0 : count &- 1 &- Int(above)
        var high = below >= UInt64(count) ? count : Int(below) &+ 1
        while low < high {
            let mid = (low &+ high) >> 1
            let k = keys.int(mid)
            if k == key { return mid }
            if k < key { low = mid &+ 1 } else { high = mid }
        }
        return nil
    }

    /// The most columns `prefetch(row:)` touches.
    static let prefetchedColumns = 8

    /// Starts loading the values (or, for strings and data, the entries) of `row` in the first
    /// `prefetchedColumns` columns. A lookup calls it as soon as it knows the row, so the
    /// cache misses of the property reads that usually follow overlap with materialising the
    /// object instead of coming one after another. Only a hint: nothing is read.
    @inline(__always)
    package func prefetch(row: Int) {
        for index in 0..<min(columnCount, Self.prefetchedColumns) {
            let chunk = columns[index]
            guard let values = chunk.values, row < chunk.count else { continue }
            prefetchForReading(values + row &* (chunk.width == 0 ? 8 : chunk.width))
        }
    }

    /// Points this view at another cluster with the same columns (a column scan reuses one
    /// view for every cluster it passes).
    func reuse(firstKey: Int64, keys: ChunkView) {
        self.firstKey = firstKey
        self.keys = keys
        keyLayout = .unmeasured
    }

    /// Reads the whole key chunk once (sequential, up to `Cluster.capacity` loads) so that
    /// later lookups in this view need none. Whatever the file holds, `.consecutive` is only
    /// recorded when every key matches, so a damaged chunk takes the searching path.
    private func measureKeyLayout() {
        let count = keys.count
        guard dirty == nil, count > 0, keys.width == 8 else {
            keyLayout = .other
            return
        }
        let first = keys.int(0)
        var row = 1
        while row < count {
            if keys.int(row) != first &+ Int64(row) {
                keyLayout = .other
                return
            }
            row &+= 1
        }
        consecutiveFirst = first
        keyLayout = .consecutive
    }

    /// The chunk of property `index`.
    @inline(__always)
    package func column(_ index: Int) throws(StoreError) -> ChunkView {
        require(index >= 0 && index < columnCount, "property index out of range")
        return columns[index]
    }
}
