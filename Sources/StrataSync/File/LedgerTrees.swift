// The ledger's records in the file: four named trees of the storage engine beside the object
// tables (not part of the object schema, so users' dynamic schema never shows them).
//
//   strata.sync.meta     name → value: client id, clock, last recorded sequence, last
//                        acknowledged, checkpoint, subscriptions
//   strata.sync.outbox   client sequence (big-endian) → encoded ClientChangeset
//   strata.sync.objects  encoded ObjectRef → encoded SyncObjectState (every synced object,
//                        tombstones included)
//   strata.sync.keys     table id + object key (big-endian) → encoded ObjectRef: a local
//                        object's identity, for recording its delete
//   strata.sync.pending  encoded target ObjectRef + encoded source ObjectRef → empty: links
//                        whose target has not arrived; the source is materialised again when
//                        the target is created by a download

import StrataStore
import StrataSyncProtocol

/// The ledger's trees, read and written through one store session (in its transaction).
struct LedgerTrees {
    let session: StoreSession

    static let meta = "strata.sync.meta"
    static let outbox = "strata.sync.outbox"
    static let objects = "strata.sync.objects"
    static let keys = "strata.sync.keys"
    static let pending = "strata.sync.pending"

    /// The names of the meta tree's entries.
    enum MetaKey: String {
        case clientID, clock, lastSequence, lastAcknowledged, checkpoint, subscriptionVersion, subscriptions, subscriptionsCompleted
        var bytes: [UInt8] { Array(rawValue.utf8) }
    }

    // MARK: Meta

    func number(_ key: MetaKey) throws -> UInt64? {
        try session.namedTreeValue(forKey: key.bytes, in: Self.meta).map { bytes throws(SyncLedgerError) in try LedgerEncoding.decodeNumber(bytes) }
    }

    func setNumber(_ value: UInt64, _ key: MetaKey) throws {
        try session.putNamedTreeValue(LedgerEncoding.encode(value), forKey: key.bytes, in: Self.meta)
    }

    func clock(clientID: UInt64) throws -> HybridClock {
        let latest = try session.namedTreeValue(forKey: MetaKey.clock.bytes, in: Self.meta)
            .map { bytes throws(SyncLedgerError) in try LedgerEncoding.decodeTimestamp(bytes) }
        return HybridClock(clientID: clientID, latest: latest ?? .zero)
    }

    func setClock(_ clock: HybridClock) throws {
        try session.putNamedTreeValue(LedgerEncoding.encode(clock.latest), forKey: MetaKey.clock.bytes, in: Self.meta)
    }

    func subscriptions() throws -> StoredSubscriptions {
        let specs = try session.namedTreeValue(forKey: MetaKey.subscriptions.bytes, in: Self.meta)
            .map { bytes throws(SyncLedgerError) in try LedgerEncoding.decodeSubscriptions(bytes) } ?? []
        return StoredSubscriptions(version: try number(.subscriptionVersion) ?? 0, specs: specs,
                                   completedVersion: try number(.subscriptionsCompleted) ?? 0)
    }

    func setSubscriptions(version: UInt64, specs: [SubscriptionSpec]) throws {
        try setNumber(version, .subscriptionVersion)
        try session.putNamedTreeValue(LedgerEncoding.encode(specs), forKey: MetaKey.subscriptions.bytes, in: Self.meta)
    }

    // MARK: Outbox

    func putOutbox(_ changeset: ClientChangeset) throws {
        try session.putNamedTreeValue(LedgerEncoding.encode(changeset), forKey: LedgerEncoding.sortableKey(changeset.clientSequence), in: Self.outbox)
    }

    func outbox(after sequence: UInt64, limit: Int) throws -> [ClientChangeset] {
        guard sequence < UInt64.max else { return [] }
        return try session.namedTreeEntries(in: Self.outbox, from: LedgerEncoding.sortableKey(sequence + 1), limit: limit)
            .map { entry throws(SyncLedgerError) in try LedgerEncoding.decodeChangeset(entry.value) }
    }

    func outboxCount() throws -> Int { try session.namedTreeCount(in: Self.outbox) }

