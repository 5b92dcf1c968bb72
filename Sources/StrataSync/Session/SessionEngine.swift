package import Foundation
import StrataSyncProtocol
import Synchronization

/// The machinery of one file's sync session: a single task that owns the connection and
/// handles one event at a time (a connection opened or ended, a message from the server, a
/// local commit, a reconnect timer, suspend/resume/stop), so that the protocol's state needs
/// no locks and the order of effects is the order of events. Callers only post events and
/// read or await `SessionStatus`; nothing here runs on a caller's actor.
///
/// Flow of one connection: connect → `hello` → `welcome` (acknowledge through its
/// `lastAcknowledged`, upload the outbox after it) → then `uploadAck`s, `download`s and
/// `snapshot`s, with uploads following local commits. A connection that fails or ends, and
/// any error the server sends that is not fatal, schedule a reconnect after a backoff delay; a
/// fatal error stops the session.
package final class SessionEngine: Sendable {
    enum Event: Sendable {
        case resume, suspend
        case stop(SyncError)
        case connected(any SyncConnection, generation: UInt64)
        case connectFailed(any Error, generation: UInt64)
        /// The connection of `generation` queued messages in its ``InboundMessages``.
        case received(generation: UInt64)
        case connectionEnded((any Error)?, generation: UInt64)
        case retry(generation: UInt64)
        /// The connection of `generation` was still opening or awaiting `welcome` after
        /// `Settings.handshakeTimeout`.
        case handshakeTimedOut(generation: UInt64)
        /// The access token refresh started after the server refused the token ended.
        case tokenRefreshed(SyncError?, generation: UInt64)
        case localChange
        /// A download waiter was added: ask the server for its newest sequence.
        case requestLatestSequence
        case updateSubscriptions([SubscriptionSpec], CheckedContinuation<UInt64, any Error>)
    }

    /// What a session is configured with.
    package struct Settings: Sendable {
        package var url: URL
        package var appID: String
        package var accessToken: @Sendable () -> String
        /// Gets a new access token (after which `accessToken` returns it); nil: tokens are not
        /// refreshed and a refused token stops the session.
        package var refreshAccessToken: (@Sendable () async throws -> Void)?
        package var transport: any SyncTransport
        package var timer: any RetryTimer
        package var seed: UInt64
        /// The most changesets in one upload frame, and its byte budget (estimated).
        package var uploadBatchLimit = 1_000
        package var uploadBatchBytes = 1 << 20
        /// The most changesets sent but not yet acknowledged.
        package var uploadWindow: UInt64 = 4_000
        /// The most upload frames sent but not yet acknowledged (well under the server's
        /// queue of 64 frames per connection).
        package var uploadFramesInFlight = 8
        /// How long connecting and the `hello`/`welcome` exchange may take before the attempt is
        /// abandoned and retried (a server or network that accepts the connection and then says
        /// nothing would otherwise hold the session forever); nil: no limit. An open connection
        /// that goes silent is closed by the WebSocket's own ping, which expects a pong.
        package var handshakeTimeout: Duration? = .seconds(20)
        /// The timer of `handshakeTimeout`: it counts only time in which the process ran, so a
        /// handshake a busy concurrency pool kept from running is not abandoned for it (tests
        /// pass one they fire by hand).
        package var timeoutTimer: any RetryTimer = RunTimeDeadlineTimer()

        package init(url: URL, appID: String, accessToken: @escaping @Sendable () -> String, transport: any SyncTransport,
                     timer: any RetryTimer = ContinuousRetryTimer(), seed: UInt64 = UInt64.random(in: 0...UInt64.max)) {
            self.url = url
            self.appID = appID
            self.accessToken = accessToken
            self.transport = transport
            self.timer = timer
            self.seed = seed
        }
    }

    let ledger: any SessionLedger
    let status: SharedSessionStatus
    private let events: AsyncStream<Event>.Continuation

    /// Creates the engine, stopped until `resume()`.
    package init(ledger: any SessionLedger, settings: Settings) {
        self.ledger = ledger
        var initial = SessionStatus()
        do {
            initial.lastRecorded = try ledger.lastRecordedSequence()
            initial.checkpoint = try ledger.checkpoint()
            let subscriptions = try ledger.subscriptions()
            initial.subscriptionVersion = subscriptions.version
            initial.completedSubscriptionVersion = subscriptions.completedVersion
        } catch {
            initial.lastError = SyncError(.localFileError, "could not read the file's sync state: \(error)")
        }
        let status = SharedSessionStatus(initial)
        self.status = status
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        events = continuation
        Task.detached { [ledger, status] in
            var loop = SessionLoop(ledger: ledger, settings: settings, status: status, events: continuation)
            for await event in stream { await loop.handle(event) }
            loop.shutDown()
        }
        ledger.setLocalChangeHandler { continuation.yield(.localChange) }
    }

    /// Posts an event to the session's task.
    func post(_ event: Event) { events.yield(event) }

    deinit { events.finish() }
}
