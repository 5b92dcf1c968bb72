import Glibc
import Testing

/// The fault-injecting proxy forwards faithfully, injects the faults its schedule and the test
/// ask for, and counts them.
@Suite("FaultProxy")
struct FaultProxyTests {
    /// Seeded bytes, different for each seed.
    private func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    /// Sends `message` and expects it echoed back whole.
    private func roundTrip(_ socket: LoopbackSocket, _ message: [UInt8]) async throws {
        try await socket.send(message)
        #expect(try await socket.receive(exactly: message.count) == message)
    }

    /// Whether the socket's peer has closed: the next receive reports `.closed`.
    private func isClosed(_ socket: LoopbackSocket) async -> Bool {
        do {
            _ = try await socket.receiveUntilClosed()
            return true
        } catch {
            return false
        }
    }

    @Test func forwardsBytesUnchangedBothWaysWithoutFaults() async throws {
        let echo = try await EchoServer.start()
        let proxy = try await FaultProxy.start(targetPort: echo.port, schedule: .none())
        let socket = try await LoopbackSocket.connect(port: proxy.port)
        let message = bytes(65536, seed: 1)
        try await socket.send(message)
        #expect(try await socket.receive(exactly: message.count) == message)
        let counters = proxy.counters
        #expect(counters.accepted == 1)
        #expect(counters.bytesToTarget == message.count)
        #expect(counters.bytesToClient == message.count)
        #expect(counters.delayedChunks == 0 && counters.dropped == 0 && counters.cut == 0)
        await proxy.stop()
        await echo.stop()
    }

    @Test func delayedChunksArriveWholeAndInOrder() async throws {
        let echo = try await EchoServer.start()
        let schedule = FaultSchedule(seed: 2, delayChance: 0.5, maximumDelayMilliseconds: 3)
        let proxy = try await FaultProxy.start(targetPort: echo.port, schedule: schedule)
        let socket = try await LoopbackSocket.connect(port: proxy.port)
        var sent: [UInt8] = []
        for round in 0..<60 {
            let message = bytes(97, seed: 100 + UInt64(round))
            sent += message
            try await socket.send(message)
        }
        #expect(try await socket.receive(exactly: sent.count) == sent)
        for round in 0..<40 {
            try await roundTrip(socket, bytes(31, seed: 200 + UInt64(round)))
        }
        #expect(proxy.counters.delayedChunks > 0)
        await proxy.stop()
        await echo.stop()
    }

    @Test func refusingPartitionClosesConnectionsAndRefusesNewOnesUntilHealed() async throws {
        let echo = try await EchoServer.start()
        let proxy = try await FaultProxy.start(targetPort: echo.port, schedule: .none())
        let before = try await LoopbackSocket.connect(port: proxy.port)
        try await roundTrip(before, Array("before".utf8))

        await proxy.partition(.refuse)
        #expect(await isClosed(before))
        let during = try await LoopbackSocket.connect(port: proxy.port)
        #expect(await isClosed(during))
        #expect(proxy.counters.refused == 1)
        #expect(proxy.counters.closedByTest == 1)

        await proxy.heal()
        let after = try await LoopbackSocket.connect(port: proxy.port)
        try await roundTrip(after, Array("after".utf8))
        #expect(proxy.counters.partitions == 1)
        await proxy.stop()
        await echo.stop()
    }

    @Test func blackHoleHoldsBytesOfOldAndNewConnectionsUntilHealed() async throws {
        let echo = try await EchoServer.start()
        let proxy = try await FaultProxy.start(targetPort: echo.port, schedule: .none())
        let old = try await LoopbackSocket.connect(port: proxy.port)
        try await roundTrip(old, Array("hello".utf8))
        let receivedBeforePartition = echo.receivedBytes

        await proxy.partition(.blackHole)
        let held = Array("held while partitioned".utf8)
        try await old.send(held)
        let new = try await LoopbackSocket.connect(port: proxy.port)
        try await new.send(held)
        // Nothing of what was sent during the partition may have reached the target.
        #expect(echo.receivedBytes == receivedBeforePartition)

        await proxy.heal()
        #expect(try await old.receive(exactly: held.count) == held)
        #expect(try await new.receive(exactly: held.count) == held)
        // The old connection was stalled; the new one was too unless the proxy accepted it
        // only after the heal.
        #expect(proxy.counters.stalled >= 1)
        await proxy.stop()
        await echo.stop()
    }

