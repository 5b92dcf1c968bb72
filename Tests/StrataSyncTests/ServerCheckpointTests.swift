import StrataSyncProtocol
@testable import StrataSyncServer
import Testing

/// When the server sends a client a download that carries only a checkpoint, and how it
/// decides a reset for a client whose checkpoint lags only because nothing was for it.
@Suite("Server checkpoints", .timeLimit(.minutes(10)))
struct ServerCheckpointTests {
    typealias F = ServerFixtures

    /// The downloads among `messages`.
    private static func downloads(_ messages: [SyncMessage]) -> [(changesets: [ServerChangeset], checkpoint: Checkpoint)] {
        messages.compactMap { message in
            if case .download(let changesets, let checkpoint, _) = message { return (changesets, checkpoint) }
            return nil
        }
    }

    @Test func anIdleSessionGetsNoFramePerCommitYetCatchesUpOnDemand() async throws {
        let server = try await ServerUnderTest.start()
        let app = "idle"
        let token = try await server.anonymousToken(app: app)
        let idle = server.connect(app: app)
        _ = try await ServerWebSocketTests.join(idle, app: app, client: 50, token: token, classes: ["Note"])
        let writer = server.connect(app: app)
        _ = try await ServerWebSocketTests.join(writer, app: app, client: 51, token: token, classes: ["Todo"])

        // Uploads of seeded sizes, each acknowledged before the next: one commit each.
        var random = SplitMix64(seed: 31)
        var sequence: UInt64 = 0
        var commits = 0
        var writerMessages: [SyncMessage] = []
        while sequence < 300 {
            let count = UInt64.random(in: 1...4, using: &random)
            let batch = (sequence + 1...sequence + count).map { F.changeset($0, [F.createTodo("t\($0)", title: "v\($0)", at: $0, client: 51)]) }
            sequence += count
            commits += 1
            writer.send(.upload(batch))
            writerMessages += try await writer.receive { $0 == .uploadAck(clientSequence: sequence) }
        }
        #expect(Self.downloads(writerMessages).isEmpty, "a client's own changesets send it nothing")

        // Asking for the newest sequence brings the checkpoint first: one download, before the answer.
        idle.send(.latestSequenceRequest(7))
        let messages = try await idle.receive { if case .latestSequence = $0 { true } else { false } }
        let downloads = Self.downloads(messages)
        #expect(commits > 50)
        #expect(downloads.count == 1, "\(commits) commits with nothing for the session sent \(downloads.count) downloads")
        #expect(downloads.first?.changesets.isEmpty == true)
        #expect(downloads.first?.checkpoint == Checkpoint(sequence: sequence, checksum: Checkpoint.checksum(of: [])))
        #expect(messages.last == .latestSequence(request: 7, sequence: sequence))

        // A change for it arrives at once, and its checkpoint covers everything before it.
        writer.send(.upload([F.changeset(sequence + 1, [F.createNote(1, text: "for the idle one", at: 1_000, client: 51)])]))
        let change = try await idle.receive { message in
            if case .download(let changesets, _, _) = message { return !changesets.isEmpty }
            return false
        }
        let received = Self.downloads(change)
        #expect(received.count == 1)
        #expect(received.last?.changesets.map(\.serverSequence) == [sequence + 1])
        #expect(received.last?.checkpoint.sequence == sequence + 1)
        await idle.close()
        await writer.close()
        await server.server.shutdown()
    }

    @Test func aSessionIsWokenForCommitsToClassesItSubscribesToLater() async throws {
        let server = try await ServerUnderTest.start()
        let app = "widen"
        let token = try await server.anonymousToken(app: app)
        let reader = server.connect(app: app)
        _ = try await ServerWebSocketTests.join(reader, app: app, client: 70, token: token, classes: ["Note"])
        let writer = server.connect(app: app)
        _ = try await ServerWebSocketTests.join(writer, app: app, client: 71, token: token, classes: ["Todo"])
        writer.send(.upload([F.changeset(1, [F.createTodo("a", title: "before", at: 1, client: 71)])]))
        _ = try await writer.receive { $0 == .uploadAck(clientSequence: 1) }

        reader.send(.subscribe(version: 2, subscriptions: [SubscriptionSpec(name: "n", className: "Note"), SubscriptionSpec(name: "t", className: "Todo")]))
        let bootstrap = try await reader.receive { message in
            if case .snapshot(let snapshot) = message { return snapshot.isLast }
            return false
        }
        guard case .snapshot(let snapshot) = bootstrap.last else { return }
        #expect(snapshot.objects.map(\.object) == [F.todo("a")])

        // A Todo commit now reaches the reader without it asking.
        writer.send(.upload([F.changeset(2, [F.setTitle("a", "after", at: 2, client: 71)])]))
        let change = try await reader.receive { message in
            if case .download(let changesets, _, _) = message { return !changesets.isEmpty }
            return false
        }
        #expect(Self.downloads(change).last?.changesets.map(\.serverSequence) == [2])
        await reader.close()
        await writer.close()
        await server.server.shutdown()
    }

    @Test func compactionResetsOnlyAClientThatLostSomethingItWouldHaveBeenSent() async throws {
        let server = try await ServerUnderTest.start(apps: AppsConfiguration(historyLimit: 2))
        let app = "lazy-reset"
        let token = try await server.anonymousToken(app: app)
        let writer = server.connect(app: app)
        _ = try await ServerWebSocketTests.join(writer, app: app, client: 60, token: token)
        for sequence in UInt64(1)...6 {
            writer.send(.upload([F.changeset(sequence, [F.setTitle("a", "v\(sequence)", at: sequence, client: 60)])]))
            _ = try await writer.receive { $0 == .uploadAck(clientSequence: sequence) }
        }
        await writer.close()

        // Each holds its subscriptions as of sequence 1; the history through 4 is compacted.
        for (client, classes, isReset) in [(UInt64(61), ["Note"], false), (UInt64(60), ["Todo"], false), (UInt64(62), ["Todo"], true)] {
            let connection = server.connect(app: app)
            let (_, messages) = try await ServerWebSocketTests.join(connection, app: app, client: client, token: token, checkpoint: 1,
                                                                    classes: classes, bootstraps: false)
            let snapshots = messages.compactMap { message -> SyncMessage.Snapshot? in
                if case .snapshot(let snapshot) = message { return snapshot }
                return nil
            }
            if isReset {
                #expect(snapshots.first?.isReset == true, "client \(client) lost another client's Todo changes")
                #expect(snapshots.last?.checkpoint.sequence == 6)
            } else {
                #expect(snapshots.isEmpty, "client \(client) lost nothing it would have been sent")
                #expect(Self.downloads(messages).last?.checkpoint.sequence == 6)
            }
            await connection.close()
        }
        await server.server.shutdown()
    }
}
