import StrataSyncProtocol

/// Object states as of one sequence, each in its `SyncObjectState.encoded()` form: what
/// snapshot frames carry, so a store that keeps states in that form hands them over without
/// decoding and encoding each again.
public struct EncodedObjectSnapshot: Sendable, Hashable {
    /// The states' encodings, ordered by class and primary key encoding.
    public var objects: [[UInt8]]
    /// The sequence they include every changeset up to.
    public var sequence: UInt64

    /// A snapshot.
    public init(objects: [[UInt8]], sequence: UInt64) {
        self.objects = objects
        self.sequence = sequence
    }
}

extension SyncStorage {
    /// `snapshot(app:classes:)`, each state encoded (for stores without the encoded form at hand).
    public func encodedSnapshot(app: String, classes: Set<String>) async throws -> EncodedObjectSnapshot {
        let snapshot = try await snapshot(app: app, classes: classes)
        return EncodedObjectSnapshot(objects: snapshot.objects.map { $0.encoded() }, sequence: snapshot.sequence)
    }
}
