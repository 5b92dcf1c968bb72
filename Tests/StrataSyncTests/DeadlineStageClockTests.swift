// The run-time deadline shared by the server's store calls and the client's fixed deadlines
// (login answer, handshake, the auth route's request): its clock on instants the tests choose,
// and the sleep built on it.

import Foundation
import StrataSyncProtocol
@testable import StrataSync
import Testing

/// The deadline's clock on instants the test chooses: only time in which the timer could run
/// counts against a stage.
@Suite struct DeadlineStageClockTests {
    private let start = ContinuousClock.now

    /// Sleeps the clock's timer from `now` and wakes it `late` after it planned; returns the
    /// wake's instant and whether the stage ran out.
    private func sleep(_ clock: inout DeadlineStageClock, from now: ContinuousClock.Instant,
                       late: Duration = .zero) -> (ContinuousClock.Instant, Bool) {
        let planned = clock.nextWake(now: now)
        let woke = planned + late
        return (woke, clock.woke(planned: planned, now: woke) != nil)
    }

    @Test func aStageWhoseTimerWakesOnTimeRunsOutAtItsLimit() {
        var clock = DeadlineStageClock(limit: .seconds(3), operation: "a transaction", now: start)
        var now = start
        var wakes = 0
        while true {
            let (woke, expired) = sleep(&clock, from: now)
            now = woke
            wakes += 1
            if expired { break }
        }
        #expect(now == start + .seconds(3))
        #expect(wakes == 3)  // one slice a second
        #expect(clock.woke(planned: now, now: now) == "a transaction did not finish within 3.0 seconds")
    }

    @Test func aStarvedSleepDoesNotCountAgainstTheStage() {
        var clock = DeadlineStageClock(limit: .seconds(30), operation: "a transaction", now: start)
        // The first sleep (one second) is starved for a minute more: none of it counts.
        let (woke, expired) = sleep(&clock, from: start, late: .seconds(60))
        #expect(!expired && woke == start + .seconds(61))
        #expect(clock.due == start + .seconds(91))
    }

    @Test func aStageStarvedPastItsEndIsNotGivenUpOnWhenThePoolFrees() {
        var clock = DeadlineStageClock(limit: .seconds(2), operation: "a transaction", now: start)
        let (first, _) = sleep(&clock, from: start)
        // The sleep to the stage's end is starved for 15 seconds.
        let (woke, expired) = sleep(&clock, from: first, late: .seconds(15))
        #expect(!expired)
        // The starved second is given back: the stage runs out one second after the pool freed.
        let (end, expiredLater) = sleep(&clock, from: woke)
        #expect(expiredLater && end == woke + .seconds(1))
    }

    @Test func schedulingNoiseIsNotStarvation() {
        var clock = DeadlineStageClock(limit: .milliseconds(500), operation: "a query", now: start)
        let (woke, expired) = sleep(&clock, from: start, late: .milliseconds(20))
        #expect(expired && woke == start + .milliseconds(520))
    }

    @Test func aStageStretchesToTenTimesItsLimitAtMost() {
        var clock = DeadlineStageClock(limit: .seconds(2), operation: "a query", now: start)
        var now = start
        var expired = false
        for _ in 0..<100 where !expired { (now, expired) = sleep(&clock, from: now, late: .seconds(5)) }
        #expect(expired)
        #expect(clock.due == start + .seconds(20))
    }

    @Test func beginningAStageGivesItItsOwnLimitFromThen() {
        var clock = DeadlineStageClock(limit: .seconds(1), operation: "leasing a connection", now: start)
        clock.begin(.seconds(30), "a transaction", now: start + .milliseconds(900))
        #expect(clock.due == start + .milliseconds(30_900))
        #expect(clock.operation == "a transaction" && clock.limit == .seconds(30))
    }
}

/// The sleep a fixed deadline's timer waits on.
@Suite struct RunTimeSleepTests {
    @Test func aRunTimeSleepReturnsOnceItsLimitHasPassed() async throws {
        let start = ContinuousClock.now
        try await sleep(forRunTime: .milliseconds(50))
        #expect(ContinuousClock.now - start >= .milliseconds(50))
    }

    @Test func aCancelledRunTimeSleepThrowsCancellation() async {
        let sleeper = Task { try await sleep(forRunTime: .seconds(600)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func theSessionsHandshakeTimeoutCountsRunTime() {
        let settings = SessionEngine.Settings(url: URL(fileURLWithPath: "/"), appID: "a", accessToken: { "" },
                                              transport: TestTransport())
        #expect(settings.timeoutTimer is RunTimeDeadlineTimer)
        #expect(settings.handshakeTimeout == .seconds(20))
    }
}
