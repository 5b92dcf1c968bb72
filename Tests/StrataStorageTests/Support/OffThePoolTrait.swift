import Foundation
import Synchronization
import Testing

/// Runs each test (each case of a parameterized one) on a thread of its own instead of the
/// concurrency pool: `@Suite(.offThePool)` or `@Test(.offThePool)`.
///
/// Swift Testing runs a synchronous test, and an async test between its suspensions, on the
/// cooperative pool, which has one thread per core. A test that blocks (waits for a child
/// process, a semaphore, a pipe) holds one of those threads while it does nothing; on a
/// two-core machine two of them hold the whole pool, and every async test and server in the
/// run (a PostgreSQL pool, a sync server, their timers) waits behind them. With this trait
/// the test's own code runs on a ``DedicatedThreadExecutor`` and leaves the pool to the rest.
/// Tests that mostly compute gain nothing from it (they need a core either way) and are
/// better left on the pool, where they do not queue behind waiting tests for a slot.
///
/// The body is unchanged: a synchronous test still runs start to end on one thread (the
/// dedicated one), and an async test's nonisolated code stays on that thread across awaits.
/// Its structured child tasks (`async let`, task groups) share that one thread, so the trait
/// suits tests whose children do not block waiting for each other; unstructured tasks
/// (`Task {}`, `Task.detached`) and queues run where they always do. At most
/// ``OffThePoolTrait/concurrentTests`` such tests run at once, which bounds the threads and
/// child processes of a run; a test never waits for another off-the-pool test to finish, so
/// the limit cannot deadlock.
struct OffThePoolTrait: SuiteTrait, TestTrait, TestScoping {
    /// How many off-the-pool tests run at once: twice as many as the pool has threads, as
    /// these tests mostly wait.
    static let concurrentTests = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
    private static let slots = AsyncSlots(concurrentTests)

    typealias TestScopeProvider = OffThePoolTrait

    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        await Self.slots.acquire()
        defer { Self.slots.release() }
        let executor = DedicatedThreadExecutor()
        defer { executor.stop() }
        try await withTaskExecutorPreference(executor) { try await runOnPreferredExecutor(function) }
    }
}

extension Trait where Self == OffThePoolTrait {
    /// Runs each test on a thread of its own instead of the concurrency pool (``OffThePoolTrait``).
    static var offThePool: Self { OffThePoolTrait() }
}

/// Calls `function` after a hop to the task's preferred executor: a `@concurrent` function
/// always leaves the caller's executor, so `function` starts on the dedicated thread even if
/// Swift Testing's thunk would otherwise run it where it was called.
@concurrent
private func runOnPreferredExecutor(_ function: @Sendable () async throws -> Void) async throws {
    try await function()
}

/// A counting semaphore that suspends instead of blocking: `acquire()` waits for a free slot.
private final class AsyncSlots: Sendable {
    private struct State {
        var free: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Mutex<State>

    init(_ count: Int) { state = Mutex(State(free: count)) }

    func acquire() async {
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state -> Bool in
                if state.free > 0 {
                    state.free -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
