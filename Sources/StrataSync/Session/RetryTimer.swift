/// Waits out a reconnect delay. The real one sleeps on the continuous clock; tests pass one
/// they fire by hand, so no test waits on time.
package protocol RetryTimer: Sendable {
    /// Returns after `delay`, or throws `CancellationError` when the calling task is cancelled.
    func wait(_ delay: Duration) async throws
}

/// The real timer: `Task.sleep` on the continuous clock.
package struct ContinuousRetryTimer: RetryTimer {
    package init() {}
    package func wait(_ delay: Duration) async throws {
        try await Task.sleep(for: delay)
    }
}
