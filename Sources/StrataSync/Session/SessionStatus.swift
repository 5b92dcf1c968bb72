import StrataSyncProtocol
import Synchronization

/// What a session knows about its transfers and connection, shared between its task (which
/// changes it) and every caller (who reads it, waits on it, or observes it). Guarded by the
/// engine's mutex; the methods here are pure bookkeeping and never call out.
struct SessionStatus {
    var connectionState: SyncSession.ConnectionState = .disconnected
    var isActive = false
    /// Set when the session stopped for good (a fatal error or its user logged out).
    var stopError: SyncError?
    /// The last error reported (fatal or not).
    var lastError: SyncError?

    var lastRecorded: UInt64 = 0
    var lastAcknowledged: UInt64 = 0
    var checkpoint: UInt64 = 0
    /// The newest server sequence known while connected (from `welcome` and each download's
    /// `remaining`); nil while no `welcome` has arrived on the current connection.
    var knownLatest: UInt64?
    var subscriptionVersion: UInt64 = 0
    var completedSubscriptionVersion: UInt64 = 0

    var waiters: [UInt64: Waiter] = [:]
    var progressObservers: [UInt64: ProgressObserver] = [:]
    var connectionObservers: [UInt64: AsyncStream<SyncSession.ConnectionState>.Continuation] = [:]
    var errorHandler: (@Sendable (SyncError) -> Void)?
    private var nextID: UInt64 = 0

    mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    /// Something awaiting a point in the transfers.
    struct Waiter {
        enum Goal {
            /// The server acknowledged every changeset through this client sequence.
            case upload(through: UInt64)
            /// The checkpoint reached the server sequence and the subscriptions of this version
            /// completed. `through` is nil until the server says its newest sequence: in the
            /// answer to latest-sequence request `request` (the first request sent after the
            /// waiter was added), or in the next `welcome` — whichever comes first; both are
            /// read by the server after the wait began, so nothing it had then is missed.
            case download(through: UInt64?, subscriptionVersion: UInt64, request: UInt64?)
            /// The subscriptions of this version (or a later one) completed.
            case subscriptions(version: UInt64)
        }
        var goal: Goal
        var continuation: CheckedContinuation<Void, any Error>
    }

    /// A progress notification's registration.
    struct ProgressObserver {
        var direction: SyncSession.ProgressDirection
        var mode: SyncSession.ProgressMode
        /// For `.forCurrentlyOutstandingWork`: the done count when it was added, and the target
        /// (nil until known, for downloads added before a `welcome`).
        var baseline: UInt64
        var target: UInt64?
        var block: @Sendable (SyncSession.Progress) -> Void
        var lastReported: SyncSession.Progress?
    }

    func isReached(_ goal: Waiter.Goal) -> Bool {
        switch goal {
        case .upload(let through): return lastAcknowledged >= through
        case .download(let through, let version, _):
            guard let through else { return false }
            return checkpoint >= through && completedSubscriptionVersion >= version
        case .subscriptions(let version): return completedSubscriptionVersion >= version
        }
    }

    /// A new download goal, its sequence to be told by the server.
    func downloadGoal() -> Waiter.Goal {
        .download(through: nil, subscriptionVersion: subscriptionVersion, request: nil)
    }

    /// Gives the download waiters that have no request yet the request `number`; returns
    /// whether any had none (so the request is worth sending).
    mutating func assignLatestSequenceRequest(_ number: UInt64) -> Bool {
        var assigned = false
        for (id, waiter) in waiters {
            if case .download(nil, let version, nil) = waiter.goal {
                waiters[id]?.goal = .download(through: nil, subscriptionVersion: version, request: number)
                assigned = true
            }
        }
        return assigned
    }

    /// The server's newest sequence was `sequence` when it read it: in a `welcome`
    /// (`request` nil: every waiting download goal began before it) or in the answer to
    /// request `request` (the goals that sent it or an earlier one).
    mutating func serverLatest(_ sequence: UInt64, answering request: UInt64?) {
        knownLatest = max(knownLatest ?? 0, sequence)
        for (id, waiter) in waiters {
            guard case .download(nil, let version, let sent) = waiter.goal else { continue }
            if let request, sent.map({ $0 > request }) ?? true { continue }
            waiters[id]?.goal = .download(through: sequence, subscriptionVersion: version, request: sent)
        }
    }

    func progress(of observer: ProgressObserver) -> SyncSession.Progress? {
        switch (observer.direction, observer.mode) {
        case (.upload, .reportIndefinitely):
            return SyncSession.Progress(transferred: lastAcknowledged, transferrable: max(lastRecorded, lastAcknowledged))
        case (.download, .reportIndefinitely):
            return SyncSession.Progress(transferred: checkpoint, transferrable: max(knownLatest ?? checkpoint, checkpoint))
        case (.upload, .forCurrentlyOutstandingWork), (.download, .forCurrentlyOutstandingWork):
            guard let target = observer.target else { return nil }
            let done = observer.direction == .upload ? lastAcknowledged : checkpoint
            let span = target > observer.baseline ? target - observer.baseline : 0
            let progressed = done > observer.baseline ? done - observer.baseline : 0
            return SyncSession.Progress(transferred: progressed, transferrable: span)
        }
    }

    /// Work to do outside the lock after a change: waiters to resume, progress to report.
    struct Effects {
        var resumed: [CheckedContinuation<Void, any Error>] = []
        var failed: [(CheckedContinuation<Void, any Error>, SyncError)] = []
        var reports: [(@Sendable (SyncSession.Progress) -> Void, SyncSession.Progress)] = []

        func run() {
            for continuation in resumed { continuation.resume() }
            for (continuation, error) in failed { continuation.resume(throwing: error) }
            for (block, progress) in reports { block(progress) }
        }
    }

    /// Resolves progress targets that waited for a `welcome`, resumes reached waiters (or
    /// fails all of them once stopped), and collects changed progress.
    mutating func settle() -> Effects {
        var effects = Effects()
        if connectionState == .connected, let knownLatest {
            for (id, observer) in progressObservers where observer.target == nil {
                progressObservers[id]?.target = knownLatest
            }
        }
        for (id, waiter) in waiters {
            if isReached(waiter.goal) {
                effects.resumed.append(waiter.continuation)
                waiters[id] = nil
            } else if let stopError {
                effects.failed.append((waiter.continuation, stopError))
                waiters[id] = nil
            }
        }
        for (id, observer) in progressObservers {
            guard let progress = progress(of: observer), progress != observer.lastReported else { continue }
            progressObservers[id]?.lastReported = progress
            effects.reports.append((observer.block, progress))
            if observer.mode == .forCurrentlyOutstandingWork && progress.isTransferComplete {
                progressObservers[id] = nil
            }
        }
        return effects
    }
}

/// The one `SessionStatus` of a session, shared by reference between its task and callers.
final class SharedSessionStatus: Sendable {
    private let state: Mutex<SessionStatus>

    init(_ initial: SessionStatus) { state = Mutex(initial) }

    /// Reads the status.
    func read<T>(_ body: (SessionStatus) -> T) -> T { state.withLock { body($0) } }

    /// Applies `change`, then resumes waiters and reports progress outside the lock (blocks
    /// may call back into the session).
    func update<T>(_ change: (inout SessionStatus) -> T) -> T {
        let (result, effects) = state.withLock { status in
            let result = change(&status)
            return (result, status.settle())
        }
        effects.run()
        return result
    }
}
