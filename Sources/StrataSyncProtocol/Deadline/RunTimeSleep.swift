/// Returns once `limit` has passed counting only time in which the process ran its tasks (as
/// ``DeadlineStageClock`` counts it: a starved stretch does not count, and the wait ends at
/// ``DeadlineStageClock/maximumStretch`` times `limit` however starved); throws
/// `CancellationError` as soon as the calling task is cancelled.
///
/// The timer of a fixed deadline that races the work it bounds: the work and this sleep are
/// kept from running alike, so the work is never given up on only because the process could
/// not run it.
package func sleep(forRunTime limit: Duration) async throws {
    var clock = DeadlineStageClock(limit: limit, operation: "", now: .now)
    while true {
        let wake = clock.nextWake(now: .now)
        try await Task.sleep(until: wake, clock: .continuous)
        if clock.woke(planned: wake, now: .now) != nil { return }
    }
}
