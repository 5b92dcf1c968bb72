// Helpers of the server suites: a schema and operations to upload, the two stores, a running
// server, HTTP login and a raw WebSocket connection that speaks frames. Waiting is always for
// the next message or the end of a connection, never for time; the suites' time limits turn a
// hang into a failure.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HummingbirdWSClient
import Logging
import NIOCore
import StrataSyncProtocol
import StrataSyncServer
import Synchronization
import Testing

enum ServerTestEnvironment {
    /// The PostgreSQL database of the PostgreSQL suites (scripts/with-postgres.sh sets it).
    static let postgresURL = ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES_URL"]
    /// Set in CI, where a missing database must fail the PostgreSQL suites rather than skip them.
    static let isCI = ProcessInfo.processInfo.environment["STRATA_CI"] != nil
    /// Whether the PostgreSQL suites run: with a database, or in CI (where they then fail).
    static let runsPostgres = postgresURL != nil || isCI

    /// The database URL; fails the test when it is missing (only reached in CI without one).
    static func requirePostgresURL() throws -> String {
        try #require(postgresURL, "STRATA_TEST_POSTGRES_URL must be set when STRATA_CI is set (run under scripts/with-postgres.sh)")
    }

    /// A fresh app id, so tests sharing a database do not meet.
    static func uniqueAppID(_ name: String) -> String { "\(name)-\(UUID().uuidString.lowercased())" }

    /// A fresh empty folder.
    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("strata-server-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// The schema the tests sync: `Todo` (string key, title, done, a set of tags, a list of steps)
/// and `Note` (int key, text).
enum ServerFixtures {
    static let schema = SyncSchema(classes: [
        SyncClassSchema(name: "Todo", primaryKey: "_id", properties: [
            SyncPropertySchema(name: "_id", type: "string"),
            SyncPropertySchema(name: "title", type: "string"),
            SyncPropertySchema(name: "done", type: "bool"),
            SyncPropertySchema(name: "tags", type: "string", collection: .set),
            SyncPropertySchema(name: "steps", type: "string", collection: .list),
        ]),
        SyncClassSchema(name: "Note", primaryKey: "_id", properties: [
            SyncPropertySchema(name: "_id", type: "int"),
            SyncPropertySchema(name: "text", type: "string", isOptional: true),
        ]),
    ])

    static func timestamp(_ milliseconds: UInt64, client: UInt64) -> HybridTimestamp {
        HybridTimestamp(wallMilliseconds: milliseconds, counter: 0, clientID: client)
    }

    static func todo(_ id: String) -> ObjectRef { ObjectRef(className: "Todo", primaryKey: .string(id)) }

    static func createTodo(_ id: String, title: String, at milliseconds: UInt64, client: UInt64) -> SyncOperation {
        SyncOperation(timestamp: timestamp(milliseconds, client: client), object: todo(id),
                      change: .create(["_id": .string(id), "title": .string(title), "done": .bool(false)]))
    }

    static func setTitle(_ id: String, _ title: String, at milliseconds: UInt64, client: UInt64) -> SyncOperation {
        SyncOperation(timestamp: timestamp(milliseconds, client: client), object: todo(id),
                      change: .set(property: "title", value: .string(title)))
    }

    static func createNote(_ id: Int64, text: String, at milliseconds: UInt64, client: UInt64) -> SyncOperation {
        SyncOperation(timestamp: timestamp(milliseconds, client: client), object: ObjectRef(className: "Note", primaryKey: .int(id)),
                      change: .create(["_id": .int(id), "text": .string(text)]))
    }

    static func changeset(_ sequence: UInt64, _ operations: [SyncOperation]) -> ClientChangeset {
        ClientChangeset(clientSequence: sequence, operations: operations)
    }
}

/// A store under test and how to put it away.
struct ServerStoreUnderTest {
    let storage: any SyncStorage
    private let background: Task<Void, any Error>

    static func embedded() async throws -> ServerStoreUnderTest {
        let storage = try EmbeddedSyncStorage(directory: try ServerTestEnvironment.temporaryDirectory())
        return try await start(storage)
    }

    static func postgres() async throws -> ServerStoreUnderTest {
        try await start(try PostgresSyncStorage(url: try ServerTestEnvironment.requirePostgresURL()))
    }

    private static func start(_ storage: any SyncStorage) async throws -> ServerStoreUnderTest {
        let background = Task { try await storage.run { _, _ in } }
        try await storage.prepare()
        return ServerStoreUnderTest(storage: storage, background: background)
    }

    func close() async {
        background.cancel()
        _ = await background.result
    }
}

/// A server running in this process for one test.
struct ServerUnderTest {
    let server: SyncServer
    let port: Int

    static func start(storage: SyncServer.Storage? = nil, apps: AppsConfiguration = .open) async throws -> ServerUnderTest {
        let storage = try storage ?? .embedded(directory: ServerTestEnvironment.temporaryDirectory())
        var logger = Logger(label: "server-tests")
        logger.logLevel = .warning
        let server = SyncServer(configuration: .init(port: 0, storage: storage, apps: apps), logger: logger)
        return ServerUnderTest(server: server, port: try await server.start())
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// POSTs JSON and returns the status and the decoded JSON object.
    func post(_ path: String, _ body: [String: String]) async throws -> (status: Int, body: [String: String]) {
        var request = URLRequest(url: try #require(URL(string: baseURL + path)))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(body)
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let decoded = (try? JSONDecoder().decode([String: String].self, from: data)) ?? [:]
        return (status, decoded)
    }

    /// An anonymous login's access token.
    func anonymousToken(app: String) async throws -> String {
        let response = try await post("/apps/\(app)/login", ["provider": "anonymous"])
        #expect(response.status == 200)
        return try #require(response.body["accessToken"])
    }

    /// A hello for `client` with the fixtures' schema.
    /// `completed` is the subscription version the client holds in full (0: none, so the
    /// server bootstraps `classes`).
    static func hello(app: String, client: UInt64, token: String, checkpoint: UInt64 = 0, version: UInt64 = 1, completed: UInt64 = 0,
                      classes: [String] = ["Todo", "Note"], schema: SyncSchema = ServerFixtures.schema) -> SyncMessage {
        .hello(.init(appID: app, clientID: client, accessToken: token, checkpoint: checkpoint, subscriptionVersion: version,
                     completedSubscriptionVersion: completed,
                     subscriptions: classes.map { SubscriptionSpec(name: $0, className: $0) }, schema: schema))
    }

    func connect(app: String) -> ServerTestConnection { ServerTestConnection(url: "ws://127.0.0.1:\(port)/sync/\(app)") }
}

/// One WebSocket to the server, driven by the test: send frames, receive messages in order.
final class ServerTestConnection {
    enum Received: Sendable, Equatable {
        case message(SyncMessage)
        case undecodable
        case closed
    }

    private let outgoing: AsyncStream<[UInt8]>.Continuation
    private var incoming: AsyncStream<Received>.AsyncIterator
    private let task: Task<Void, Never>

    init(url: String) {
        let (outgoingStream, outgoing) = AsyncStream<[UInt8]>.makeStream()
        let (incomingStream, incoming) = AsyncStream<Received>.makeStream()
        self.outgoing = outgoing
        self.incoming = incomingStream.makeAsyncIterator()
        var logger = Logger(label: "server-tests-client")
        logger.logLevel = .warning
        let limit = SyncProtocol.maximumFrameSize * 2
        task = Task {
            _ = try? await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: limit), logger: logger) { inbound, outbound, _ in
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do {
                            for try await message in inbound.messages(maxSize: limit) {
                                guard case .binary(let buffer) = message else { incoming.yield(.undecodable); continue }
                                if let decoded = try? SyncFrameCodec.decode(Array(buffer.readableBytesView)) {
                                    incoming.yield(.message(decoded))
                                } else {
                                    incoming.yield(.undecodable)
                                }
                            }
                        } catch {}
                    }
                    group.addTask {
                        for await bytes in outgoingStream {
                            try? await outbound.write(.binary(ByteBuffer(bytes: bytes)))
                        }
                        try? await outbound.close(.normalClosure, reason: nil)
                    }
                    await group.next()
                    group.cancelAll()
                }
            }
            incoming.yield(.closed)
            incoming.finish()
        }
    }

