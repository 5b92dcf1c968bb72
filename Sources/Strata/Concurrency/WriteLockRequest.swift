// An `asyncWrite`'s wait for the write lock, which cancelling its task withdraws.

import Dispatch
import Synchronization
import StrataStore

/// One wait for the write lock of a store, made with the engine's callback (no thread or task
/// blocks) and awaited by one task.
///
/// The task resumes exactly once: with the transaction when the lock is handed over, or with
/// `CancellationError` as soon as the task is cancelled. `state` decides which of the two
/// happens first. A transaction handed over after the cancellation is released at once, so the
/// lock passes on to the next writer and nothing is written.
final class WriteLockRequest: Sendable {
    private enum State: Sendable {
        /// The request is not made yet.
        case idle
        /// The request is made; the task waits here.
        case waiting(CheckedContinuation<AcquiredWrite, any Error>)
        /// The task was cancelled (and resumed, if it waited); a transaction that arrives is
        /// released.
        case cancelled
        /// The task was resumed with the outcome of the request.
        case finished
    }

    private let state = Mutex(State.idle)

    private init() {}

    /// Suspends until the write lock of `store` is the caller's, and returns its transaction
    /// (to be adopted by a session). Throws `CancellationError` when the task is cancelled
    /// before that, and the engine's error when the transaction cannot begin. The request is
    /// made on the caller's actor before it suspends, so requests made in turn on one actor
    /// are served in that order.
    static func acquire(_ store: Store, isolation: isolated (any Actor)? = #isolation) async throws -> AcquiredWrite {
        // (Both helpers below run on `isolation`, their `#isolation` default.)
        let request = WriteLockRequest()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                request.wait(continuation, for: store)
            }
        } onCancel: {
            request.cancel()
        }
    }

    private func wait(_ continuation: CheckedContinuation<AcquiredWrite, any Error>, for store: Store) {
        let proceed = state.withLock { state -> Bool in
            guard case .idle = state else { return false }  // cancelled before it started
            state = .waiting(continuation)
            return true
        }
        guard proceed else {
            continuation.resume(throwing: CancellationError())
            return
        }
        AcquiredWrite.acquire(store) { [self] result in deliver(result) }
    }

    private func cancel() {
        let waiting = state.withLock { state -> CheckedContinuation<AcquiredWrite, any Error>? in
            switch state {
            case .idle:
                state = .cancelled
                return nil
            case .waiting(let continuation):
                state = .cancelled
                return continuation
            case .cancelled, .finished:
                return nil
            }
        }
        waiting?.resume(throwing: CancellationError())
    }

    private func deliver(_ result: Result<AcquiredWrite, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<AcquiredWrite, any Error>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .finished
            return continuation
        }
        if let waiting {
            waiting.resume(with: result)
        } else if case .success(let acquired) = result {
            // Released away from the engine's hand-over, which may be inside the previous
            // holder's release.
            DispatchQueue.global(qos: .userInitiated).async { acquired.release() }
        }
    }
}
