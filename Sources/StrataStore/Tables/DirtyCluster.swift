import StrataStorage

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
    /// Held by a chained write's point (StoreSession+ChainedWrites.swift) with this many rows:
    /// rows may be appended after them in place (a return to the point drops them again,
    /// `truncate`), but any other change works on a copy. Nil when no point holds the cluster.
    var frozenRows: Int?
    /// Whether a chained write's point holds the cluster.
    var frozen: Bool { frozenRows != nil }

    init(firstKey: Int64, columnCount: Int, existsInSnapshot: Bool) {
        self.firstKey = firstKey
        self.keys = ColumnBuffer(width: 8, hasNulls: false, capacity: Cluster.capacity)
        self.columns = Array(repeating: nil, count: columnCount)
        self.existsInSnapshot = existsInSnapshot
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
