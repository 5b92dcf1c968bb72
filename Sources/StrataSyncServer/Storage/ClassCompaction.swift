import StrataSyncProtocol

/// What compaction dropped of one class's history, as much as deciding a client reset needs:
/// the newest compacted sequence that changed the class, the client that sent it, and the
/// newest compacted sequence that changed it from any other client.
///
/// A client is reset only when history it has not applied and would have been sent was
/// compacted away: a changeset from another client that changed a class it subscribes to,
/// after its checkpoint. Its own changesets are never sent back, so they do not count. These
/// three numbers answer "the newest compacted change of this class not from client C" for
/// every C: it is `newest` unless C sent it, else `newestFromOthers`.
struct ClassCompaction: Sendable, Hashable {
    /// The newest compacted sequence whose changeset changed the class.
    var newest: UInt64 = 0
    /// The client of that changeset.
    var newestClient: UInt64 = 0
    /// The newest compacted sequence whose changeset changed the class from a client other
    /// than `newestClient` (0: none).
    var newestFromOthers: UInt64 = 0

    /// Takes in a compacted changeset of `clientID` at `sequence` that changed the class;
    /// sequences arrive in increasing order.
    mutating func record(sequence: UInt64, clientID: UInt64) {
        guard sequence > newest else { return }
        if clientID != newestClient {
            // The previous newest came from another client than this one, so it is the newest
            // from a client other than the new `newestClient`.
            newestFromOthers = newest
            newestClient = clientID
        }
        newest = sequence
    }

    /// The newest compacted sequence that changed the class from a client other than `clientID`.
    func newest(notFrom clientID: UInt64) -> UInt64 {
        clientID == newestClient ? newestFromOthers : newest
    }

    /// Takes in the summary of history compacted later (each of its sequences after each here).
    mutating func append(_ later: ClassCompaction) {
        guard later.newest > 0 else { return }
        let fromOthers = later.newestFromOthers > 0 ? later.newestFromOthers : newest(notFrom: later.newestClient)
        self = ClassCompaction(newest: later.newest, newestClient: later.newestClient, newestFromOthers: fromOthers)
    }

    /// Takes in every class a compacted changeset changed.
    static func record(_ changeset: ServerChangeset, into summary: inout [String: ClassCompaction]) {
        for className in Set(changeset.operations.map(\.object.className)) {
            summary[className, default: ClassCompaction()].record(sequence: changeset.serverSequence, clientID: changeset.clientID)
        }
    }

    /// The 24-byte record the embedded store keeps: the three numbers, big-endian.
    var encoded: [UInt8] {
        [newest, newestClient, newestFromOthers].flatMap { value in
            (0..<8).map { UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * $0)) }
        }
    }

    /// Reads a record made by ``encoded``; nil when it is not 24 bytes.
    init?(decoding bytes: [UInt8]) {
        guard bytes.count == 24 else { return nil }
        func number(_ index: Int) -> UInt64 { bytes[(8 * index)..<(8 * index + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
        self.init(newest: number(0), newestClient: number(1), newestFromOthers: number(2))
    }

    /// A summary with these numbers.
    init(newest: UInt64 = 0, newestClient: UInt64 = 0, newestFromOthers: UInt64 = 0) {
        self.newest = newest
        self.newestClient = newestClient
        self.newestFromOthers = newestFromOthers
    }
}
