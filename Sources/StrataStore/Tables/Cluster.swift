import StrataStorage

enum Cluster {
    /// Objects per cluster: large enough that per-cluster costs vanish in scans, small enough
    /// that a one-object update rewrites little (see docs/ARCHITECTURE.md).
    static let capacity = 256
    /// The column id of the object-key chunk.
    static let keyColumn: UInt16 = 0

    /// Decodes a cluster's key chunk: eight-byte keys, at most `capacity` of them. Strata never
    /// writes a larger cluster, so a file that holds one is damaged, and is reported so here:
    /// the write path's buffers are sized for `capacity`, and loading a larger cluster into
    /// them would stop the process.
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
