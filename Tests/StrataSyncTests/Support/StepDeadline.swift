// A deadline for one step of a long end-to-end test, so that a step that never finishes fails
// the test with the step's name instead of holding the whole test run.

import Synchronization
import Testing

/// A step of a test that did not finish within its deadline (already recorded as an issue).
struct StepTimedOut: Error, CustomStringConvertible {
    var step: String
    var seconds: Int
    var description: String { "\(step) did not finish within \(seconds) s" }
}

/// Runs `body` and returns its result; if it has not finished after `seconds`, records an
/// issue naming `step`, cancels it and throws ``StepTimedOut``.
///
/// `body` runs in a task of its own rather than a child of a task group: a group returns only
/// once every child ended, so a step that ignores cancellation (a store call postgres-nio
/// never answers, a shutdown waiting for it) would hold the group, and the test, forever.
/// Here it is abandoned: it may go on in the background, but the test moves on and fails.
/// Cancelling the caller cancels `body`, and the caller gets `body`'s outcome.
@discardableResult
func withStepDeadline<T: Sendable>(seconds: Int, _ step: String, sourceLocation: SourceLocation = #_sourceLocation,
                                   _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = StepRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            // Stored before either task starts, so whichever finishes first finds it.
            race.set(continuation)
            let work = Task {
                do { race.finish(with: .success(try await body())) } catch { race.finish(with: .failure(error)) }
            }
            let timer = Task {
                // The deadline's own clock: a timer, not a wait for another task's progress.
                do { try await Task.sleep(for: .seconds(seconds)) } catch { return }
                if race.finish(with: .failure(StepTimedOut(step: step, seconds: seconds))) {
                    Issue.record("\(step) did not finish within \(seconds) s", sourceLocation: sourceLocation)
                    work.cancel()
                }
            }
            race.setTasks(work: work, timer: timer)
        }
    } onCancel: {
        race.cancel()
    }
}

/// The outcome of a ``withStepDeadline(seconds:_:sourceLocation:_:)`` call: the first of the
/// step's result and its deadline resumes the caller; the other is dropped.
private final class StepRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var cancelled = false
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }
    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<T, any Error>) { state.withLock { $0.continuation = continuation } }

    /// Keeps the tasks (to cancel them later); cancels the step at once if the caller already
    /// was, and the timer if the step already finished.
    func setTasks(work: Task<Void, Never>, timer: Task<Void, Never>) {
        let (cancelled, finished) = state.withLock { state in
            state.work = work
            state.timer = timer
            return (state.cancelled, state.continuation == nil)
        }
        if cancelled { work.cancel() }
        if finished { timer.cancel() }
    }

    /// Resumes the caller with `result` unless an outcome already did; returns whether this one did.
    @discardableResult
    func finish(with result: Result<T, any Error>) -> Bool {
        let (continuation, timer) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.timer)
        }
        guard let continuation else { return false }
        timer?.cancel()
        continuation.resume(with: result)
        return true
    }

    /// The caller was cancelled: cancel the step (its outcome then resumes the caller).
    func cancel() {
        let work = state.withLock { state in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
    }
}
