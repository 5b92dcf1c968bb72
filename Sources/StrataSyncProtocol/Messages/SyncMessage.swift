/// Every message of the sync protocol, in both directions, over one WebSocket (one binary
/// WebSocket message per frame; see ``SyncFrameCodec`` for the bytes).
///
/// A session: the client sends `hello`; the server answers `welcome` (or `error` and closes).
/// Then, in any order: the client `upload`s changesets and the server `uploadAck`s them once
/// they are durable; the server sends `download` frames (each ending at a checkpoint) and
/// `snapshot`s (bootstraps of new subscriptions, and client resets); the client changes its
/// subscriptions with `subscribe`; either side may `ping`.
public enum SyncMessage: Sendable, Hashable {
    // Client → server
    /// Opens a session. `checkpoint` is the last server sequence the client applied (0: none),
    /// `lastAcknowledged` is not sent: the server knows it.
    case hello(Hello)
    /// Changesets in client-sequence order, starting at or before the first the server has
    /// not acknowledged (a resend after a reconnect repeats some; the server skips those).
    case upload([ClientChangeset])
    /// Replaces the client's subscriptions; `version` increases with each change.
    case subscribe(version: UInt64, subscriptions: [SubscriptionSpec])
    /// Asks the other side to answer `pong` with the same nonce (a liveness check).
    case ping(UInt64)
    /// Asks the server for its newest sequence for the app now; answered by
    /// `latestSequence(request:sequence:)`. A client waiting for downloads asks, so that it
    /// waits for everything the server had when it asked, not only what it had heard of.
    case latestSequenceRequest(UInt64)

    // Server → client
    case welcome(Welcome)
    /// Every changeset of this client up to `clientSequence` is durable on the server.
    case uploadAck(clientSequence: UInt64)
    /// Changesets after the client's checkpoint, ending at `checkpoint`. Applied as one
    /// local write transaction.
    case download(changesets: [ServerChangeset], checkpoint: Checkpoint, remaining: UInt64)
    /// Whole object states (for new subscriptions, or a client reset when `isReset`), as of
    /// `checkpoint`. `subscriptionVersion` is the subscription set the snapshot completes.
    case snapshot(Snapshot)
    /// Answers a `ping`, echoing its nonce.
    case pong(UInt64)
    /// The answer to `latestSequenceRequest(request)`: the app's newest sequence when the
    /// server read it.
    case latestSequence(request: UInt64, sequence: UInt64)
    /// A refusal; `code` says why. After a fatal error the server closes the connection.
    case error(code: SyncErrorCode, message: String)

    /// The fields of ``SyncMessage/hello(_:)``.
    public struct Hello: Sendable, Hashable {
        /// The protocol version the client speaks.
        public var protocolVersion: UInt16
        /// The app the client belongs to.
        public var appID: String
        /// The client's random 64-bit id, made when its file was first synced.
        public var clientID: UInt64
        /// The access token from the login.
        public var accessToken: String
        /// The last server sequence the client applied (0: none).
        public var checkpoint: UInt64
        /// The version of `subscriptions`.
        public var subscriptionVersion: UInt64
        /// The newest subscription version whose data the client's file holds in full (0: none).
        /// When it is `subscriptionVersion`, the client holds every subscribed class as of
        /// `checkpoint`; otherwise the server bootstraps every subscribed class again, since a
        /// bootstrap it sent may never have been applied.
        public var completedSubscriptionVersion: UInt64
        /// The client's subscriptions.
        public var subscriptions: [SubscriptionSpec]
        /// The synced classes the client declares.
        public var schema: SyncSchema

        /// Makes a hello; `protocolVersion` defaults to this build's.
        public init(protocolVersion: UInt16 = SyncProtocol.version, appID: String, clientID: UInt64, accessToken: String,
                    checkpoint: UInt64, subscriptionVersion: UInt64, completedSubscriptionVersion: UInt64 = 0,
                    subscriptions: [SubscriptionSpec], schema: SyncSchema) {
            self.protocolVersion = protocolVersion
            self.appID = appID
            self.clientID = clientID
            self.accessToken = accessToken
            self.checkpoint = checkpoint
            self.subscriptionVersion = subscriptionVersion
            self.completedSubscriptionVersion = completedSubscriptionVersion
            self.subscriptions = subscriptions
            self.schema = schema
        }
    }

    /// The fields of ``SyncMessage/welcome(_:)``.
    public struct Welcome: Sendable, Hashable {
        /// The highest client sequence of this client the server holds (resend after it).
        public var lastAcknowledged: UInt64
        /// The server's newest sequence for the app (for download progress).
        public var latestSequence: UInt64

        /// Makes a welcome.
        public init(lastAcknowledged: UInt64, latestSequence: UInt64) {
            self.lastAcknowledged = lastAcknowledged
            self.latestSequence = latestSequence
        }
    }

    /// The fields of ``SyncMessage/snapshot(_:)``.
    public struct Snapshot: Sendable, Hashable {
        /// Encoded ``SyncObjectState``s, one per object (tombstones included), so that
        /// pending local operations merge with them exactly as with the history.
        public var objects: [SyncObjectState]
        /// The history position the states are as of.
        public var checkpoint: Checkpoint
        /// The subscription set the snapshot completes.
        public var subscriptionVersion: UInt64
        /// A client reset: the client's synced data becomes this state (plus its
        /// unacknowledged changes).
        public var isReset: Bool
        /// More snapshot frames follow for the same checkpoint (large bootstraps are split).
        public var isLast: Bool

        /// Makes a snapshot.
        public init(objects: [SyncObjectState], checkpoint: Checkpoint, subscriptionVersion: UInt64, isReset: Bool, isLast: Bool) {
            self.objects = objects
            self.checkpoint = checkpoint
            self.subscriptionVersion = subscriptionVersion
            self.isReset = isReset
            self.isLast = isLast
        }
    }
}

/// Protocol-wide constants.
public enum SyncProtocol {
    /// The version of the message set and encoding this build speaks. Version 2 added lists
    /// and dictionaries nested in mixed values (``SyncValue/mixedList(_:)``), version 3 list
    /// moves (``SyncOperation/Change/listMove(property:element:after:)``, and the moves in an
    /// object state's encoding); a peer of
    /// another version is refused with ``SyncErrorCode/unsupportedProtocolVersion`` at its
    /// first frame, before any value could be misread.
    public static let version: UInt16 = 3
    /// The largest frame either side accepts (bytes); a larger one is ``SyncErrorCode/frameTooLarge``.
    public static let maximumFrameSize = 16 * 1024 * 1024
}
