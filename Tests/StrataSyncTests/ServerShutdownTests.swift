// `SyncServer.shutdown()` returns even when the store's background work ignores cancellation
// (as postgres-nio's pool does while one of its connections never closes), so a test or an
// app shutting a server down is never held by its store.

import Foundation
import StrataSyncProtocol
import StrataSyncServer
import Synchronization
import Testing

/// The embedded store, except that its background work ends only when the test lets it go,
/// whatever cancels it.
private final class StubbornStorage: SyncStorage {
    private struct State {
        var waiting: CheckedContinuation<Void, Never>?
        var released = false
        var running = false
    }
    private let inner: EmbeddedSyncStorage
    private let state = Mutex(State())

    init(directory: String) throws {
        inner = try EmbeddedSyncStorage(directory: directory)
    }

    /// Whether the background work is still running (it ignored the server's cancellation).
    var isRunning: Bool { state.withLock { $0.running } }

    /// Ends the background work.
    func letGo() {
        let waiting = state.withLock { state in
            state.released = true
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume()
    }

    func run(onCommit: @escaping @Sendable (String, UInt64) -> Void) async throws {
        state.withLock { $0.running = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let released = state.withLock { state in
                if !state.released { state.waiting = continuation }
                return state.released
            }
            if released { continuation.resume() }
        }
        state.withLock { $0.running = false }
    }

    func prepare() async throws { try await inner.prepare() }
    func serverSecret() async throws -> [UInt8] { try await inner.serverSecret() }
    func schema(app: String) async throws -> SyncSchema? { try await inner.schema(app: app) }
    func register(schema: SyncSchema, app: String) async throws -> SchemaRegistration { try await inner.register(schema: schema, app: app) }
    func position(app: String) async throws -> HistoryPosition { try await inner.position(app: app) }
    func client(app: String, clientID: UInt64) async throws -> ClientRecord { try await inner.client(app: app, clientID: clientID) }
    func setSubscriptions(app: String, clientID: UInt64, classes: Set<String>, version: UInt64) async throws {
        try await inner.setSubscriptions(app: app, clientID: clientID, classes: classes, version: version)
    }
    func upload(app: String, clientID: UInt64, changesets: [ClientChangeset]) async throws -> UploadResult {
        try await inner.upload(app: app, clientID: clientID, changesets: changesets)
    }
    func history(app: String, after: UInt64, limit: Int) async throws -> HistoryPage {
        try await inner.history(app: app, after: after, limit: limit)
    }
    func snapshot(app: String, classes: Set<String>) async throws -> ObjectSnapshot { try await inner.snapshot(app: app, classes: classes) }
    func compact(app: String, keepingLast: UInt64) async throws -> UInt64 { try await inner.compact(app: app, keepingLast: keepingLast) }
    func newestCompactedChange(app: String, classes: Set<String>, notFrom clientID: UInt64) async throws -> UInt64 {
        try await inner.newestCompactedChange(app: app, classes: classes, notFrom: clientID)
    }
    func recordUser(app: String, userID: String, provider: String) async throws {
        try await inner.recordUser(app: app, userID: userID, provider: provider)
    }
}

/// The limits leave room for a saturated concurrency pool: with every sync suite in one process
/// pinned to one CPU, this test took 54 s (the server's 10 s wait for the store included), so a
/// 1-minute limit failed it in full-suite runs while it passed alone in 10 s.
@Suite("Server shutdown", .timeLimit(.minutes(10)))
struct ServerShutdownTests {
    @Test
    func aShutdownReturnsWhenTheStoresBackgroundWorkIgnoresCancellation() async throws {
        let storage = try StubbornStorage(directory: try ServerTestEnvironment.temporaryDirectory())
        let server = SyncServer(configuration: .init(port: 0, storage: .custom(storage)))
        try await withStepDeadline(seconds: 60, "starting the server") { try await server.start() }
        // Beyond the server's 10 s wait for the store, not a measure of it.
        try await withStepDeadline(seconds: 120, "shutting down the server") { await server.shutdown() }
        #expect(storage.isRunning, "the store's work ended by itself, so the shutdown's limit was not what ended the wait")
        storage.letGo()
    }
}
