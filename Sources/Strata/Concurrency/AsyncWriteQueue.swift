// The queue behind the callback async writes (Database+AsyncWrites.swift): begins waiting for
// the write lock one at a time, blocks run on the instance's context, commits written and
// synced in the background, grouped commits chained into one engine commit.

import Dispatch
import StrataStore

/// The callback async writes of one instance. Confined to the instance's context, except for
/// the operations' hand-off cells, which background tasks fill.
///
/// Begins ask for the write lock one at a time, in order: the next waits until the one before
/// it has run its block. That lets a grouped commit *chain* (StoreSession+ChainedWrites.swift in
/// StrataStore): when a block commits with `allowGrouping` and another begin of this instance
/// is waiting, the engine transaction stays open and the waiting block runs next in it, on the
/// spot; the chain ends with a commit that does not chain, a block that rolls back, a
/// cancelled next begin, or `chainLimit` commits, and one engine commit (one sync) then makes
/// every chained commit durable. Each commit of a chain gets the chain's outcome.
final class AsyncWriteQueue {
    unowned(unsafe) let core: DatabaseCore
    private var lastId: AsyncTransactionId = 0
    /// Every operation not yet settled, by id.
    private var operations: [AsyncTransactionId: Operation] = [:]
    /// Begins that have not asked for the lock (nor joined a chain), oldest first, from
    /// `waitingHead` on; cancelled ones are skipped when reached.
    private var waiting: [Operation] = []
    private var waitingHead = 0
    /// The begin that asked for the lock and has not settled yet (at most one at a time).
    private var requestedBegin: Operation?
    /// The begin whose block is running.
    private var runningBegin: AsyncTransactionId?
    /// The commits kept in the open engine transaction, while a chain is open.
    private var openBatch: Batch?

    /// The most commits one engine commit carries.
    static let chainLimit = 512

    init(core: DatabaseCore) { self.core = core }

