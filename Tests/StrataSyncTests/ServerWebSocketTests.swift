import Foundation
import Logging
import ServiceLifecycle
import StrataSyncProtocol
@testable import StrataSyncServer
import Testing

/// The frame budget the session aims at (a frame may exceed it by one object or changeset).
enum SyncSessionHandlerFrameBudget {
    static let bytes = 1 << 20
}

/// The server over real WebSockets and HTTP, on the embedded store.
@Suite("Server over WebSockets", .timeLimit(.minutes(10)))
struct ServerWebSocketTests {
    typealias F = ServerFixtures

    /// Sends a hello and reads the welcome, then the downloads up to the welcome's sequence
    /// and, for a client that does not hold its subscription set yet (`bootstraps`), the
    /// snapshot; returns the welcome and everything after it.
    static func join(_ connection: ServerTestConnection, app: String, client: UInt64, token: String,
                     checkpoint: UInt64 = 0, version: UInt64 = 1, classes: [String] = ["Todo", "Note"],
                     bootstraps: Bool = true) async throws -> (welcome: SyncMessage.Welcome, rest: [SyncMessage]) {
        connection.send(ServerUnderTest.hello(app: app, client: client, token: token, checkpoint: checkpoint, version: version,
                                              completed: bootstraps ? 0 : version, classes: classes))
        guard case .welcome(let welcome) = try await connection.receiveMessage() else { throw ServerTestFailure("expected welcome") }
        let rest = try await connection.receive { message in
            switch message {
            case .snapshot(let snapshot): snapshot.isLast
            case .download(_, let reached, _): !bootstraps && reached.sequence >= welcome.latestSequence
            default: false
            }
        }
        return (welcome, rest)
    }

    static func downloads(_ messages: [SyncMessage]) -> [ServerChangeset] {
        messages.flatMap { message -> [ServerChangeset] in
            if case .download(let changesets, _, _) = message { return changesets }
            return []
        }
    }

    @Test func helloIsWelcomedThenCaughtUpAndBootstrapped() async throws {
        let server = try await ServerUnderTest.start()
        let app = "hello"
        let connection = server.connect(app: app)
        let (welcome, rest) = try await Self.join(connection, app: app, client: 1, token: try await server.anonymousToken(app: app))
        #expect(welcome == SyncMessage.Welcome(lastAcknowledged: 0, latestSequence: 0))
        // Nothing to catch up on: the snapshot alone brings the new client to sequence 0.
        #expect(rest.count == 1)
        guard case .snapshot(let snapshot) = rest.last else { Issue.record("a snapshot ends the bootstrap"); return }
        #expect(snapshot.objects.isEmpty && snapshot.subscriptionVersion == 1 && !snapshot.isReset && snapshot.isLast)
        connection.send(.ping(42))
        #expect(try await connection.receiveMessage() == .pong(42))
        await connection.close()
        await server.server.shutdown()
    }

    @Test func aLatestSequenceRequestIsAnsweredWithTheNewestSequenceNow() async throws {
        let server = try await ServerUnderTest.start()
        let app = "latest"
        let token = try await server.anonymousToken(app: app)
        let reader = server.connect(app: app)
        let (welcome, _) = try await Self.join(reader, app: app, client: 20, token: token)
        #expect(welcome.latestSequence == 0)
        let writer = server.connect(app: app)
        _ = try await Self.join(writer, app: app, client: 21, token: token)
        writer.send(.upload([F.changeset(1, [F.createTodo("a", title: "one", at: 5, client: 21)]),
                             F.changeset(2, [F.createTodo("b", title: "two", at: 6, client: 21)])]))
        _ = try await writer.receive { $0 == .uploadAck(clientSequence: 2) }
        reader.send(.latestSequenceRequest(5))
        let answer = try await reader.receive { if case .latestSequence = $0 { true } else { false } }
        #expect(answer.last == .latestSequence(request: 5, sequence: 2))
        await reader.close()
        await writer.close()
        await server.server.shutdown()
    }

