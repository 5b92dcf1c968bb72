// What a table does when its write transaction ends: the commit's flush of its clusters,
// lists and counters to the engine, what it carries over to the next write transaction,
// and the keys a rollback leaves used.

import StrataStorage

extension TableAccess {
    /// The table as a commit of this session wrote it: its counters and (when the commit
    /// inserted into it) its last cluster, whose buffers hold exactly the encoded chunks.
    struct Carried {
        /// The version the commit made.
        let version: UInt64
        let nextKey: Int64
        let storedCount: Int
        /// The cluster tree's last cluster; nil once a transaction took it.
        var lastCluster: DirtyCluster?
    }

    /// Forgets what the last commit carried over (the trees changed behind the table).
    func forgetCarried() {
        carried = nil
        carriedTrees = (nil, nil)
    }

    /// Called once the write transaction committed as `version`, before `reset`: keeps the
    /// table's counters and its last cluster for the next write transaction, which uses them
    /// only if it starts from `version` (then they are exactly what the file holds), so that a
    /// one-object commit neither reads the counters nor decodes the last cluster's chunks
    /// again. The cluster is kept only when it is complete, not shared with a savepoint, and
    /// this transaction knew it to be the tree's last.
    func carryOver(committed write: WriteTransaction) {
        let version = write.committingVersion
        if caches.treeSerial == session.transactionSerial, !dropped {
            carriedTrees = (caches.clusterTree.flatMap { write.committedTree($0) }, caches.primaryKeyTree.flatMap { write.committedTree($0) })
        } else {
            carriedTrees = (nil, nil)
        }
        guard metaLoaded, !dropped else {
            carried = nil
            return
        }
        var last: DirtyCluster?
        if let first = newClusters.last ?? caches.snapshotLastCluster, let cluster = dirty[first],
           cluster.complete, !cluster.frozen, cluster.keys.count > 0 {
            cluster.existsInSnapshot = true
            last = cluster
        }
        carried = Carried(version: version, nextKey: nextKey, storedCount: storedCount, lastCluster: last)
    }

    /// The carried-over state, if this write transaction starts from the version it was kept
    /// for.
    @inline(__always)
    var carriedForThisWrite: Carried? {
        guard let carried, let write = session.write, carried.version == write.version else { return nil }
        return carried
    }


    /// Called when the write transaction ends without committing, before `reset`: the keys it
    /// handed out stay used.
    func rollBack() {
        if metaLoaded { session.store.noteKeysUsed(inTable: tableID, below: nextKey) }
    }

    /// Writes the transaction's clusters, lists and counters to the engine.
    func flush(into write: WriteTransaction) throws {
        guard metaLoaded || !dirty.isEmpty || !dirtyLists.isEmpty else { return }
        try loadMeta()
        if !dirty.isEmpty {
            let tree: Tree
            if let known = try clusters() { tree = known } else {
                tree = try write.createTree(named: clusterTreeName)
                caches.clusterTree = tree
            }
            for (first, cluster) in dirty {
                if cluster.keys.count == 0 {
                    if cluster.existsInSnapshot {
                        _ = try write.delete(forKey: TreeKey.cluster(first, column: Cluster.keyColumn), in: tree)
                        for id in columnIDs { _ = try write.delete(forKey: TreeKey.cluster(first, column: id), in: tree) }
                    }
                    continue
                }
                // Keys on the stack; each chunk encoded straight where the engine keeps the
                // value (for most chunks, its overflow page image): no buffer in between.
                let keys = cluster.keys
                try TreeKey.withCluster(first, column: Cluster.keyColumn) { key in
                    try write.put(length: keys.encodedLength(), forKey: key, in: tree) { keys.encode(into: $0) }
                }
                for (index, buffer) in cluster.columns.enumerated() {
                    guard let buffer else { continue }
                    try TreeKey.withCluster(first, column: columnIDs[index]) { key in
                        try write.put(length: buffer.encodedLength(), forKey: key, in: tree) { buffer.encode(into: $0) }
                    }
                }
            }
        }
        if !dirtyLists.isEmpty {
            let tree = try write.createTree(named: listTreeName)
            for (id, values) in dirtyLists {
                let column = id.isMapKeys ? TreeKey.mapKeysColumn(columnIDs[id.property]) : columnIDs[id.property]
                let key = TreeKey.list(column: column, ObjectKey(id.key))
                if values.isEmpty {
                    _ = try write.delete(forKey: key, in: tree)
                    continue
                }
                let property = schema.properties[id.property]
                let buffer = id.isMapKeys ? ColumnBuffer(kind: .string, optional: false, capacity: values.count)
                    : ColumnBuffer(kind: property.kind, optional: property.isOptional, capacity: values.count)
                for (row, value) in values.enumerated() {
                    buffer.insertRow(at: row)
                    buffer.set(value, at: row)
                }
                buffer.encode(into: &encodeScratch)
                try write.put(encodeScratch, forKey: key, in: tree)
            }
        }
        try session.storeTableMeta(tableID, nextKey: nextKey, count: storedCount, in: write)
    }
}