    /// Where grouped commits wait to be durable (see `dispatch`).
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
            case commit((((any Swift.Error)?) -> Void)?)
        }
        let id: AsyncTransactionId
        let kind: Kind
        /// A begin's own cell (its transaction), or the cell of the commit's batch (its outcome).
        let cell: Cell
        /// The commits settled together (commits only).
        let batch: Batch?
        var state: OperationState
        init(id: AsyncTransactionId, kind: Kind, cell: Cell = Cell(), batch: Batch? = nil) {
            self.id = id
            self.kind = kind
            self.cell = cell
            self.batch = batch
            if case .begin = kind { state = .waiting(cancelled: false) } else { state = .committing(cancelled: false) }
        }
    }

    /// Where an operation is in its life. A begin goes `waiting` → `requested` → `settling`, or
    /// `waiting` → `chained` → `settling` (or back to `waiting` when the chain ends before it
    /// runs); a commit stays `committing` until its batch settles. Cancelling keeps the place
    /// and only marks it: a cancelled begin still settles the lock it asked for (by releasing
    /// it), a cancelled commit still commits and only drops its completion.
    private enum OperationState: Equatable {
        /// A begin that has not asked for the write lock (in the waiting line, or taken back
        /// into it from a chain that ended before it ran).
        case waiting(cancelled: Bool)
        /// A begin that asked for the write lock; it settles when the lock is handed over.
        case requested(cancelled: Bool)
        /// A begin that runs next in the open chain instead of asking for the lock.
        case chained(cancelled: Bool)
        /// A begin whose settling started: its block runs or ran, or it released its lock. It
        /// stays listed (keeping the instance busy) until settling ends.
        case settling
        /// A commit, settled with its batch.
        case committing(cancelled: Bool)

        /// Whether a cancel arrived before the operation started settling.
        var isCancelled: Bool {
            switch self {
            case .waiting(let cancelled), .requested(let cancelled), .chained(let cancelled), .committing(let cancelled): cancelled
            case .settling: false
            }
        }

        /// Marks the operation cancelled; returns whether it was a begin still waiting, which
        /// then leaves the operations at once (nothing will settle it).
        mutating func cancel() -> Bool {
            switch self {
            case .waiting: self = .waiting(cancelled: true); return true
            case .requested: self = .requested(cancelled: true)
            case .chained: self = .chained(cancelled: true)
            case .committing: self = .committing(cancelled: true)
            case .settling: break
            }
            return false
        }

        /// A waiting begin asks for the lock.
        mutating func request() {
            if self != .settling { self = .requested(cancelled: isCancelled) }
        }

        /// A waiting begin joins the open chain.
        mutating func chain() {
            if self != .settling { self = .chained(cancelled: isCancelled) }
        }

        /// A chained begin whose chain ended before it ran goes back to waiting.
        mutating func unchain() {
            guard case .chained(let cancelled) = self else { return }
            self = .waiting(cancelled: cancelled)
        }

        /// A begin starts settling; returns whether it had been cancelled (its block must not
        /// run).
        mutating func startSettling() -> Bool {
            let cancelled = isCancelled
            self = .settling
            return cancelled
        }
    }

    /// Commits made durable by one engine commit: one commit, or a chain.
    private final class Batch {
        let cell = Cell()
        var commits: [Operation] = []
        var pending: PendingCommit?
        /// The begin that runs next in the chain (while the chain is open).
        var next: Operation?
        var settled = false
    }

    private func nextId() -> AsyncTransactionId {
        lastId &+= 1
        if lastId == 0 { lastId = 1 }
        return lastId
    }

    // MARK: Begin

    func begin(_ block: @escaping () -> Void) -> AsyncTransactionId {
        let operation = Operation(id: nextId(), kind: .begin(block))
        operations[operation.id] = operation
        waiting.append(operation)
        requestLockIfIdle()
        return operation.id
    }

    /// The oldest begin still waiting to ask for the lock.
    private func firstWaiting() -> Operation? {
        while waitingHead < waiting.count {
            let operation = waiting[waitingHead]
            if operation.state == .waiting(cancelled: false) && operations[operation.id] != nil { return operation }
            waitingHead += 1
        }
        waiting.removeAll(keepingCapacity: true)
        waitingHead = 0
        return nil
    }

    /// Takes the begin `firstWaiting()` returned out of the waiting line.
    private func takeFirstWaiting() {
        waitingHead += 1
        if waitingHead > 64 && waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
    }

    /// Puts a begin taken out of the waiting line back at its front.
    private func returnToWaiting(_ operation: Operation) {
        if waitingHead > 0 {
            waitingHead -= 1
            waiting[waitingHead] = operation
        } else {
            waiting.insert(operation, at: 0)
        }
    }

    /// Asks for the write lock for the first waiting begin, unless a begin of this instance
    /// has asked already (and not yet settled) or a chain holds the lock.
    private func requestLockIfIdle() {
        guard openBatch == nil, requestedBegin == nil, let next = firstWaiting() else { return }
        takeFirstWaiting()
        request(next)
    }

    private func request(_ operation: Operation) {
        operation.state.request()
        requestedBegin = operation
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
    }

    // MARK: Commit

    func commit(allowGrouping: Bool, _ onComplete: (((any Swift.Error)?) -> Void)?) -> AsyncTransactionId {
        let batch = openBatch ?? Batch()
        let operation = Operation(id: nextId(), kind: .commit(onComplete), cell: batch.cell, batch: batch)
        operations[operation.id] = operation
        batch.commits.append(operation)
        if allowGrouping, runningBegin != nil, batch.commits.count < Self.chainLimit, core.session.canChain,
           let next = firstWaiting() {
            do {
                try core.session.chainCommit()
            } catch {
                // The engine transaction is gone (with every commit chained before): the whole
                // batch fails.
                openBatch = nil
                fail(batch, Database.Error.wrap(error, path: core.configuration.path))
                return operation.id
            }
            takeFirstWaiting()
            openBatch = batch
            batch.next = next
            next.state.chain()
            return operation.id
        }
        openBatch = nil
        dispatch(batch, grouped: allowGrouping)
        return operation.id
    }

    /// Commits the open chain now (for `drain()`, `refresh()` and a chain whose next write
    /// will not run): the begin it was to run asks for the lock like any other.
    func finishChain() {
        guard let batch = openBatch else { return }
        openBatch = nil
        releaseNext(of: batch)
        core.session.resumeChain()
        dispatch(batch, grouped: true)
    }

    /// Puts the begin a batch was to run next back at the front of the waiting line.
    private func releaseNext(of batch: Batch) {
        guard let next = batch.next else { return }
        next.state.unchain()
        batch.next = nil
        returnToWaiting(next)
    }

    /// Settling `batch` on the context, as work for a hop; it keeps the instance alive until
    /// then.
    private func settlement(of batch: Batch) -> ContextBound<() -> Void> {
        let core: DatabaseCore = self.core
        return ContextBound(value: { [self, core] in withExtendedLifetime(core) { self.settle(batch) } })
    }

    /// Prepares the batch's engine commit and runs its I/O in the background; the batch
    /// settles back on the context once the commit is durable (or failed).
    private func dispatch(_ batch: Batch, grouped: Bool) {
        let pending: PendingCommit
        do {
            pending = try core.session.prepareCommit()
        } catch {
            fail(batch, Database.Error.wrap(error, path: core.configuration.path))
            return
        }
        batch.pending = pending
        let cell = batch.cell
        let hop = hopper()
        let settle = settlement(of: batch)
        DispatchQueue.global(qos: .userInitiated).async {
            do {
                try pending.perform(grouped: grouped)
            } catch {
                cell.fill(.failure(error))
                hop(settle)
                return
            }
            guard grouped else {
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
        requestLockIfIdle()
    }

    /// Fails every commit of the batch (their completions run later, on the context).
    private func fail(_ batch: Batch, _ error: Database.Error) {
        releaseNext(of: batch)
        batch.cell.fill(.failure(error))
        hopper()(settlement(of: batch))
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
        guard let operation = operations[id] else { return }
        if operation.state.cancel() {
            // It never asked for the lock: nothing to settle (the waiting line skips it).
            operations[id] = nil
        }
    }

    // MARK: Settling

    /// Settles `operation` (in the instance's context) unless it already was.
    private func settle(_ operation: Operation) {
        if let batch = operation.batch {
            settle(batch)
            return
        }
        guard operation.state != .settling, operations[operation.id] === operation else { return }
        guard case .begin(let block) = operation.kind else { return }
        let cancelled = operation.state.startSettling()
        defer {
            operations[operation.id] = nil
            if requestedBegin === operation { requestedBegin = nil }
            requestLockIfIdle()
        }
        let transaction: AcquiredWrite?
        switch operation.cell.take() {
        case .success(let acquired): transaction = acquired
        case .failure: transaction = nil  // the lock could not be taken: nothing to run
        }
        guard let transaction else { return }
        if cancelled || core.session.isInWriteTransaction || core.session.hasChainedWrites {
            // Cancelled while waiting (or the instance is in its own transaction): the block
            // never runs; releasing the transaction hands the lock on.
            transaction.release()
            return
        }
        // (An instance `invalidate()` released reads again first: the block reads and writes.)
        core.resumeReading()
        core.session.adoptWrite(transaction)
        run(operation, block)
        // Blocks that chained their commit: the next one runs now, in the same transaction.
        while let batch = openBatch, let next = batch.next {
            batch.next = nil
            guard !next.state.isCancelled, case .begin(let nextBlock) = next.kind else {
                operations[next.id] = nil
                finishChain()
                break
            }
            _ = next.state.startSettling()
            core.session.resumeChain()
            run(next, nextBlock)
            operations[next.id] = nil
        }
    }

    /// Runs a begin's block in the session's write transaction, then ends what the block left:
    /// an open transaction is cancelled (back to the last chained commit, if any); a chain
    /// that no write continues is committed.
    private func run(_ operation: Operation, _ block: () -> Void) {
        runningBegin = operation.id
        block()
        runningBegin = nil
        if core.session.isInWriteTransaction { core.session.rollback() }
        guard let batch = openBatch, batch.next == nil else { return }
        if core.session.readsThroughWrite {
            // Rolled back to the chain's last commit, or chained with no write to follow.
            finishChain()
        } else {
            // The block committed the chain itself, synchronously (commitWrite()).
            openBatch = nil
            batch.cell.fill(.success(nil))
            hopper()(settlement(of: batch))
        }
    }

    /// Settles every commit of a batch once its engine commit finished: the instance moves to
    /// the version it made, then each completion runs, in commit order.
    private func settle(_ batch: Batch) {
        guard !batch.settled else { return }
        batch.settled = true
        let outcome = batch.cell.take()
        var error: (any Swift.Error)?
        if case .failure(let failure) = outcome { error = failure }
        if let pending = batch.pending {
            do { try core.session.finishCommit(pending, succeeded: error == nil) } catch let finishing {
                if error == nil { error = finishing }
            }
        }
        let reported = error.map { $0 as? Database.Error ?? Database.Error.wrap($0, path: core.configuration.path) }
        for commit in batch.commits {
            operations[commit.id] = nil
            if !commit.state.isCancelled, case .commit(let onComplete) = commit.kind, let onComplete { onComplete(reported) }
        }
    }

    /// Waits for every operation, in order, and settles it here (for `invalidate()`, and
    /// before a synchronous write, which would otherwise wait for a lock that a begin holds
    /// while its hop waits for this context).
    func drain() {
        finishChain()
        // In id order, which is the order they were made in; settling may make new ones.
        while true {
            let pending = operations.values
                .filter { $0.state != .settling && !($0.batch?.settled ?? false) }
                .sorted { $0.id < $1.id }
            guard !pending.isEmpty else { return }
            for next in pending where operations[next.id] === next && next.state != .settling && !(next.batch?.settled ?? false) {
                switch next.state {
                case .waiting: request(next)
                case .chained: continue  // runs in the chain of the begin settling it
                case .requested, .settling, .committing: break
                }
                _ = next.cell.take()
                settle(next)
            }
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
                Async writes need a context to call back on: use them on a database opened on the main thread, \
                confined to a serial queue (Database(configuration:queue:)), an actor or the main actor. \
                A thread other than the main thread cannot be handed work: on it, use write { }.
                """)
        }
    }
}

/// Runs `work` isolated to `actor`.
private func runIsolated(to actor: isolated any Actor, _ work: ContextBound<() -> Void>) {
    work.value()
}
