// A chained write's savepoints as one table sees them: its write state recorded at a point
// and restored when the chain goes back to it (StoreSession+ChainedWrites.swift).

import StrataStorage

extension TableAccess {
    /// A write transaction's state of this table, to come back to (StoreSession+ChainedWrites.swift).
    struct WriteState {
        let dirty: [Int64: DirtyCluster]
        let newClusters: [Int64]
        let nextKey: Int64
        let storedCount: Int
        let metaLoaded: Bool
        let changes: ChangeTracker
        let dirtyLists: [ListID: [StoreValue]]
    }

    /// Records the table's write state. The dirty clusters are shared with the point and
    /// frozen at their current rows: new objects are still appended to them in place (a
    /// return to the point drops those rows), but any other change works on a copy.
    func saveWriteState() -> WriteState {
        for cluster in dirty.values { cluster.frozenRows = cluster.keys.count }
        return WriteState(dirty: dirty, newClusters: newClusters, nextKey: nextKey, storedCount: storedCount,
                          metaLoaded: metaLoaded, changes: changes, dirtyLists: dirtyLists)
    }

    /// Goes back to a recorded write state, after `reset()` (the engine transaction went back
    /// to the matching savepoint). `handedOut` is the key counter before the reset: keys handed
    /// out since the state was recorded stay used, and count as inserted and deleted.
    func restoreWriteState(_ state: WriteState, handedOut: Int64) {
        // Objects appended to a frozen cluster after the point go again.
        for cluster in state.dirty.values { cluster.truncateToFrozenRows() }
        dirty = state.dirty
        newClusters = state.newClusters
        storedCount = state.storedCount
        metaLoaded = state.metaLoaded
        nextKey = state.metaLoaded ? max(state.nextKey, handedOut) : state.nextKey
        var tracker = state.changes
        if tracker.firstInserted != nil, handedOut > tracker.nextKey {
            for key in tracker.nextKey..<handedOut { tracker.deletedInserted.insert(key) }
        }
        changes = tracker
        dirtyLists = state.dirtyLists
        caches.setMembers.removeAll()
        caches.dropLinkHolders()
    }
}
