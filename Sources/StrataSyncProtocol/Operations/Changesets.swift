/// The operations of one local commit, numbered by the client that made it. The server's
/// unique `(clientID, clientSequence)` makes uploads exactly-once across reconnects.
public struct ClientChangeset: Sendable, Hashable {
    /// 1, 2, 3, … per client, without gaps.
    public var clientSequence: UInt64
    /// The commit's operations, in the order they were made.
    public var operations: [SyncOperation]

    /// Makes a client changeset.
    public init(clientSequence: UInt64, operations: [SyncOperation]) {
        self.clientSequence = clientSequence
        self.operations = operations
    }
}

/// A changeset as the server orders it: its place in the app's history.
public struct ServerChangeset: Sendable, Hashable {
    /// The server's gapless sequence for the app (1, 2, 3, …).
    public var serverSequence: UInt64
    /// The client that uploaded it, and its number there.
    public var clientID: UInt64
    /// The uploading client's sequence number of the changeset.
    public var clientSequence: UInt64
    /// The changeset's operations, in the order they were made.
    public var operations: [SyncOperation]

    /// Makes a server changeset.
    public init(serverSequence: UInt64, clientID: UInt64, clientSequence: UInt64, operations: [SyncOperation]) {
        self.serverSequence = serverSequence
        self.clientID = clientID
        self.clientSequence = clientSequence
        self.operations = operations
    }
}

/// Where a download frame ends: the client has every changeset of the app up to `sequence`
/// (of the classes it subscribes to). `checksum` covers the frame's changesets, so a frame
/// damaged or cut in transit is refused rather than applied.
public struct Checkpoint: Sendable, Hashable {
    /// The last server sequence the frame covers.
    public var sequence: UInt64
    /// ``Checkpoint/checksum(of:)`` of the frame's changesets.
    public var checksum: UInt32

    /// Makes a checkpoint.
    public init(sequence: UInt64, checksum: UInt32) {
        self.sequence = sequence
        self.checksum = checksum
    }
}