    @Test func cutAllClosesOpenConnectionsAndKeepsAccepting() async throws {
        let echo = try await EchoServer.start()
        let proxy = try await FaultProxy.start(targetPort: echo.port, schedule: .none())
        let first = try await LoopbackSocket.connect(port: proxy.port)
        let second = try await LoopbackSocket.connect(port: proxy.port)
        try await roundTrip(first, Array("one".utf8))
        try await roundTrip(second, Array("two".utf8))

        await proxy.cutAll()
        #expect(await isClosed(first))
        #expect(await isClosed(second))
        #expect(proxy.counters.closedByTest == 2)

        let third = try await LoopbackSocket.connect(port: proxy.port)
        try await roundTrip(third, Array("three".utf8))
        await proxy.stop()
        await echo.stop()
    }

    @Test func scheduledDropClosesTheConnectionAfterAFewChunks() async throws {
        let echo = try await EchoServer.start()
        let schedule = FaultSchedule(seed: 3, dropChance: 1, dropAfterChunks: 1...3)
        let proxy = try await FaultProxy.start(targetPort: echo.port, schedule: schedule)
        let socket = try await LoopbackSocket.connect(port: proxy.port)
        // Each round trip is two chunks through the proxy, so the third cannot complete.
        var completedRoundTrips = 0
        do {
            for round in 0..<3 {
                let message = bytes(16, seed: 300 + UInt64(round))
                try await socket.send(message)
                _ = try await socket.receive(exactly: message.count)
                completedRoundTrips += 1
            }
        } catch LoopbackSocket.Failure.closed {
        }
        #expect(completedRoundTrips < 2)
        #expect(proxy.counters.dropped == 1)
        await proxy.stop()
        await echo.stop()
    }

    @Test func scheduledCutForwardsOnlyAPrefixThenCloses() async throws {
        let echo = try await EchoServer.start()
        let schedule = FaultSchedule(seed: 4, cutChance: 1)
        let proxy = try await FaultProxy.start(targetPort: echo.port, schedule: schedule)
        let socket = try await LoopbackSocket.connect(port: proxy.port)
        let message = bytes(1000, seed: 5)
        try await socket.send(message)
        let received = try await socket.receiveUntilClosed()
        #expect(received.count < message.count)
        #expect(Array(message.prefix(received.count)) == received)
        #expect(proxy.counters.cut >= 1)
        await proxy.stop()
        await echo.stop()
    }

    @Test func stopClosesConnectionsAndTheListener() async throws {
        let echo = try await EchoServer.start()
        let proxy = try await FaultProxy.start(targetPort: echo.port, schedule: .none())
        let socket = try await LoopbackSocket.connect(port: proxy.port)
        try await roundTrip(socket, Array("ping".utf8))
        await proxy.stop()
        #expect(await isClosed(socket))
        await #expect(throws: LoopbackSocket.Failure.connectFailed(errno: ECONNREFUSED)) {
            _ = try await LoopbackSocket.connect(port: proxy.port)
        }
        await echo.stop()
    }

    @Test func sameSeedGivesTheSameFaultsAndAnotherSeedOthers() {
        func faults(seed: UInt64, connection: Int) -> ([ConnectionFaultPlan.ChunkFault], Int?) {
            var plan = FaultSchedule.hostile(seed: seed).plan(forConnection: connection)
            return ((0..<200).map { _ in plan.nextChunkFault(length: 500) }, plan.dropAfterChunks)
        }
        let first = faults(seed: 7, connection: 0)
        let again = faults(seed: 7, connection: 0)
        #expect(first.0 == again.0 && first.1 == again.1)
        #expect(first.0 != faults(seed: 8, connection: 0).0)
        #expect(first.0 != faults(seed: 7, connection: 1).0)
        #expect(first.0.contains { if case .delay(let milliseconds) = $0 { milliseconds > 0 } else { false } })
    }

    @Test func refusesATargetOffThisMachine() async {
        await #expect(throws: FaultProxy.StartError.targetNotLoopback(host: "192.0.2.1")) {
            _ = try await FaultProxy.start(targetHost: "192.0.2.1", targetPort: 80, schedule: .none())
        }
    }
}
