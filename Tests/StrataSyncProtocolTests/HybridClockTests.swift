import Testing
import StrataSyncProtocol

@Suite struct HybridClockTests {
    @Test func timestampsIncreaseEvenWhenTheWallClockGoesBack() {
        var clock = HybridClock(clientID: 7)
        let first = clock.tick(wallMilliseconds: 1000)
        let second = clock.tick(wallMilliseconds: 900)
        #expect(second > first)
        clock.observe(HybridTimestamp(wallMilliseconds: 5000, counter: 3, clientID: 9))
        let third = clock.tick(wallMilliseconds: 1000)
        #expect(third > HybridTimestamp(wallMilliseconds: 5000, counter: 3, clientID: 9))
        #expect(third.clientID == 7)
    }

    @Test func theCounterCarriesIntoTheWallTimeWhenItRunsOut() {
        var clock = HybridClock(clientID: 1)
        clock.observe(HybridTimestamp(wallMilliseconds: 10, counter: .max, clientID: 2))
        #expect(clock.tick(wallMilliseconds: 5) == HybridTimestamp(wallMilliseconds: 11, counter: 0, clientID: 1))
    }

    @Test func aClockThatObservedTheLastRepresentableTimeSaturatesInsteadOfTrapping() {
        var clock = HybridClock(clientID: 1)
        clock.observe(HybridTimestamp(wallMilliseconds: .max, counter: .max, clientID: 2))
        let first = clock.tick(wallMilliseconds: 5)
        #expect(first == HybridTimestamp(wallMilliseconds: .max, counter: .max, clientID: 1))
        #expect(clock.tick(wallMilliseconds: 5) == first)
    }
}
