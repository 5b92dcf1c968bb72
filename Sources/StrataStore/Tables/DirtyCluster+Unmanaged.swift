// The insert path's access to a dirty cluster's column buffers without reference counting.
//
// Unsafe, and sound under these invariants:
// - The cluster's `columns` array holds a strong reference to every buffer for the whole call:
//   nothing in the body replaces or drops a column (the body must not call back into the
//   store), so an unretained reference stays valid.
// - `ColumnBuffer?` and `Unmanaged<ColumnBuffer>?` have the same layout (one pointer, nil as
//   zero), so the array's storage can be read as the latter (`withMemoryRebound`).
// - The columns a caller unwraps (`unsafelyUnwrapped`) are loaded: the insert path appends
//   only to complete clusters, whose scalar columns are all present.

extension DirtyCluster {
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
}
