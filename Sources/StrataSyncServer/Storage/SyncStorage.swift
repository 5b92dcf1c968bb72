public import StrataSyncProtocol

/// Where the server keeps each app's history, object states, clients, schema and users, and its
/// token secret. Two stores implement it: ``EmbeddedSyncStorage`` (a Strata engine file) and
/// ``PostgresSyncStorage``; one test suite runs over both.
///
/// Every method is one transaction of the store: an upload's changesets, the object states they
/// change, the client's last acknowledged sequence and the app's next sequence commit together
/// or not at all, and are durable when ``upload(app:clientID:changesets:)`` returns.
public protocol SyncStorage: Sendable {
    /// Creates or migrates the store's tables. Called once before any other method but ``run(onCommit:)``.
    func prepare() async throws

    /// Runs the store's background work until the task is cancelled: for PostgreSQL the
    /// connection pool and the `LISTEN` for other instances' commits, each reported through
    /// `onCommit(app, newest sequence)`. The embedded store has no other writers and only waits.
    func run(onCommit: @escaping @Sendable (_ app: String, _ sequence: UInt64) -> Void) async throws

    /// The secret that signs the server's tokens: made at random on first use, then the same
    /// for every instance sharing the store and after restarts.
    func serverSecret() async throws -> [UInt8]

    /// The app's schema, or nil before any client connected.
    func schema(app: String) async throws -> SyncSchema?

    /// Checks a client's schema against the app's and, when compatible, stores their merge.
    func register(schema: SyncSchema, app: String) async throws -> SchemaRegistration

    /// The app's newest sequence and how far its history was compacted.
    func position(app: String) async throws -> HistoryPosition

    /// What the server remembers of one client of the app (zeroes and no classes when new).
    func client(app: String, clientID: UInt64) async throws -> ClientRecord

    /// Remembers the classes a client's subscription set `version` covers, once the server has
    /// sent their snapshot.
    func setSubscriptions(app: String, clientID: UInt64, classes: Set<String>, version: UInt64) async throws

    /// Stores an upload exactly once: changesets at or below the client's last acknowledged
    /// sequence are skipped, the rest must continue it without a gap (else
    /// ``SyncServerError/outOfOrderUpload(expected:received:)`` and nothing is stored); they get
    /// the app's next sequences and are applied to the object states.
    func upload(app: String, clientID: UInt64, changesets: [ClientChangeset]) async throws -> UploadResult

    /// Up to `limit` changesets after sequence `after`, in order. When `after` is below the
    /// compacted-through sequence the page is empty and its position says so (a client reset).
    func history(app: String, after: UInt64, limit: Int) async throws -> HistoryPage

    /// Every object state (tombstones included) of `classes`, and the sequence they are as of,
    /// read together.
    func snapshot(app: String, classes: Set<String>) async throws -> ObjectSnapshot

    /// `snapshot(app:classes:)` with each state in its `SyncObjectState.encoded()` form, as
    /// snapshot frames carry it (`EncodedObjectSnapshot.swift` encodes the decoded snapshot).
    func encodedSnapshot(app: String, classes: Set<String>) async throws -> EncodedObjectSnapshot

    /// Drops the history up to `latest − keepingLast` and records it as compacted-through;
    /// returns the compacted-through sequence.
    @discardableResult
    func compact(app: String, keepingLast: UInt64) async throws -> UInt64

    /// The newest compacted sequence whose changeset came from a client other than `clientID`
    /// and changed an object of one of `classes` (0: none). A client holding `classes` as of a
    /// checkpoint at or after it lost nothing to compaction that it would have been sent, so
    /// it is caught up from the compacted-through sequence instead of reset. History
    /// compacted before the store kept this record counts as changing every class.
    func newestCompactedChange(app: String, classes: Set<String>, notFrom clientID: UInt64) async throws -> UInt64

    /// Records that `userID` logged in to `app` through `provider`.
    func recordUser(app: String, userID: String, provider: String) async throws
}

/// An app's history bounds.
public struct HistoryPosition: Sendable, Hashable {
    /// The newest sequence (0: no history yet).
    public var latestSequence: UInt64
    /// Changesets up to this sequence are gone; a client behind it needs a reset.
    public var compactedThrough: UInt64

    /// A position.
    public init(latestSequence: UInt64, compactedThrough: UInt64) {
        self.latestSequence = latestSequence
        self.compactedThrough = compactedThrough
    }
}

/// What the server remembers of one client.
public struct ClientRecord: Sendable, Hashable {
    /// The highest client sequence stored.
    public var lastAcknowledged: UInt64
    /// The classes of the newest subscription set whose snapshot was sent.
    public var subscribedClasses: Set<String>
    /// That set's version.
    public var subscriptionVersion: UInt64

    /// A record.
    public init(lastAcknowledged: UInt64 = 0, subscribedClasses: Set<String> = [], subscriptionVersion: UInt64 = 0) {
        self.lastAcknowledged = lastAcknowledged
        self.subscribedClasses = subscribedClasses
        self.subscriptionVersion = subscriptionVersion
    }
}

/// The outcome of registering a client's schema.
public enum SchemaRegistration: Sendable, Hashable {
    /// Compatible; the app's schema is now this merge.
    case accepted(SyncSchema)
    /// Incompatible, one sentence per difference; nothing was stored.
    case refused([String])
}

/// The outcome of an upload.
public struct UploadResult: Sendable, Hashable {
    /// The client's highest stored client sequence (what `uploadAck` reports).
    public var lastAcknowledged: UInt64
    /// The app's position after the upload.
    public var position: HistoryPosition
    /// How many changesets were new (the rest were repeats).
    public var appendedCount: Int

    /// An outcome.
    public init(lastAcknowledged: UInt64, position: HistoryPosition, appendedCount: Int) {
        self.lastAcknowledged = lastAcknowledged
        self.position = position
        self.appendedCount = appendedCount
    }
}

/// One page of history.
public struct HistoryPage: Sendable, Hashable {
    /// Changesets in sequence order.
    public var changesets: [ServerChangeset]
    /// The app's position read with them.
    public var position: HistoryPosition

    /// A page.
    public init(changesets: [ServerChangeset], position: HistoryPosition) {
        self.changesets = changesets
        self.position = position
    }
}

/// Object states as of one sequence.
public struct ObjectSnapshot: Sendable, Hashable {
    /// The states, ordered by class and primary key encoding.
    public var objects: [SyncObjectState]
    /// The sequence they include every changeset up to.
    public var sequence: UInt64

    /// A snapshot.
    public init(objects: [SyncObjectState], sequence: UInt64) {
        self.objects = objects
        self.sequence = sequence
    }
}
