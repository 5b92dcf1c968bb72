// RealmSwift's callback API for background writes: `writeAsync`, `beginAsyncWrite`,
// `commitAsyncWrite`, `cancelAsyncWrite`, `isPerformingAsynchronousWriteOperations`.
//
// A begin queues for the write lock with a callback (no thread or task waits), then hands the
// transaction to the context, where the block runs. A commit prepares
// the transaction on the context and writes and syncs it on a background thread; the
// completion runs back on the context. The instance keeps reading its version meanwhile.
// Each operation is settled exactly once: by its hop back to the context, or earlier by
// `invalidate()`, which waits for every operation in order and settles it in place.

import Dispatch
import StrataStore

/// Identifies an asynchronous write operation (a begin or a commit) for `cancelAsyncWrite(_:)`.
public typealias AsyncTransactionId = UInt32

extension Database {
    /// Whether async write operations (`writeAsync`, `beginAsyncWrite`, `commitAsyncWrite`)
    /// are waiting for the lock, running, or committing. While true, `invalidate()` waits for
    /// them to finish.
    public var isPerformingAsynchronousWriteOperations: Bool {
        core.verify("isPerformingAsynchronousWriteOperations")
        return core.asyncWrites.isBusy
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

/// Something that may only be touched in the context it was made in, carried through a
/// `Sendable` closure that runs in that same context.
struct ContextBound<Value>: @unchecked Sendable {
    let value: Value
}

/// The callback async writes of one instance. Confined to the instance's context, except for
/// the operations' hand-off cells, which background tasks fill.
final class AsyncWriteQueue {
    unowned(unsafe) let core: DatabaseCore
    private var lastId: AsyncTransactionId = 0
    private var operations: [Operation] = []
    /// The begin whose block is running.
    private var runningBegin: AsyncTransactionId?

    init(core: DatabaseCore) { self.core = core }

    /// Where grouped commits wait to be durable (see `commit`).
    static let syncQueue = DispatchQueue(label: "strata.grouped-commit-sync")

    var isBusy: Bool { !operations.isEmpty }

    /// What a background task hands back: a write transaction, the outcome of a commit.
    final class Cell: @unchecked Sendable {
        // @unchecked: `value` is written once, before `ready` is signalled, and read only after
        // waiting on it (or after the hop the writer scheduled afterwards).
        private var value: Result<AcquiredWrite?, any Swift.Error>?
        private let ready = DispatchSemaphore(value: 0)

        func fill(_ result: Result<AcquiredWrite?, any Swift.Error>) {
            value = result
            ready.signal()
        }

        /// Waits until filled (at once if it is) and returns the value.
        func take() -> Result<AcquiredWrite?, any Swift.Error> {
            ready.wait()
            ready.signal()
            return value!  // set before the signal
        }
    }

    private final class Operation {
        enum Kind {
            case begin(() -> Void)
            case commit(PendingCommit?, (((any Swift.Error)?) -> Void)?)  // nil: failed before it was prepared
        }
        let id: AsyncTransactionId
        var kind: Kind
        let cell = Cell()
        var cancelled = false
        /// Set when settling starts; the operation stays listed (keeping the instance busy)
        /// until settling ends, so a begin counts while its block runs.
        var settling = false
        init(id: AsyncTransactionId, kind: Kind) {
            self.id = id
            self.kind = kind
        }
    }

    private func nextId() -> AsyncTransactionId {
        lastId &+= 1
        if lastId == 0 { lastId = 1 }
        return lastId
    }

    // MARK: Begin

    func begin(_ block: @escaping () -> Void) -> AsyncTransactionId {
        let operation = Operation(id: nextId(), kind: .begin(block))
        operations.append(operation)
        let store = core.session.store
        let cell = operation.cell
        let hop = hopper()
        // The closure keeps the instance alive until the operation settles.
        let core: DatabaseCore = self.core
        let settle = ContextBound(value: { [self, core] in
            withExtendedLifetime(core) { self.settle(operation) }
        })
        // No thread or task waits for the lock: the releaser hands it over through the callback.
        AcquiredWrite.acquire(store) { result in
            cell.fill(result.map { $0 })
            hop(settle)
        }
        return operation.id
    }

    // MARK: Commit

    func commit(allowGrouping: Bool, _ onComplete: (((any Swift.Error)?) -> Void)?) -> AsyncTransactionId {
        let pending: PendingCommit
        do {
            pending = try core.session.prepareCommit()
        } catch {
            let wrapped = Database.Error.wrap(error, path: core.configuration.path)
            let id = nextId()
            if let onComplete {
                // Fails like a completed commit: the completion runs later, on the context.
                let operation = Operation(id: id, kind: .commit(nil, onComplete))
                operation.cell.fill(.failure(wrapped))
                operations.append(operation)
                hopper()(ContextBound(value: { [self] in self.settle(operation) }))
            }
            return id
        }
        let operation = Operation(id: nextId(), kind: .commit(pending, onComplete))
        operations.append(operation)
        let cell = operation.cell
        let hop = hopper()
        let core: DatabaseCore = self.core
        let settle = ContextBound(value: { [self, core] in
            withExtendedLifetime(core) { self.settle(operation) }
        })
        DispatchQueue.global(qos: .userInitiated).async {
            do {
                try pending.perform(grouped: allowGrouping)
            } catch {
                cell.fill(.failure(error))
                hop(settle)
                return
            }
            guard allowGrouping else {
                cell.fill(.success(nil))
                hop(settle)
                return
            }
            // Waiting for durability on one serial queue: the first waiter syncs everything
            // written so far and the ones queued behind it find their commit covered, so a
            // group needs one blocked thread, not one per commit.
            AsyncWriteQueue.syncQueue.async {
                do {
                    try pending.waitUntilDurable()
                    cell.fill(.success(nil))
                } catch {
                    cell.fill(.failure(error))
                }
                hop(settle)
            }
        }
        return operation.id
    }

    // MARK: Cancel

    func cancel(_ id: AsyncTransactionId) throws(Database.Error) {
        guard id != 0, id <= lastId else {
            throw Database.Error(.invalidInput, "cancelAsyncWrite(\(id)): no async write with this id was started on this instance.")
        }
        if runningBegin == id {
            if core.session.isInWriteTransaction { core.session.rollback() }
            return
        }
        operations.first { $0.id == id }?.cancelled = true
    }

    // MARK: Settling

    /// Settles `operation` (in the instance's context) unless it already was.
    private func settle(_ operation: Operation) {
        guard !operation.settling, operations.contains(where: { $0 === operation }) else { return }
        operation.settling = true
        defer { operations.removeAll { $0 === operation } }
        switch operation.kind {
        case .begin(let block):
            let transaction: AcquiredWrite?
            switch operation.cell.take() {
            case .success(let acquired): transaction = acquired
            case .failure: transaction = nil  // the lock could not be taken: nothing to run
            }
            guard let transaction else { return }
            if operation.cancelled || core.isInvalidated || core.session.isInWriteTransaction {
                // Cancelled while waiting (or the instance is in its own transaction): the block
                // never runs; releasing the transaction hands the lock on.
                transaction.release()
                return
            }
            core.session.adoptWrite(transaction)
            runningBegin = operation.id
            block()
            runningBegin = nil
            // A transaction the block left open is cancelled.
            if core.session.isInWriteTransaction { core.session.rollback() }
        case .commit(let pending, let onComplete):
            let outcome = operation.cell.take()
            var error: (any Swift.Error)?
            if case .failure(let failure) = outcome { error = failure }
            if let pending {
                do { try core.session.finishCommit(pending, succeeded: error == nil) } catch let finishing {
                    if error == nil { error = finishing }
                }
            }
            let reported = error.map { $0 as? Database.Error ?? Database.Error.wrap($0, path: core.configuration.path) }
            if !operation.cancelled, let onComplete { onComplete(reported) }
        }
    }

    /// Waits for every operation, in order, and settles it here (for `invalidate()`, and
    /// before a synchronous write, which would otherwise wait for a lock that a begin holds
    /// while its hop waits for this context).
    func drain() {
        while let next = operations.first(where: { !$0.settling }) {
            _ = next.cell.take()
            settle(next)
        }
    }

    /// Schedules a settle on the instance's context.
    private func hopper() -> @Sendable (ContextBound<() -> Void>) -> Void {
        switch core.confinement {
        case .queue(let queue, _):
            return { work in queue.async { work.value() } }
        case .mainActor:
            return { work in Task { @MainActor in work.value() } }
        case .actor(let box):
            // Called in the actor's context, so the actor exists. The hop keeps it alive until
            // this one operation settles (never longer: hops are made per operation).
            guard let actor = box.actor else {
                fatalError("An async write was started on a database whose actor (\(box.typeName)) no longer exists.")
            }
            let bound = ContextBound(value: actor)
            return { work in Task { await runIsolated(to: bound.value, work) } }
        case .frozen:
            fatalError("A frozen database cannot be written to; thaw() it first to get a live instance.")
        case .thread:
            fatalError("""
                Async writes need a context to call back on: use them on a database confined to a serial queue \
                (Database(configuration:queue:)), an actor or the main actor. On a thread, use write { }.
                """)
        }
    }
}

/// Runs `work` isolated to `actor`.
private func runIsolated(to actor: isolated any Actor, _ work: ContextBound<() -> Void>) {
    work.value()
}
