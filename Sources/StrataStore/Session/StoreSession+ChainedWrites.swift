// Chained writes: several grouped async writes of one session in one engine transaction.
//
// RealmSwift's `commitAsyncWrite(allowGrouping: true)` lets consecutive commits share one
// durable sync. Sharing the sync alone leaves every small write paying a whole commit (copying
// the root-to-leaf paths it touched into new pages, writing them, and later writing the next
// copy of the same pages), so a session that has more async writes queued keeps its engine
// transaction instead: the grouped commit *chains*, the next queued write runs in the same
// transaction, and one engine commit (one sync) makes the whole chain durable.
//
// A chained commit is final for its writer: later writes in the chain cannot undo it. So each
// chained commit records a point to return to: of each table's write state (its dirty
// clusters, shared with the point and copied when next changed, its key counter and its change
// tracker), and of the engine transaction. For the engine, the first chained commit of a chain
// takes a savepoint (`WriteTransaction.savepoint()`); the later ones only copy the redo record
// written since (`copyRedo`), and a return goes back to the savepoint and makes those changes
// again (`reapply`). A savepoint per chained commit would make every node shared again, so
// each write would copy the primary-key and cluster-tree paths it touches (and drop the last
// point's copies), a large share of the work of grouped one-object writes. When the redo
// record stopped (a chain keeps it past the commit log's limit, up to 256 KB:
// `WriteTransaction.keepRedoForChains()`), each chained commit takes a savepoint instead. A later
// write that rolls back (or is cancelled) returns to the last point, keeping every chained
// commit before it. The tables' change trackers go on across the chain, so the engine commit
// logs one change set: the union of the chained writes, as if they had been one transaction.
//
// Between a chained commit and the next write the session is *suspended*: the engine
// transaction stays open (reads go through it, so the writer sees what it committed), but
// `isInWriteTransaction` is false and changes are refused, as after any commit.

import StrataStorage

extension StoreSession {
    /// Whether the open write transaction can chain its commit (no schema change pending: a
    /// new type is published when its transaction commits).
    package var canChain: Bool { write != nil && !isChainSuspended && pendingSchema == nil }

    /// Whether the session holds chained writes (suspended or running the next one).
    package var hasChainedWrites: Bool { chainPoint != nil }

    /// Commits the open write for its writer without committing the engine transaction: a
    /// savepoint of the engine transaction and of the tables' write state (their dirty
    /// clusters are shared with it and copied when next changed) is taken, and the session is
    /// suspended until `resumeChain()` (the next chained write) or the commit of the chain
    /// (`prepareCommit()` or `commit()`, after `resumeChain()`).
    package func chainCommit() throws(StoreError) {
        guard let write, canChain else { throw .transactionEnded }
        try runCommitParticipant()
        write.keepRedoForChains()
        do {
            if let point = chainPoint, let start = point.redoEnd, let end = write.redoLength {
                // The engine's changes since the last point, to make again after a return to
                // its savepoint: no new savepoint, so no node becomes shared.
                write.copyRedo(from: start, into: &point.replay)
                point.redoEnd = end
                point.tables = tables.map { $0.saveWriteState() }
            } else {
                let savepoint = try write.savepoint()
                chainPoint = ChainPoint(savepoint: savepoint, redoEnd: write.redoLength, tables: tables.map { $0.saveWriteState() })
            }
        } catch {
            rollbackAll()
            throw StoreError.wrap(error)
        }
        // Views handed out so far may point into clusters the savepoint now holds.
        generation &+= 1
        isChainSuspended = true
    }

    /// Opens the suspended write transaction for the next chained write (or for the commit of
    /// the chain).
    package func resumeChain() {
        isChainSuspended = false
    }

    /// Goes back to the last chained commit: the changes since are discarded, the chained
    /// writes stay, and the session is suspended again.
    func rollBack(to point: ChainPoint, in write: WriteTransaction) {
        let handedOut = tables.map(\.nextKey)
        for table in tables { table.rollBack() }  // the keys handed out stay used
        do {
            try write.rollback(to: point.savepoint)
            if !point.replay.isEmpty { try write.reapply(point.replay) }
            point.redoEnd = write.redoLength
        } catch {
            // The engine transaction is closed (or could not be brought back to the point):
            // nothing of the chain can be committed.
            rollbackAll()
            return
        }
        // Tables added since the chain point come after the others, and go.
        dropPendingTables()
        // Tree handles, views and every table's state go, as at any change of transaction;
        // the tables then take back their state at the chain point.
        transactionChanged()
        for (position, state) in point.tables.enumerated() where position < tables.count {
            tables[position].restoreWriteState(state, handedOut: handedOut[position])
        }
        isChainSuspended = true
    }
}
