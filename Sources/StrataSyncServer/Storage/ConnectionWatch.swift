import NIOCore
import PostgresNIO
import Synchronization

/// Ends a store call as soon as the PostgreSQL connection it runs on closes, with
/// ``SyncServerError/storageUnavailable(_:)``, instead of leaving it waiting.
///
/// postgres-nio (1.33) hands a query to its connection's channel without asking to hear whether
/// the write happened. Written after the channel closed, the query is dropped and its caller
/// waits forever, without an error and without cancellation ending the wait. A call meets a
/// closed channel when PostgreSQL crashes under a transaction (the transaction's next statement
/// or its `ROLLBACK` goes to the dead connection) and when the pool leases a connection whose
/// close it has not handled yet. The store's deadline (`withDeadline`) still bounds such a call;
/// this ends it when the connection closes, so the session fails and its client reconnects at
/// once rather than after the deadline.
///
/// Each connection's close is observed once (one callback on its `closeFuture` for its
/// lifetime); calls register and unregister with it, so nothing accumulates per call.
final class ConnectionWatch: Sendable {
    private struct State {
        var nextID: UInt64 = 0
        /// Per open connection (by its id in the pool), the calls running on it.
        var watched: [PostgresConnection.ID: [UInt64: @Sendable () -> Void]] = [:]
    }
    private let state = Mutex(State())

    /// Runs `body`, which uses `connection`, and returns its outcome; if `connection` closes
    /// first (or had closed), throws ``SyncServerError/storageUnavailable(_:)`` naming
    /// `operation` at once and cancels `body`, which is left to end on its own. Cancelling the
    /// caller cancels `body`.
    func run<T: Sendable>(on connection: PostgresConnection, _ operation: String,
                          _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let outcome = FirstOutcome<T>()
        let waiter = register(connection) {
            outcome.finish(with: .failure(SyncServerError.storageUnavailable("the PostgreSQL connection closed during \(operation)")))
        }
        defer { unregister(connection.id, waiter) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                outcome.start(continuation) {
                    Task {
                        do { outcome.finish(with: .success(try await body())) } catch { outcome.finish(with: .failure(error)) }
                    }
                }
            }
        } onCancel: {
            outcome.cancel()
        }
    }

    /// Calls `closed` once `connection` closes (at once, on its event loop, if it already has).
    private func register(_ connection: PostgresConnection, closed: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, isNew) = state.withLock { state -> (UInt64, Bool) in
            state.nextID += 1
            let isNew = state.watched[connection.id] == nil
            state.watched[connection.id, default: [:]][state.nextID] = closed
            return (state.nextID, isNew)
        }
        if isNew {
            let connectionID = connection.id, eventLoop = connection.eventLoop
            // The pool learns of the close from a callback on the same future, registered
            // after the connection was first leased (so after this one): the waiters resume
            // once every callback ran, so that a call ended here returns the connection to a
            // pool that knows it is closed and does not lease it again.
            connection.closeFuture.whenComplete { _ in eventLoop.execute { self.connectionClosed(connectionID) } }
        }
        return id
    }

    private func unregister(_ connection: PostgresConnection.ID, _ id: UInt64) {
        state.withLock { state in _ = state.watched[connection]?.removeValue(forKey: id) }
    }

    private func connectionClosed(_ connection: PostgresConnection.ID) {
        let waiters = state.withLock { state in state.watched.removeValue(forKey: connection) ?? [:] }
        for closed in waiters.values { closed() }
    }
}

/// The outcome of one ``ConnectionWatch/run(on:_:_:)`` call: the first of the call's result and
/// its connection's close resumes the caller; the other is dropped.
private final class FirstOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        /// An outcome that came before the caller was waiting (the connection had closed).
        var early: Result<T, any Error>?
        var finished = false
        var cancelled = false
        var work: Task<Void, Never>?
    }
    private let state = Mutex(State())

    /// Waits with `continuation`: resumes it at once with an outcome that came already,
    /// otherwise starts the work.
    func start(_ continuation: CheckedContinuation<T, any Error>, work makeWork: () -> Task<Void, Never>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { return continuation.resume(with: early) }
        let work = makeWork()
        let (cancel, done) = state.withLock { state in
            state.work = work
            return (state.cancelled, state.finished)
        }
        if cancel || done { work.cancel() }
    }

    /// Resumes the caller with `result` unless an outcome already did; the work is then
    /// cancelled (it is finished already when it is the outcome).
    func finish(with result: Result<T, any Error>) {
        let (continuation, work) = state.withLock { state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            guard let continuation = state.continuation else {
                state.early = result
                return (nil, nil)
            }
            state.continuation = nil
            defer { state.work = nil }
            return (continuation, state.work)
        }
        work?.cancel()
        continuation?.resume(with: result)
    }

    /// The caller was cancelled: cancel the work (its outcome then resumes the caller).
    func cancel() {
        let work = state.withLock { state in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
    }
}