    @Test func aBadTokenIsRefusedAndTheConnectionClosed() async throws {
        let server = try await ServerUnderTest.start()
        let connection = server.connect(app: "tokens")
        let otherAppsToken = try await server.anonymousToken(app: "other")
        connection.send(ServerUnderTest.hello(app: "tokens", client: 1, token: otherAppsToken))
        let messages = await connection.receiveUntilClosed()
        guard case .error(let code, _) = messages.last else { Issue.record("an error before the close: \(messages)"); return }
        #expect(code == .invalidToken)
        #expect(messages.count == 1)

        let second = server.connect(app: "tokens")
        second.send(ServerUnderTest.hello(app: "tokens", client: 1, token: "garbage"))
        #expect(await second.receiveUntilClosed().last.map { if case .error(.invalidToken, _) = $0 { true } else { false } } == true)
        await server.server.shutdown()
    }

    @Test func aMalformedOrOversizedFrameClosesOnlyItsConnection() async throws {
        let server = try await ServerUnderTest.start()
        let app = "frames"
        let token = try await server.anonymousToken(app: app)
        let bystander = server.connect(app: app)
        _ = try await Self.join(bystander, app: app, client: 1, token: token)

        let garbage = server.connect(app: app)
        garbage.sendRaw([0x53, 0x59, UInt8(SyncProtocol.version), 0x00, 0xff, 0xff, 0xff])
        let garbageMessages = await garbage.receiveUntilClosed()
        #expect(garbageMessages.count == 1)
        if case .error(let code, _) = garbageMessages.first { #expect(code == .malformedFrame) } else { Issue.record("error expected") }

        let notHello = server.connect(app: app)
        notHello.send(.ping(1))
        if case .error(let code, _) = await notHello.receiveUntilClosed().first { #expect(code == .malformedFrame) } else {
            Issue.record("a session must start with hello")
        }

        let future = server.connect(app: app)
        var futureHello = SyncFrameCodec.encode(ServerUnderTest.hello(app: app, client: 2, token: token))
        futureHello[2] = 0x09 // the protocol version's low byte
        future.sendRaw(futureHello)
        if case .error(let code, _) = await future.receiveUntilClosed().first { #expect(code == .unsupportedProtocolVersion) } else {
            Issue.record("another protocol version is refused")
        }

        let huge = server.connect(app: app)
        huge.sendRaw([UInt8](repeating: 0, count: SyncProtocol.maximumFrameSize + 1))
        if case .error(let code, _) = await huge.receiveUntilClosed().first { #expect(code == .frameTooLarge) } else {
            Issue.record("an oversized frame is refused")
        }

        bystander.send(.ping(7))
        #expect(try await bystander.receiveMessage() == .pong(7))
        await bystander.close()
        await server.server.shutdown()
    }

    @Test func uploadsAreValidatedAgainstTheSchema() async throws {
        let server = try await ServerUnderTest.start()
        let app = "validate"
        let token = try await server.anonymousToken(app: app)

        let unknownClass = server.connect(app: app)
        _ = try await Self.join(unknownClass, app: app, client: 1, token: token)
        unknownClass.send(.upload([F.changeset(1, [SyncOperation(timestamp: F.timestamp(1, client: 1),
                                                                 object: ObjectRef(className: "Ghost", primaryKey: .int(1)), change: .delete)])]))
        if case .error(let code, let message) = await unknownClass.receiveUntilClosed().last {
            #expect(code == .unknownClassOrProperty)
            #expect(message.contains("Ghost"))
        } else { Issue.record("an unknown class is refused") }

        let wrongKind = server.connect(app: app)
        _ = try await Self.join(wrongKind, app: app, client: 2, token: token)
        wrongKind.send(.upload([F.changeset(1, [SyncOperation(timestamp: F.timestamp(1, client: 2), object: F.todo("a"),
                                                              change: .set(property: "done", value: .string("yes")))])]))
        if case .error(let code, _) = await wrongKind.receiveUntilClosed().last { #expect(code == .invalidValue) } else {
            Issue.record("a value of the wrong kind is refused")
        }
        await server.server.shutdown()
    }

    @Test func anOutOfOrderUploadIsRefused() async throws {
        let server = try await ServerUnderTest.start()
        let app = "order"
        let connection = server.connect(app: app)
        _ = try await Self.join(connection, app: app, client: 3, token: try await server.anonymousToken(app: app))
        connection.send(.upload([F.changeset(2, [F.createTodo("a", title: "x", at: 1, client: 3)])]))
        if case .error(let code, _) = await connection.receiveUntilClosed().last { #expect(code == .outOfOrderUpload) } else {
            Issue.record("a gap is refused")
        }
        await server.server.shutdown()
    }

    @Test func aReplayedUploadIsAcknowledgedWithoutADuplicate() async throws {
        let server = try await ServerUnderTest.start()
        let app = "replay"
        let token = try await server.anonymousToken(app: app)
        let batch: [ClientChangeset] = [F.changeset(1, [F.createTodo("a", title: "x", at: 1, client: 4)])]

        let first = server.connect(app: app)
        _ = try await Self.join(first, app: app, client: 4, token: token)
        first.send(.upload(batch))
        _ = try await first.receive { $0 == .uploadAck(clientSequence: 1) }
        await first.close()

        // The client reconnects without having seen the ack and sends the batch again.
        let again = server.connect(app: app)
        let (welcome, _) = try await Self.join(again, app: app, client: 4, token: token, checkpoint: 1, bootstraps: false)
        #expect(welcome.lastAcknowledged == 1 && welcome.latestSequence == 1)
        again.send(.upload(batch))
        _ = try await again.receive { $0 == .uploadAck(clientSequence: 1) }

        let observer = server.connect(app: app)
        let (observed, bootstrap) = try await Self.join(observer, app: app, client: 5, token: token)
        #expect(observed.latestSequence == 1)
        guard case .snapshot(let snapshot) = bootstrap.last else { Issue.record("snapshot"); return }
        #expect(snapshot.objects.count == 1 && snapshot.checkpoint.sequence == 1)
        await again.close()
        await observer.close()
        await server.server.shutdown()
    }

    @Test func aBootstrapTheClientDidNotCompleteIsSentAgainOnTheNextConnection() async throws {
        let server = try await ServerUnderTest.start()
        let app = "rebootstrap"
        let token = try await server.anonymousToken(app: app)
        let writer = server.connect(app: app)
        _ = try await Self.join(writer, app: app, client: 40, token: token)
        writer.send(.upload([F.changeset(1, [F.createTodo("a", title: "x", at: 1, client: 40)])]))
        _ = try await writer.receive { $0 == .uploadAck(clientSequence: 1) }

        // The reader is sent the snapshot, but its file never applies it (the connection or
        // the file failed first): its next hello still says version 1 is not complete.
        let reader = server.connect(app: app)
        let (_, first) = try await Self.join(reader, app: app, client: 41, token: token)
        guard case .snapshot(let sent) = first.last else { Issue.record("a snapshot ends the bootstrap"); return }
        #expect(sent.objects.count == 1)
        await reader.close()
        let again = server.connect(app: app)
        let (_, second) = try await Self.join(again, app: app, client: 41, token: token, checkpoint: sent.checkpoint.sequence)
        guard case .snapshot(let resent) = second.last else { Issue.record("the bootstrap is sent again"); return }
        #expect(resent.objects.map(\.object) == [F.todo("a")] && resent.subscriptionVersion == 1 && !resent.isReset)
        await again.close()
        await writer.close()
        await server.server.shutdown()
    }

    @Test func anotherClientsUploadIsDownloadedAndSubscriptionsBootstrap() async throws {
        let server = try await ServerUnderTest.start()
        let app = "fanout"
        let token = try await server.anonymousToken(app: app)
        let reader = server.connect(app: app)
        _ = try await Self.join(reader, app: app, client: 10, token: token, classes: ["Todo"])
        let writer = server.connect(app: app)
        _ = try await Self.join(writer, app: app, client: 11, token: token)
        writer.send(.upload([F.changeset(1, [F.createTodo("a", title: "from 11", at: 5, client: 11), F.createNote(1, text: "n", at: 5, client: 11)])]))
        _ = try await writer.receive { $0 == .uploadAck(clientSequence: 1) }

        let untilFirstChange = try await reader.receive { message in
            if case .download(let changesets, _, _) = message { return !changesets.isEmpty }
            return false
        }
        guard case .download(let changesets, let checkpoint, let remaining) = untilFirstChange.last else { return }
        #expect(changesets.count == 1 && changesets[0].clientID == 11 && changesets[0].serverSequence == 1)
        #expect(changesets[0].operations.map(\.object.className) == ["Todo"], "only the subscribed class travels")
        #expect(checkpoint == Checkpoint(sequence: 1, checksum: Checkpoint.checksum(of: changesets)))
        #expect(remaining == 0)

        reader.send(.subscribe(version: 2, subscriptions: [SubscriptionSpec(name: "t", className: "Todo"), SubscriptionSpec(name: "n", className: "Note")]))
        let bootstrap = try await reader.receive { message in
            if case .snapshot(let snapshot) = message { return snapshot.isLast }
            return false
        }
        guard case .snapshot(let snapshot) = bootstrap.last else { return }
        #expect(snapshot.subscriptionVersion == 2 && !snapshot.isReset)
        #expect(snapshot.objects.map(\.object) == [ObjectRef(className: "Note", primaryKey: .int(1))])
        #expect(snapshot.objects.first?.value(of: "text") == .string("n"))
        await reader.close()
        await writer.close()
        await server.server.shutdown()
    }

    @Test func aClientBehindTheCompactedHistoryGetsAReset() async throws {
        let server = try await ServerUnderTest.start(apps: AppsConfiguration(historyLimit: 2))
        let app = "reset"
        let token = try await server.anonymousToken(app: app)
        let writer = server.connect(app: app)
        _ = try await Self.join(writer, app: app, client: 20, token: token)
        for sequence in UInt64(1)...6 {
            writer.send(.upload([F.changeset(sequence, [F.setTitle("a", "v\(sequence)", at: sequence, client: 20)])]))
            _ = try await writer.receive { $0 == .uploadAck(clientSequence: sequence) }
        }
        let stale = server.connect(app: app)
        let (_, messages) = try await Self.join(stale, app: app, client: 21, token: token, checkpoint: 1)
        guard case .snapshot(let snapshot) = messages.last else { Issue.record("a reset snapshot"); return }
        #expect(snapshot.isReset)
        #expect(snapshot.checkpoint.sequence == 6)
        #expect(snapshot.objects.first?.value(of: "title") == .string("v6"))
        await writer.close()
        await stale.close()
        await server.server.shutdown()
    }

    @Test func largeSnapshotsAndResetsAreSplitIntoBoundedFrames() async throws {
        let server = try await ServerUnderTest.start(apps: AppsConfiguration(historyLimit: 1))
        let app = "large"
        let token = try await server.anonymousToken(app: app)
        let writer = server.connect(app: app)
        _ = try await Self.join(writer, app: app, client: 40, token: token)
        let longTitle = String(repeating: "x", count: 8_000)
        let changesets = (UInt64(1)...300).map { F.changeset($0, [F.createTodo("t\($0)", title: longTitle, at: $0, client: 40)]) }
        writer.send(.upload(changesets))
        _ = try await writer.receive { $0 == .uploadAck(clientSequence: 300) }

        // A new client at the newest sequence is bootstrapped; one behind the compacted history
        // (the limit keeps 1 changeset) is reset.
        for (client, checkpoint, isReset) in [(UInt64(41), UInt64(300), false), (UInt64(42), UInt64(2), true)] {
            let reader = server.connect(app: app)
            let (_, messages) = try await Self.join(reader, app: app, client: client, token: token, checkpoint: checkpoint)
            let snapshots = messages.compactMap { message -> SyncMessage.Snapshot? in
                if case .snapshot(let snapshot) = message { return snapshot }
                return nil
            }
            #expect(snapshots.count > 1, "2.4 MB of states take several frames")
            #expect(snapshots.map(\.isLast) == Array(repeating: false, count: snapshots.count - 1) + [true])
            #expect(snapshots.map(\.isReset) == [isReset] + Array(repeating: false, count: snapshots.count - 1))
            #expect(Set(snapshots.flatMap(\.objects).map(\.object)) == Set((1...300).map { F.todo("t\($0)") }))
            #expect(snapshots.allSatisfy { $0.checkpoint.sequence == 300 })
            for snapshot in snapshots {
                let size = SyncFrameCodec.encode(.snapshot(snapshot)).count
                #expect(size < 2 * SyncSessionHandlerFrameBudget.bytes)
            }
            await reader.close()
        }
        await writer.close()
        await server.server.shutdown()
    }

    @Test func loginFollowsTheAppsConfiguration() async throws {
        let apps = AppsConfiguration(apps: ["todo": .init(jwtKeys: ["k1"], anonymous: false)], restrictApps: true)
        let server = try await ServerUnderTest.start(apps: apps)
        #expect(try await server.post("/apps/elsewhere/login", ["provider": "anonymous"]).status == 404)
        #expect(try await server.post("/apps/todo/login", ["provider": "anonymous"]).status == 401)
        let good = try await server.post("/apps/todo/login", ["provider": "jwt", "token": ServerAuthTests.jwt(#"{"sub":"ann"}"#, key: "k1")])
        #expect(good.status == 200 && good.body["userID"] == "ann")
        let bad = try await server.post("/apps/todo/login", ["provider": "jwt", "token": ServerAuthTests.jwt(#"{"sub":"ann"}"#, key: "k2")])
        #expect(bad.status == 401 && bad.body["error"] != nil)
        let refreshed = try await server.post("/apps/todo/refresh", ["refreshToken": try #require(good.body["refreshToken"])])
        #expect(refreshed.status == 200 && refreshed.body["accessToken"] != nil)

        let connection = server.connect(app: "elsewhere")
        connection.send(ServerUnderTest.hello(app: "elsewhere", client: 1, token: "x"))
        if case .error(let code, _) = await connection.receiveUntilClosed().last { #expect(code == .unknownApp) } else {
            Issue.record("an unserved app is refused")
        }
        await server.server.shutdown()
    }

    @Test func tokensAndDataSurviveARestart() async throws {
        let folder = try ServerTestEnvironment.temporaryDirectory()
        let first = try await ServerUnderTest.start(storage: .embedded(directory: folder))
        let token = try await first.anonymousToken(app: "restart")
        let writer = first.connect(app: "restart")
        _ = try await Self.join(writer, app: "restart", client: 30, token: token)
        writer.send(.upload([F.changeset(1, [F.createTodo("a", title: "kept", at: 1, client: 30)])]))
        _ = try await writer.receive { $0 == .uploadAck(clientSequence: 1) }
        await writer.close()
        await first.server.shutdown()

        let second = try await ServerUnderTest.start(storage: .embedded(directory: folder))
        let connection = second.connect(app: "restart")
        let (welcome, messages) = try await Self.join(connection, app: "restart", client: 30, token: token, bootstraps: false)
        #expect(welcome.lastAcknowledged == 1 && welcome.latestSequence == 1)
        #expect(Self.downloads(messages).isEmpty, "a client's own changesets are not sent back")
        await connection.close()
        await second.server.shutdown()
    }

    @Test func seededGarbageFramesAreRefusedWithoutHarmingTheServer() async throws {
        let server = try await ServerUnderTest.start()
        let app = "fuzz"
        let token = try await server.anonymousToken(app: app)
        var generator = ServerSeededGenerator(seed: 2026)
        let valid = SyncFrameCodec.encode(ServerUnderTest.hello(app: app, client: 99, token: token))
        for round in 0..<24 {
            var frame = valid
            // Flip, cut or extend a valid hello, or send noise.
            switch round % 4 {
            case 0: for _ in 0..<3 { frame[Int.random(in: 0..<frame.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            case 1: frame = Array(frame.prefix(Int.random(in: 0..<frame.count, using: &generator)))
            case 2: frame += (0..<Int.random(in: 1...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            default: frame = (0..<Int.random(in: 0...256, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            let connection = server.connect(app: app)
            connection.sendRaw(frame)
            connection.send(.ping(UInt64(round)))
            // Whatever the frame became, the session either refuses it with an error and closes,
            // or (a flip that left a valid hello) goes on and answers the ping.
            let messages = await connection.receiveUntilClosedOrPong(UInt64(round))
            let refused = messages.contains { if case .error = $0 { true } else { false } }
            let answered = messages.contains(.pong(UInt64(round)))
            #expect(refused || answered, "round \(round): \(messages)")
            await connection.close()
        }
        let healthy = server.connect(app: app)
        _ = try await Self.join(healthy, app: app, client: 100, token: token)
        await healthy.close()
        await server.server.shutdown()
    }

    @Test func shutdownEndsOpenSessions() async throws {
        let server = try await ServerUnderTest.start()
        let app = "shutdown"
        let connection = server.connect(app: app)
        _ = try await Self.join(connection, app: app, client: 1, token: try await server.anonymousToken(app: app))
        await server.server.shutdown()
        _ = await connection.receiveUntilClosed()
        await connection.close()
    }

    @Test func asAServiceItStopsWithItsGroup() async throws {
        var logger = Logger(label: "server-tests")
        logger.logLevel = .warning
        let server = SyncServer(configuration: .init(port: 0, storage: .embedded(directory: try ServerTestEnvironment.temporaryDirectory())),
                                logger: logger)
        let group = ServiceGroup(configuration: .init(services: [server], logger: logger))
        let running = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(server.port == nil, "a stopped server reports no port")
    }

    @Test func incompatibleSchemaIsRefused() async throws {
        let server = try await ServerUnderTest.start()
        let app = "schemas"
        let token = try await server.anonymousToken(app: app)
        let first = server.connect(app: app)
        _ = try await Self.join(first, app: app, client: 1, token: token)
        let other = SyncSchema(classes: [SyncClassSchema(name: "Todo", primaryKey: "title", properties: [SyncPropertySchema(name: "title", type: "string")])])
        let second = server.connect(app: app)
        second.send(ServerUnderTest.hello(app: app, client: 2, token: token, schema: other))
        if case .error(let code, let message) = await second.receiveUntilClosed().last {
            #expect(code == .schemaMismatch)
            #expect(message.contains("Todo"))
        } else { Issue.record("a breaking schema is refused") }
        await first.close()
        await server.server.shutdown()
    }
}

/// Two servers sharing one PostgreSQL database: a commit through one reaches a client of the
/// other through LISTEN/NOTIFY. Enabled like the PostgreSQL storage suite.
@Suite("Server over PostgreSQL", .enabled(if: ServerTestEnvironment.runsPostgres), .timeLimit(.minutes(10)))
struct ServerPostgresInstancesTests {
    typealias F = ServerFixtures

    @Test func anUploadThroughOneInstanceIsDownloadedFromTheOther() async throws {
        let url = try ServerTestEnvironment.requirePostgresURL()
        let one = try await ServerUnderTest.start(storage: .postgres(url: url))
        let two = try await ServerUnderTest.start(storage: .postgres(url: url))
        let app = ServerTestEnvironment.uniqueAppID("instances")
        // Tokens from one instance are valid on the other: the secret lives in the database.
        let token = try await one.anonymousToken(app: app)
        let reader = two.connect(app: app)
        _ = try await ServerWebSocketTests.join(reader, app: app, client: 1, token: token)
        let writer = one.connect(app: app)
        _ = try await ServerWebSocketTests.join(writer, app: app, client: 2, token: token)
        writer.send(.upload([F.changeset(1, [F.createTodo("a", title: "via one", at: 1, client: 2)])]))
        _ = try await writer.receive { $0 == .uploadAck(clientSequence: 1) }
        let messages = try await reader.receive { message in
            if case .download(let changesets, _, _) = message { return !changesets.isEmpty }
            return false
        }
        guard case .download(let changesets, let checkpoint, _) = messages.last else { return }
        #expect(changesets.map(\.clientID) == [2])
        #expect(checkpoint.sequence == 1)
        await reader.close()
        await writer.close()
        await one.server.shutdown()
        await two.server.shutdown()
    }
}
