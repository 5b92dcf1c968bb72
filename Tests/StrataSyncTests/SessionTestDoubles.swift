// Test doubles for the session and API suites: an in-memory ledger, a transport whose
// connections the test drives as the server, a reconnect timer fired by hand, and a queue the
// test awaits. None of them sleeps: a test waits for the next thing to happen, never for time.

import Foundation
import Synchronization
import StrataSyncProtocol
@testable import StrataSync

/// A FIFO the test awaits: `put` from anywhere, `take` suspends until an item is there.
final class Mailbox<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var waiters: [CheckedContinuation<Item, Never>] = []
    }
    private let state = Mutex(State())

    func put(_ item: Item) {
        let waiter = state.withLock { state -> CheckedContinuation<Item, Never>? in
            if state.waiters.isEmpty {
                state.items.append(item)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume(returning: item)
    }

    func take() async -> Item {
        await withCheckedContinuation { continuation in
            let item = state.withLock { state -> Item? in
                if state.items.isEmpty {
                    state.waiters.append(continuation)
                    return nil
                }
                return state.items.removeFirst()
            }
            if let item { continuation.resume(returning: item) }
        }
    }

    var pending: [Item] { state.withLock { $0.items } }
}

/// A ledger in memory, with the real one's contract: gapless client sequences, acknowledged
/// changesets leave the outbox, the checkpoint only moves forward.
final class MemoryLedger: SessionLedger {
    struct State {
        var outbox: [ClientChangeset] = []
        var recorded: UInt64 = 0
        var acknowledged: UInt64 = 0
        var checkpoint: UInt64 = 0
        var downloads: [[ServerChangeset]] = []
        var snapshots: [SyncMessage.Snapshot] = []
        var subscriptions = StoredSubscriptions(version: 0, specs: [], completedVersion: 0)
        var handler: (@Sendable () -> Void)?
        var failNextDownload = false
    }
    let state = Mutex(State())
    let clientID: UInt64
    let schema = SyncSchema(classes: [SyncClassSchema(name: "Todo", primaryKey: "_id", properties: [SyncPropertySchema(name: "_id", type: "string")])])

    init(clientID: UInt64 = 42) { self.clientID = clientID }

    /// A local commit of one changeset; tells the session like the real ledger does.
    func recordLocalCommit(count: Int = 1) {
        let handler = state.withLock { state in
            for _ in 0..<count {
                state.recorded += 1
                state.outbox.append(ClientChangeset(clientSequence: state.recorded, operations: []))
            }
            return state.handler
        }
        handler?()
    }

    func checkpoint() throws -> UInt64 { state.withLock { $0.checkpoint } }
    func lastRecordedSequence() throws -> UInt64 { state.withLock { $0.recorded } }
    func pendingChangesets(after clientSequence: UInt64, limit: Int) throws -> [ClientChangeset] {
        state.withLock { Array($0.outbox.filter { $0.clientSequence > clientSequence }.prefix(limit)) }
    }
    func acknowledge(through clientSequence: UInt64) throws {
        state.withLock { state in
            state.acknowledged = max(state.acknowledged, clientSequence)
            state.outbox.removeAll { $0.clientSequence <= clientSequence }
        }
    }
    func apply(changesets: [ServerChangeset], checkpoint: Checkpoint) throws {
        try state.withLock { state in
            if state.failNextDownload {
                state.failNextDownload = false
                throw SyncError(.localFileError, "checksum mismatch")
            }
            state.downloads.append(changesets)
            state.checkpoint = max(state.checkpoint, checkpoint.sequence)
        }
    }
    func apply(snapshot: SyncMessage.Snapshot) throws {
        state.withLock { state in
            state.snapshots.append(snapshot)
            state.checkpoint = max(state.checkpoint, snapshot.checkpoint.sequence)
        }
    }
    func subscriptions() throws -> StoredSubscriptions { state.withLock { $0.subscriptions } }
    func setSubscriptions(version: UInt64, specs: [SubscriptionSpec]) throws {
        state.withLock { $0.subscriptions.version = version; $0.subscriptions.specs = specs }
    }
    func markSubscriptionsComplete(version: UInt64) throws {
        state.withLock { $0.subscriptions.completedVersion = max($0.subscriptions.completedVersion, version) }
    }
    func setLocalChangeHandler(_ handler: (@Sendable () -> Void)?) { state.withLock { $0.handler = handler } }
}

/// One connection as the test sees it: what the client sent, and a way to answer.
final class TestConnection: SyncConnection {
    let incoming: AsyncThrowingStream<SyncMessage, any Error>
    private let continuation: AsyncThrowingStream<SyncMessage, any Error>.Continuation
    let sent = Mailbox<SyncMessage>()
    let closed = Mailbox<Void>()
    private let isClosed = Mutex(false)

    init() { (incoming, continuation) = AsyncThrowingStream.makeStream(of: SyncMessage.self, throwing: (any Error).self) }

    func send(_ message: SyncMessage) async throws {
        guard !isClosed.withLock({ $0 }) else { throw SyncError(.connectionClosed, "closed") }
        sent.put(message)
    }

    func close() {
        guard !isClosed.withLock({ let was = $0; $0 = true; return was }) else { return }
        continuation.finish()
        closed.put(())
    }

    /// The server sends `message`.
    func deliver(_ message: SyncMessage) { continuation.yield(message) }

    /// The connection breaks (the network, or the server going away).
    func breakConnection(_ error: any Error = SyncError(.connectionClosed, "cut")) { continuation.finish(throwing: error) }

    /// The next message the client sent.
    func next() async -> SyncMessage { await sent.take() }

    /// Sends a ping and collects what the client sent before answering it: every message
    /// delivered before the ping has been handled once this returns.
    func barrier(_ nonce: UInt64 = 9_999) async -> [SyncMessage] {
        deliver(.ping(nonce))
        var before: [SyncMessage] = []
        while true {
            let message = await next()
            if message == .pong(nonce) { return before }
            before.append(message)
        }
    }
}

/// A transport whose connections the test plays the server on.
final class TestTransport: SyncTransport {
    let connections = Mailbox<TestConnection>()
    private let failures = Mutex<[SyncError]>([])
    private let attempts = Mutex(0)

    /// The next connects fail with these errors, in order.
    func failNextConnects(_ errors: [SyncError]) { failures.withLock { $0.append(contentsOf: errors) } }

    var attemptCount: Int { attempts.withLock { $0 } }

    func connect(to url: URL) async throws -> any SyncConnection {
        attempts.withLock { $0 += 1 }
        if let failure = failures.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw failure }
        let connection = TestConnection()
        connections.put(connection)
        return connection
    }
}

