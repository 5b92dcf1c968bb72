import StrataSyncProtocol

/// Waits out a reconnect delay or a deadline. The real ones sleep on the continuous clock;
/// tests pass one they fire by hand, so no test waits on time.
package protocol RetryTimer: Sendable {
    /// Returns after `delay`, or throws `CancellationError` when the calling task is cancelled.
    func wait(_ delay: Duration) async throws
}

/// The reconnect delay's timer: `Task.sleep` on the continuous clock.
package struct ContinuousRetryTimer: RetryTimer {
    package init() {}
    package func wait(_ delay: Duration) async throws {
        try await Task.sleep(for: delay)
    }
}

/// The timer of a deadline: waits until `delay` has passed counting only time in which the
/// process ran (``sleep(forRunTime:)``), so work it bounds that a busy concurrency pool kept
/// from running is not given up on for that.
package struct RunTimeDeadlineTimer: RetryTimer {
    package init() {}
    package func wait(_ delay: Duration) async throws {
        try await sleep(forRunTime: delay)
    }
}