    /// Removes the changesets after `acknowledged` (the stored last acknowledged sequence: the
    /// outbox holds nothing at or before it) up to `sequence`; returns how many. Reads only
    /// those entries, all before the first removal, so the cost follows what is removed.
    @discardableResult
    func removeOutbox(after acknowledged: UInt64, through sequence: UInt64) throws -> Int {
        guard sequence > acknowledged else { return 0 }
        var removed = 0
        let limit = Int(clamping: sequence - acknowledged)
        for entry in try session.namedTreeEntries(in: Self.outbox, limit: limit) {
            guard try LedgerEncoding.number(fromSortableKey: entry.key) <= sequence else { break }
            try session.removeNamedTreeValue(forKey: entry.key, in: Self.outbox)
            removed += 1
        }
        return removed
    }

    /// Records that the server holds the changesets up to `sequence`: removes them from the
    /// outbox and moves the last acknowledged sequence (never backwards). Nothing to do when
    /// it is not newer than the stored one.
    func acknowledge(through sequence: UInt64) throws {
        let stored = try number(.lastAcknowledged) ?? 0
        guard sequence > stored else { return }
        try removeOutbox(after: stored, through: sequence)
        try setNumber(sequence, .lastAcknowledged)
    }

    // MARK: Object states

    func state(_ ref: ObjectRef) throws -> SyncObjectState? {
        try session.namedTreeValue(forKey: LedgerEncoding.encode(ref), in: Self.objects)
            .map { bytes throws(SyncLedgerError) in try LedgerEncoding.decodeState(bytes) }
    }

    func putState(_ state: SyncObjectState) throws {
        try session.putNamedTreeValue(LedgerEncoding.encode(state), forKey: LedgerEncoding.encode(state.object), in: Self.objects)
    }

    func allStates() throws -> [SyncObjectState] {
        try session.namedTreeEntries(in: Self.objects).map { entry throws(SyncLedgerError) in try LedgerEncoding.decodeState(entry.value) }
    }

    func removeAllStates() throws { try session.removeAllNamedTreeValues(in: Self.objects) }

    // MARK: Local keys

    static func localKey(table: UInt32, key: ObjectKey) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: table >> (24 - 8 * UInt32($0))) } + LedgerEncoding.sortableKey(UInt64(bitPattern: key.rawValue))
    }

    func ref(table: UInt32, key: ObjectKey) throws -> ObjectRef? {
        try session.namedTreeValue(forKey: Self.localKey(table: table, key: key), in: Self.keys)
            .map { bytes throws(SyncLedgerError) in try LedgerEncoding.decodeRef(bytes) }
    }

    func putRef(_ ref: ObjectRef, table: UInt32, key: ObjectKey) throws {
        try session.putNamedTreeValue(LedgerEncoding.encode(ref), forKey: Self.localKey(table: table, key: key), in: Self.keys)
    }

    func removeRef(table: UInt32, key: ObjectKey) throws {
        try session.removeNamedTreeValue(forKey: Self.localKey(table: table, key: key), in: Self.keys)
    }

    // MARK: Pending links

    private static func pendingPrefix(_ target: ObjectRef) -> [UInt8] {
        let encoded = LedgerEncoding.encode(target)
        return LedgerEncoding.sortableKey(UInt64(encoded.count)) + encoded
    }

    func addPendingLink(to target: ObjectRef, from source: ObjectRef) throws {
        try session.putNamedTreeValue([], forKey: Self.pendingPrefix(target) + LedgerEncoding.encode(source), in: Self.pending)
    }

    /// The objects whose links wait for `target`; forgets them.
    func takePendingLinks(to target: ObjectRef) throws -> [ObjectRef] {
        let prefix = Self.pendingPrefix(target)
        var sources: [ObjectRef] = []
        for entry in try session.namedTreeEntries(in: Self.pending, prefix: prefix) {
            sources.append(try LedgerEncoding.decodeRef(Array(entry.key.dropFirst(prefix.count))))
            try session.removeNamedTreeValue(forKey: entry.key, in: Self.pending)
        }
        return sources
    }
}