    func send(_ message: SyncMessage) { outgoing.yield(SyncFrameCodec.encode(message)) }

    func sendRaw(_ bytes: [UInt8]) { outgoing.yield(bytes) }

    /// The next message, `.closed` once the server closed the connection. (The suites' time
    /// limit turns a server that never answers into a failure.)
    func receive() async -> Received {
        await incoming.next() ?? .closed
    }

    /// The next message, which must be a message (not a close).
    func receiveMessage() async throws -> SyncMessage {
        let received = await receive()
        guard case .message(let message) = received else {
            throw ServerTestFailure("expected a message, got \(received)")
        }
        return message
    }

    /// Receives until the connection closes; returns the messages before it.
    func receiveUntilClosed() async -> [SyncMessage] {
        var messages: [SyncMessage] = []
        while true {
            switch await receive() {
            case .message(let message): messages.append(message)
            case .undecodable: continue
            case .closed: return messages
            }
        }
    }

    /// Receives until the connection closes or `pong(nonce)` arrives; returns the messages.
    func receiveUntilClosedOrPong(_ nonce: UInt64) async -> [SyncMessage] {
        var messages: [SyncMessage] = []
        while true {
            switch await receive() {
            case .message(let message):
                messages.append(message)
                if message == .pong(nonce) { return messages }
            case .undecodable: continue
            case .closed: return messages
            }
        }
    }

    /// Receives until a frame `predicate` accepts, returning the frames before it and it.
    func receive(until predicate: (SyncMessage) -> Bool) async throws -> [SyncMessage] {
        var messages: [SyncMessage] = []
        while true {
            let message = try await receiveMessage()
            messages.append(message)
            if predicate(message) { return messages }
        }
    }

    func close() async {
        outgoing.finish()
        _ = await task.value
    }
}

struct ServerTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