/// A reconnect timer the test fires by hand.
final class ManualTimer: RetryTimer {
    let requested = Mailbox<Duration>()
    private let pending = Mutex<[UInt64: CheckedContinuation<Void, any Error>]>([:])
    private let nextID = Mutex<UInt64>(0)

    func wait(_ delay: Duration) async throws {
        let id = nextID.withLock { $0 += 1; return $0 }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                pending.withLock { $0[id] = continuation }
                requested.put(delay)
            }
        } onCancel: {
            pending.withLock { $0.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// Ends every wait in progress.
    func fire() {
        let waiting = pending.withLock { pending in
            defer { pending = [:] }
            return Array(pending.values)
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// A session over a memory ledger and a test transport, stopped until `resume()`.
struct SessionHarness {
    let ledger: MemoryLedger
    let transport = TestTransport()
    let timer = ManualTimer()
    let session: SyncSession

    init(ledger: MemoryLedger = MemoryLedger(), token: String = "token-1", configure: (inout SessionEngine.Settings) -> Void = { _ in }) {
        self.ledger = ledger
        var settings = SessionEngine.Settings(url: URL(string: "ws://localhost:9090/sync/app")!, appID: "app",
                                              accessToken: { token }, transport: transport, timer: timer, seed: 7)
        configure(&settings)
        session = SyncSession(ledger: ledger, settings: settings)
    }

    /// Resumes the session, answers its hello with `welcome`, and returns the connection and
    /// the hello.
    @discardableResult
    func connect(lastAcknowledged: UInt64 = 0, latestSequence: UInt64 = 0, resume: Bool = true) async -> (TestConnection, SyncMessage.Hello?) {
        if resume { session.resume() }
        let connection = await transport.connections.take()
        let first = await connection.next()
        guard case .hello(let hello) = first else { return (connection, nil) }
        connection.deliver(.welcome(SyncMessage.Welcome(lastAcknowledged: lastAcknowledged, latestSequence: latestSequence)))
        return (connection, hello)
    }

    var waiterCount: Int { session.engine.status.read { $0.waiters.count } }
}

/// The client sequences of the upload frames among `messages`.
func uploadedSequences(_ messages: [SyncMessage]) -> [[UInt64]] {
    messages.compactMap { message in
        if case .upload(let changesets) = message { return changesets.map(\.clientSequence) }
        return nil
    }
}

/// A folder removed when the value goes away.
final class SyncTestFolder: Sendable {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-sync-tests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}
