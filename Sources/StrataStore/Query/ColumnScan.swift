// A scan of a table's clusters that reads only the columns a query needs.
//
// A cluster is one tree entry per column (see ClusterView.swift). The general scan
// (`TableAccess.forEachCluster`) steps through every entry of every cluster, resolves every
// value (an overflow page for a large chunk), decodes every chunk and makes a new view per
// cluster. A count such as `age > 73 && active` needs two of the columns: this scan steps over
// the other entries without reading their values, decodes only the wanted chunks, and hands the
// caller one view, reused for every cluster. Without the keys it takes a cluster's object count
// from the length of its key chunk, so it does not read that chunk either.

import StrataStorage

/// Reads the wanted columns of each cluster of one table into one reused `ClusterView`.
///
/// The view passed to the body is only valid during the call: it is overwritten for the next
/// cluster. Its unwanted columns read as absent and, when the keys are not wanted, its keys are
/// a placeholder with the right count (`key(at:)` must not be used). A cluster where a wanted
/// column has no chunk (a column a migration added and nothing wrote) is passed as a full view
/// instead, so that kernels can fall back to the general evaluator.
final class ColumnScan {
    // Alive while used: the session holds its tables for life, and is held while queries run.
    unowned(unsafe) let table: TableAccess
    /// The property indices read, ascending.
    let properties: [Int]
    let readsKeys: Bool
    /// For each column id, the property index to read, or -1.
    private let wantedByColumn: [Int]
    private let view: ClusterView

    init(table: TableAccess, properties: Set<Int>, keys: Bool) {
        self.table = table
        self.properties = properties.sorted()
        readsKeys = keys
        var wanted = [Int](repeating: -1, count: Int(table.columnIDs.max() ?? 0) + 1)
        for index in properties where !table.schema.properties[index].isList {
            wanted[Int(table.columnIDs[index])] = index
        }
        wantedByColumn = wanted
        view = ClusterView(firstKey: 0, keys: .absent, columns: [ChunkView](repeating: .absent, count: table.schema.properties.count),
                           dirty: nil, generation: 0)
    }

    /// Whether the scan can run in the current transaction: not after the transaction changed
    /// the table (its clusters then live partly in memory; use the general scan).
    var canRun: Bool { table.dirty.isEmpty && table.newClusters.isEmpty }

    /// Calls `body` with each non-empty cluster in key order; stops when it returns false.
    /// Requires `canRun`.
    func run(_ body: (ClusterView) throws -> Bool) throws {
        require(canRun, "a column scan ran over a table the transaction changed")
        if table.isDropped { return }
        guard let tree = try table.clusters() else { return }
        let cursor = try table.reading.makeCursor(on: tree)
        view.generation = table.session.generation
        let wantedByColumn = self.wantedByColumn
        let columns = view.columns
        var positioned = try cursor.first()
        while positioned {
            let entryKey = cursor.key
            guard entryKey.count == TreeKey.clusterKeyLength else { throw corrupted("a cluster entry has a key of \(entryKey.count) bytes") }
            let first = TreeKey.clusterFirstKey(entryKey)
            guard entryKey[8] == 0 && entryKey[9] == 0 else { throw corrupted("a cluster has no key chunk") }
            // The object count: from the key chunk, or from its length (a fixed-width chunk of
            // 8-byte keys without nulls is a header and 8 bytes per key).
            var keys: ChunkView
            if readsKeys {
                keys = try Cluster.keys(encoded: try cursor.currentValue(), table: table.schema.name)
            } else {
                let length = cursor.currentValueLength
                let count = (length &- ChunkFormat.headerSize) / 8
                if length < ChunkFormat.headerSize || ChunkFormat.headerSize &+ count &* 8 != length {
                    // Not the length of a key chunk: decode it and let its checks speak.
                    keys = try Cluster.keys(encoded: try cursor.currentValue(), table: table.schema.name)
                } else {
                    try Cluster.checkCount(count, table: table.schema.name)
                    keys = ChunkView(values: nil, nulls: nil, bytes: nil, width: 8, count: count)
                }
            }
            for index in properties { columns[index] = .absent }
            // The cluster's other entries: read the wanted ones, step over the rest.
            while true {
                positioned = try cursor.nextKey()
                guard positioned else { break }
                let key = cursor.key
                guard key.count == TreeKey.clusterKeyLength else { throw corrupted("a cluster entry has a key of \(key.count) bytes") }
                guard TreeKey.clusterFirstKey(key) == first else { break }
                let column = Int(key[8]) << 8 | Int(key[9])
                guard column < wantedByColumn.count else { continue }
                let index = wantedByColumn[column]
                guard index >= 0 else { continue }
                let chunk = try ChunkView(encoded: try cursor.currentValue(), expectedWidth: table.schema.properties[index].kind.width)
                guard chunk.count == keys.count else {
                    throw corrupted("column '\(table.schema.properties[index].name)' of a cluster holds \(chunk.count) values for \(keys.count) objects")
                }
                columns[index] = chunk
            }
            guard keys.count > 0 else { continue }
            var complete = true
            for index in properties where columns[index].values == nil { complete = false }
            if complete {
                view.reuse(firstKey: first, keys: keys)
                guard try body(view) else { return }
            } else if let full = try table.clusterView(firstKey: first), full.count > 0 {
                guard try body(full) else { return }
            }
        }
    }

    private func corrupted(_ reason: String) -> StoreError {
        .corrupted("\(reason) (table '\(table.schema.name)')")
    }
}
