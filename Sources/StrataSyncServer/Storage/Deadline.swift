import Synchronization

/// Runs `body`, but returns (throwing ``SyncServerError/storageUnavailable(_:)``) once `limit`
/// passes without it finishing; `body`'s task is then cancelled and left to end on its own.
///
/// A store call must not hold a session forever: after PostgreSQL restarts in the middle of a
/// transaction, a postgres-nio call on the connection that died can stay unanswered. With the
/// deadline the session fails with `serverError`, the client reconnects and resends, and the
/// unique `(client, client_seq)` keeps the upload exactly-once.
func withDeadline<T: Sendable>(_ limit: Duration, _ operation: String,
                               _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withDeadline(limit, operation, staged: { _ in try await body() })
}

/// Runs `body` under a deadline of stages, as ``withDeadline(_:_:_:)``: the first stage is
/// `operation` with `limit`; `body` moves to its next stage with ``DeadlineStage/begin(_:_:)``,
/// which starts that stage's own limit from then (waiting for a pooled connection, then the
/// transaction on it). The error names the stage that ran out.
func withDeadline<T: Sendable>(_ limit: Duration, _ operation: String,
                               staged body: @escaping @Sendable (DeadlineStage) async throws -> T) async throws -> T {
    let outcome = DeadlineOutcome<T>(limit: limit, operation: operation)
    let stage = DeadlineStage { limit, operation in outcome.begin(limit, operation) }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            outcome.set(continuation)
            let work = Task {
                do { outcome.resume(with: .success(try await body(stage))) } catch { outcome.resume(with: .failure(error)) }
            }
            let timer = Task {
                // Sleeps to the current stage's end; a stage begun meanwhile moved the end on.
                while let due = outcome.due {
                    do { try await Task.sleep(until: due, clock: .continuous) } catch { return }
                    guard let expired = outcome.expired(at: due) else { continue }
                    if outcome.resume(with: .failure(SyncServerError.storageUnavailable(expired))) { work.cancel() }
                    return
                }
            }
            outcome.setTasks(work: work, timer: timer)
        }
    } onCancel: {
        outcome.cancel()
    }
}

/// Moves a ``withDeadline(_:_:staged:)`` call on to its next stage.
struct DeadlineStage: Sendable {
    fileprivate let start: @Sendable (Duration, String) -> Void

    /// Ends the current stage and starts `operation`, which must finish within `limit` from now.
    func begin(_ limit: Duration, _ operation: String) { start(limit, operation) }
}

/// The first outcome of a ``withDeadline(_:_:staged:)`` call wins; the other is dropped.
private final class DeadlineOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var cancelled = false
        var resolved = false
        /// The current stage: what runs, its limit, and when that limit is reached.
        var operation: String
        var limit: Duration
        var due: ContinuousClock.Instant
    }
    private let state: Mutex<State>

    init(limit: Duration, operation: String) {
        state = Mutex(State(operation: operation, limit: limit, due: .now + limit))
    }

    func set(_ continuation: CheckedContinuation<T, any Error>) { state.withLock { $0.continuation = continuation } }

    func setTasks(work: Task<Void, Never>, timer: Task<Void, Never>) {
        let (cancelled, resolved) = state.withLock { state in
            state.work = work
            state.timer = timer
            return (state.cancelled, state.resolved)
        }
        if resolved { timer.cancel() }
        if cancelled { cancel() }
    }

    /// The end of the current stage; nil once the call has its outcome.
    var due: ContinuousClock.Instant? { state.withLock { $0.resolved ? nil : $0.due } }

    func begin(_ limit: Duration, _ operation: String) {
        state.withLock { state in
            state.operation = operation
            state.limit = limit
            state.due = .now + limit
        }
    }

    /// The message of the stage that ran out, if the stage ending at `due` is still current.
    func expired(at due: ContinuousClock.Instant) -> String? {
        state.withLock { $0.due == due ? "\($0.operation) did not finish within \($0.limit)" : nil }
    }

    /// Resumes the caller unless an outcome already did; returns whether this one did.
    @discardableResult
    func resume(with result: Result<T, any Error>) -> Bool {
        let (continuation, timer) = state.withLock { state in
            defer {
                state.continuation = nil
                state.resolved = true
            }
            return (state.continuation, state.timer)
        }
        guard let continuation else { return false }
        timer?.cancel()
        continuation.resume(with: result)
        return true
    }

    /// The caller was cancelled: cancel the work (its outcome, likely a cancellation error,
    /// resumes the caller).
    func cancel() {
        let work = state.withLock { state in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
    }
}
