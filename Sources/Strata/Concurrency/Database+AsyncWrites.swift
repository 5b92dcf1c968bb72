// RealmSwift's callback API for background writes: `writeAsync`, `beginAsyncWrite`,
// `commitAsyncWrite`, `cancelAsyncWrite`, `isPerformingAsynchronousWriteOperations`.
//
// A begin queues for the write lock with a callback (no thread or task waits), then hands the
// transaction to the context, where the block runs. A commit prepares
// the transaction on the context and writes and syncs it on a background thread; the
// completion runs back on the context. The instance keeps reading its version meanwhile.
// Each operation is settled exactly once: by its hop back to the context, or earlier by
// `invalidate()`, which waits for every operation in order and settles it in place.
//
// AsyncWriteQueue.swift runs them.

import StrataStore

/// Identifies an asynchronous write operation (a begin or a commit) for `cancelAsyncWrite(_:)`.
public typealias AsyncTransactionId = UInt32

extension Database {
    /// Whether async write operations (`writeAsync`, `beginAsyncWrite`, `commitAsyncWrite`,
    /// and `asyncWrite` from its call until it returns) are waiting for the lock, running, or
    /// committing. While the callback ones are, `invalidate()` waits for them to finish.
    public var isPerformingAsynchronousWriteOperations: Bool {
        core.verifyContext("isPerformingAsynchronousWriteOperations")
        return core.awaitedWrites > 0 || core.asyncWrites.isBusy
    }

    /// Runs `block` in a write transaction and commits it, without blocking the instance's
    /// context: the lock is acquired in the background, `block` runs on the context (the
    /// instance's queue, actor or the main actor), the commit's I/O runs in the background and
    /// `onComplete` runs on the context once the commit is durable (with the error if it
    /// failed). Inside `block` you may call `commitAsyncWrite` or `cancelAsyncWrite` yourself;
    /// otherwise the transaction is committed when `block` returns.
    ///
    /// Only for instances confined to a serial queue, an actor or the main actor.
    @discardableResult
    public func writeAsync(_ block: @escaping () -> Void, onComplete: (((any Swift.Error)?) -> Void)? = nil) -> AsyncTransactionId {
        beginAsyncWrite {
            block()
            if self.isInWriteTransaction { self.commitAsyncWrite(onComplete) }
        }
    }

    /// Starts an asynchronous write transaction: the lock is acquired in the background, then
    /// `asyncWriteBlock` runs in the transaction on the instance's context. Commit it inside the
    /// block with `commitAsyncWrite` (or `commitWrite()`); a transaction still open when the
    /// block returns is cancelled. Returns an id for `cancelAsyncWrite(_:)`, which, before the
    /// block runs, cancels the transaction (the block never runs).
    @discardableResult
    public func beginAsyncWrite(_ asyncWriteBlock: @escaping () -> Void) -> AsyncTransactionId {
        core.verify("beginAsyncWrite(_:)")
        require(!configuration.readOnly, "beginAsyncWrite(_:) cannot write to a read-only database; open it with readOnly = false.")
        return core.asyncWrites.begin(asyncWriteBlock)
    }

    /// Commits the open write transaction in the background and returns at once. The instance
    /// keeps reading its current version until the commit is done; `onComplete` then runs on
    /// the instance's context, once the commit is durable, with nil or the error.
    ///
    /// With `allowGrouping`, consecutive commits (from this and other instances of the file in
    /// this process) share one durable sync: the commit is written and visible to other
    /// instances at once, the write lock passes to the next writer, and `onComplete` runs only
    /// once a sync has made it durable. As in RealmSwift, readers may see a grouped commit
    /// shortly before it is durable; a power loss in that window loses it (never a commit whose
    /// completion ran).
    ///
    /// When called in a `beginAsyncWrite` block while more of this instance's async writes
    /// wait for the lock, a grouped commit *chains*: the next waiting block runs right away in
    /// the same engine transaction, and one engine commit and one sync make the chain durable
    /// (each completion then runs, in order). A later block that rolls back discards only its
    /// own changes. The instance reads the chained writes meanwhile. See "Threading and
    /// actors" for the details.
    ///
    /// Returns an id; `cancelAsyncWrite(_:)` with it drops `onComplete` (the commit still
    /// happens).
    @discardableResult
    public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: (((any Swift.Error)?) -> Void)? = nil) -> AsyncTransactionId {
        core.verify("commitAsyncWrite(allowGrouping:_:)")
        require(isInWriteTransaction, "commitAsyncWrite() was called outside a write transaction; call it inside beginAsyncWrite's block or after beginWrite().")
        return core.asyncWrites.commit(allowGrouping: allowGrouping, onComplete)
    }

    /// Cancels an async write operation:
    /// - a begin still waiting for the lock: the transaction is cancelled and its block never
    ///   runs;
    /// - a begin whose block is running (called from inside the block): the transaction is
    ///   rolled back;
    /// - a commit: only its completion block is dropped; the commit itself still happens;
    /// - an operation that already finished: nothing.
    ///
    /// Throws `Database.Error` (`.invalidInput`) for an id this instance never returned.
    public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
        core.verify("cancelAsyncWrite(_:)")
        try core.asyncWrites.cancel(asyncTransactionId)
    }
}
