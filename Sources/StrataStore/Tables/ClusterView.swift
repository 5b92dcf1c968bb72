// A cluster: up to `Cluster.capacity` consecutive objects of one table, stored as one key
// chunk (column 0) and one chunk per property, each an engine value under
// `first object key | column id`. A cluster's chunks are adjacent in the tree, so one cursor
// descent finds them all.

import StrataStorage

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
