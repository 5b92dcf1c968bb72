import Foundation
import Testing

/// The `.offThePool` trait the blocking and long synchronous suites use: their code runs on a
/// thread of its own, not on the concurrency pool, and stays there across suspensions.
@Suite("Off-the-pool test trait")
struct OffThePoolTraitTests {
    @Test(.offThePool) func aSynchronousTestRunsOnADedicatedThread() {
        #expect(DedicatedThreadExecutor.isCurrent)
    }

    @Test(.offThePool, arguments: [1, 2])
    func eachCaseOfAParameterizedTestRunsOnADedicatedThread(_ value: Int) {
        #expect(DedicatedThreadExecutor.isCurrent)
    }

    @Test(.offThePool) func anAsyncTestStaysOnItsThreadAcrossASuspension() async {
        let before = pthread_self()
        // Resumed from another thread: the continuation is enqueued on the task's executor.
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume() }
        }
        #expect(pthread_equal(pthread_self(), before) != 0)
        #expect(DedicatedThreadExecutor.isCurrent)
    }

    @Test func withoutTheTraitATestRunsOnThePool() {
        #expect(!DedicatedThreadExecutor.isCurrent)
    }
}
