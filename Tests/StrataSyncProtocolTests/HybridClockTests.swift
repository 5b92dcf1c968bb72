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
}
