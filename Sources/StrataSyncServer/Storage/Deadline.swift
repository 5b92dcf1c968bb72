import Synchronization
import StrataSyncProtocol

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
                // Wakes at the stage's end, or a slice before it, to notice time it was kept
                // from running (``DeadlineStageClock``).
                while let wake = outcome.nextWake() {
                    do { try await Task.sleep(until: wake, clock: .continuous) } catch { return }
                    guard let expired = outcome.woke(planned: wake) else { continue }
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
        var clock: DeadlineStageClock
    }
    private let state: Mutex<State>

    init(limit: Duration, operation: String) {
        state = Mutex(State(clock: DeadlineStageClock(limit: limit, operation: operation, now: .now)))
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

    /// When the timer wakes next; nil once the call has its outcome.
    func nextWake() -> ContinuousClock.Instant? {
        state.withLock { $0.resolved ? nil : $0.clock.nextWake(now: .now) }
    }

    func begin(_ limit: Duration, _ operation: String) {
        state.withLock { $0.clock.begin(limit, operation, now: .now) }
    }

    /// The timer woke from a sleep planned to end at `planned`: the message of the stage
    /// that ran out, or nil if it has not.
    func woke(planned: ContinuousClock.Instant) -> String? {
        state.withLock { $0.clock.woke(planned: planned, now: .now) }
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
