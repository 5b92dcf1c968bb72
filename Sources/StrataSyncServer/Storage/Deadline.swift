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
    let outcome = DeadlineOutcome<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            outcome.set(continuation)
            let work = Task {
                do { outcome.resume(with: .success(try await body())) } catch { outcome.resume(with: .failure(error)) }
            }
            let timer = Task {
                do { try await Task.sleep(for: limit) } catch { return }
                if outcome.resume(with: .failure(SyncServerError.storageUnavailable("\(operation) did not finish within \(limit)"))) {
                    work.cancel()
                }
            }
            outcome.setTasks(work: work, timer: timer)
        }
    } onCancel: {
        outcome.cancel()
    }
}

/// The first outcome of a ``withDeadline(_:_:_:)`` call wins; the other is dropped.
private final class DeadlineOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var cancelled = false
    }
    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<T, any Error>) { state.withLock { $0.continuation = continuation } }

    func setTasks(work: Task<Void, Never>, timer: Task<Void, Never>) {
        let cancelled = state.withLock { state in
            state.work = work
            state.timer = timer
            return state.cancelled
        }
        if cancelled { cancel() }
    }

    /// Resumes the caller unless an outcome already did; returns whether this one did.
    @discardableResult
    func resume(with result: Result<T, any Error>) -> Bool {
        let (continuation, timer) = state.withLock { state in
            defer { state.continuation = nil }
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
