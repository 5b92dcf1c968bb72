// The file side of sync for one database file in this process: the recorder of local writes
// (LedgerRecorder), the application of downloads and snapshots, and the records the session
// reads (outbox, checkpoint, subscriptions, status). See docs/design/sync.md, "Client: the
// file side".

package import Foundation
package import Strata
import StrataStore
package import StrataSyncProtocol
import Synchronization

/// The file side of sync for one database file in this process (one per file; `attach`
/// returns the same one again while it is attached).
///
/// Thread-safe: every call takes the ledger's lock and works through the ledger's own store
/// session; local writes record through the participant installed in the file's store, in
/// the writer's own transaction, without this lock.
package final class SyncLedger: Sendable {
    /// The file's client id (made when the file was first synced).
    package let clientID: UInt64
    /// The synced classes, as declared to the server (persisted names).
    package var schema: SyncSchema { ledgerSchema.syncSchema }

    let ledgerSchema: LedgerSchema
    private let lease: DatabaseFileLease
    private let recorder: LedgerRecorder
    /// The ledger's own session on the file, used only while holding `lock` (which is what
    /// makes the non-Sendable session safe to keep in this Sendable class).
    nonisolated(unsafe) private let session: StoreSession
    private let lock = Mutex(())

    private static let attached = Mutex<[String: SyncLedger]>([:])

    private init(lease: DatabaseFileLease, schema: LedgerSchema, clientID: UInt64, recorder: LedgerRecorder, session: StoreSession) {
        self.lease = lease
        self.ledgerSchema = schema
        self.clientID = clientID
        self.recorder = recorder
        self.session = session
    }

    /// Installs the write participant on the file and returns its ledger. `syncedTypes`: the
    /// Object classes that sync (each with a primary key; embedded classes travel inside
    /// their parents). Creates the client id and metadata on first use.
    package static func attach(configuration: Database.Configuration, syncedTypes: [Object.Type]) throws -> SyncLedger {
        try attach(configuration: configuration, syncedTypes: syncedTypes, wallClock: SyncLedger.systemMilliseconds)
    }

    /// `attach`, with the wall clock the ledger's hybrid clock reads (tests choose it).
    package static func attach(configuration: Database.Configuration, syncedTypes: [Object.Type],
                               wallClock: @escaping @Sendable () -> UInt64) throws -> SyncLedger {
        guard !configuration.readOnly else { throw SyncLedgerError.readOnly }
        let identity = DatabaseFileLease.identity(of: configuration)
        return try attached.withLock { ledgers throws -> SyncLedger in
            if let ledger = ledgers[identity] { return ledger }
            let lease = try DatabaseFileLease(configuration: configuration)
            let names = Set(try syncedTypes.map { type throws(Database.Error) in try DatabaseFileLease.schemaName(of: type) })
            let session = try lease.store.makeSession()
            session.suspendsCommitParticipant = true
            let declared = try DatabaseFileLease.objectSchemas(of: syncedTypes)
            let missing = declared.filter { lease.store.schema[$0.name] == nil }
            if !missing.isEmpty { try session.addTables(missing) }
            let schema = try LedgerSchema(objectSchemas: lease.store.schema.objectSchemas, syncedNames: names)
            let clientID = try Self.clientID(in: session)
            let recorder = LedgerRecorder(schema: schema, clientID: clientID, wallClock: wallClock)
            let installed = lease.store.installCommitParticipant(recorder)
            let ledger = SyncLedger(lease: lease, schema: schema, clientID: clientID,
                                    recorder: (installed as? LedgerRecorder) ?? recorder, session: session)
            ledgers[identity] = ledger
            return ledger
        }
    }

    /// Lets the file go: the next `attach` opens it again. Local writes made while instances
    /// keep the file open still record (the participant stays with the open store, with the
    /// synced classes it was first attached with). Calls on a detached ledger throw.
    package func detach() {
        Self.attached.withLock { ledgers in
            if ledgers[lease.identity] === self { ledgers[lease.identity] = nil }
        }
        lock.withLock { _ in session.close() }
        lease.release()
    }

    /// The stored client id, made (random, non-zero) and stored on first use.
    private static func clientID(in session: StoreSession) throws -> UInt64 {
        _ = try session.refresh()
        if let id = try LedgerTrees(session: session).number(.clientID) { return id }
        try session.beginWrite()
        do {
            let trees = LedgerTrees(session: session)
            let id = try trees.number(.clientID) ?? UInt64.random(in: 1...UInt64.max)
            try trees.setNumber(id, .clientID)
            try session.commit()
            return id
        } catch {
            session.rollback()
            throw error
        }
    }

    static let systemMilliseconds: @Sendable () -> UInt64 = { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }

    // MARK: Reading and writing through the ledger's session

    private func read<R>(_ body: (LedgerTrees) throws -> R) throws -> R {
        try lock.withLock { _ in
            _ = try session.refresh()
            return try body(LedgerTrees(session: session))
        }
    }

    /// One write transaction of the ledger's session (not recorded: the participant is
    /// suspended for it).
    private func write<R>(_ body: (StoreSession) throws -> R) throws -> R {
        try lock.withLock { _ in
            try session.beginWrite()
            do {
                let result = try body(session)
                try session.commit()
                return result
            } catch {
                session.rollback()
                throw error
            }
        }
    }

    // MARK: The session's records

    /// The last server sequence applied (0: none).
    package func checkpoint() throws -> UInt64 { try read { try $0.number(.checkpoint) ?? 0 } }

    /// The client sequence of the newest recorded changeset (0: none).
    package func lastRecordedSequence() throws -> UInt64 { try read { try $0.number(.lastSequence) ?? 0 } }

    /// Outbox changesets after `clientSequence`, in order, at most `limit`.
    package func pendingChangesets(after clientSequence: UInt64, limit: Int) throws -> [ClientChangeset] {
        try read { try $0.outbox(after: clientSequence, limit: limit) }
    }

    /// Removes the changesets up to `clientSequence` from the outbox (the server holds them).
    package func acknowledge(through clientSequence: UInt64) throws {
        try write { session in try LedgerTrees(session: session).acknowledge(through: clientSequence) }
    }

    /// The stored subscriptions: the newest set asked for and the newest version completed.
    package func subscriptions() throws -> StoredSubscriptions { try read { try $0.subscriptions() } }

    /// Stores a new subscription set (its data arrives later; see `markSubscriptionsComplete`).
    package func setSubscriptions(version: UInt64, specs: [SubscriptionSpec]) throws {
        try write { try LedgerTrees(session: $0).setSubscriptions(version: version, specs: specs) }
    }

    /// Records that the data of subscription set `version` arrived (never moves backwards).
    package func markSubscriptionsComplete(version: UInt64) throws {
        try write { session in
            let trees = LedgerTrees(session: session)
            if version > (try trees.number(.subscriptionsCompleted) ?? 0) { try trees.setNumber(version, .subscriptionsCompleted) }
        }
    }

    /// Called after every local commit that recorded operations, on the committing thread
    /// (keep it cheap).
    package func setLocalChangeHandler(_ handler: (@Sendable () -> Void)?) { recorder.setHandler(handler) }

    /// The client id, what waits to upload, the last acknowledged sequence and the checkpoint.
    package func status() throws -> SyncStatusReport {
        try read { trees in try Self.status(trees, clientID: clientID) }
    }

    private static func status(_ trees: LedgerTrees, clientID: UInt64) throws -> SyncStatusReport {
        SyncStatusReport(clientID: clientID, pendingUploads: try trees.outboxCount(),
                         lastAcknowledged: try trees.number(.lastAcknowledged) ?? 0, checkpoint: try trees.number(.checkpoint) ?? 0)
    }

    /// Reads the status of a file without attaching (for `strata sync-status FILE`); nil if
    /// the file never synced.
    package static func status(ofFileAt url: URL) throws -> SyncStatusReport? {
        let configuration = Database.Configuration(fileURL: url, readOnly: true, objectTypes: [])
        if let ledger = attached.withLock({ $0[DatabaseFileLease.identity(of: configuration)] }) { return try ledger.status() }
        let lease = try DatabaseFileLease(configuration: configuration)
        defer { lease.release() }
        let session = try lease.store.makeSession()
        defer { session.close() }
        let trees = LedgerTrees(session: session)
        guard let clientID = try trees.number(.clientID) else { return nil }
        return try status(trees, clientID: clientID)
    }

    // MARK: Downloads

    /// Applies a download frame in one write transaction: merges each operation into its
    /// object's state, makes the objects equal to their states, and moves the checkpoint.
    /// Changesets at or before the checkpoint are skipped (a frame applied twice changes
    /// nothing); this client's own are skipped but still move the checkpoint. Not recorded.
    package func apply(changesets: [ServerChangeset], checkpoint: Checkpoint) throws {
        let clientID = self.clientID
        try write { session in
            let trees = LedgerTrees(session: session)
            let current = try trees.number(.checkpoint) ?? 0
            var clock = try trees.clock(clientID: clientID)
            var states: [ObjectRef: SyncObjectState] = [:]
            var order: [ObjectRef] = []
            for changeset in changesets.sorted(by: { $0.serverSequence < $1.serverSequence })
            where changeset.serverSequence > current && changeset.clientID != clientID {
                for operation in changeset.operations {
                    clock.observe(operation.timestamp)
                    guard ledgerSchema.synced[operation.object.className] != nil else {
                        throw SyncLedgerError.invalidOperation("an operation on '\(operation.object.className)', which this client does not sync")
                    }
                    var state = try states[operation.object] ?? trees.state(operation.object) ?? SyncObjectState(object: operation.object)
                    if states[operation.object] == nil { order.append(operation.object) }
                    state.apply(operation)
                    states[operation.object] = state
                }
            }
            try materialize(order.compactMap { states[$0] }, in: session)
            if checkpoint.sequence > current { try trees.setNumber(checkpoint.sequence, .checkpoint) }
            try trees.setClock(clock)
        }
    }

    /// Stores and materialises states, then the objects whose links waited for new ones.
    private func materialize(_ states: [SyncObjectState], in session: StoreSession) throws {
        let materializer = LedgerMaterializer(session: session, schema: ledgerSchema)
        var created: [ObjectRef] = []
        for state in states {
            try materializer.trees.putState(state)
            if try materializer.materialize(state) { created.append(state.object) }
        }
        try materializer.resolvePendingLinks(to: created)
    }

    /// Applies a snapshot in one write transaction. A bootstrap merges its states into the
    /// local ones; a reset (`isReset`) makes the synced data exactly its states, then applies
    /// every unacknowledged outbox operation again on top (the outbox stays, to be uploaded).
    package func apply(snapshot: SyncMessage.Snapshot) throws {
        let clientID = self.clientID
        try write { session in
            let trees = LedgerTrees(session: session)
            var clock = try trees.clock(clientID: clientID)
            var states: [ObjectRef: SyncObjectState] = [:]
            var order: [ObjectRef] = []
            func merge(_ operations: [SyncOperation]) throws {
                for operation in operations {
                    guard ledgerSchema.synced[operation.object.className] != nil else {
                        throw SyncLedgerError.invalidOperation("an operation on '\(operation.object.className)', which this client does not sync")
                    }
                    var state = states[operation.object] ?? SyncObjectState(object: operation.object)
                    if states[operation.object] == nil { order.append(operation.object) }
                    state.apply(operation)
                    states[operation.object] = state
                }
            }
            if snapshot.isReset {
                // Every local state goes (objects the snapshot lacks are deleted below).
                for state in try trees.allStates() {
                    states[state.object] = SyncObjectState(object: state.object)
                    order.append(state.object)
                }
            } else if try session.namedTreeCount(in: LedgerTrees.objects) > 0 {
                // (A file with no states yet, as at a first open, has none to merge with.)
                for incoming in snapshot.objects where states[incoming.object] == nil {
                    if let local = try trees.state(incoming.object) {
                        states[incoming.object] = local
                        order.append(incoming.object)
                    }
                }
            }
            for incoming in snapshot.objects {
                if !snapshot.isReset && states[incoming.object] == nil {
                    // Nothing local to merge with: the state is the server's as it stands
                    // (merging it into an empty state would give it back).
                    guard ledgerSchema.synced[incoming.object.className] != nil else {
                        throw SyncLedgerError.invalidOperation("an object of '\(incoming.object.className)', which this client does not sync")
                    }
                    clock.observe(incoming.latestTimestamp)
                    states[incoming.object] = incoming
                    order.append(incoming.object)
                    continue
                }
                let operations = SyncStateOperations.operations(rebuilding: incoming)
                for operation in operations { clock.observe(operation.timestamp) }
                try merge(operations)
            }
            if snapshot.isReset {
                let lastAcknowledged = try trees.number(.lastAcknowledged) ?? 0
                for changeset in try trees.outbox(after: lastAcknowledged, limit: .max) { try merge(changeset.operations) }
                try trees.removeAllStates()
            }
            try materialize(order.compactMap { states[$0] }, in: session)
            let checkpoint = try trees.number(.checkpoint) ?? 0
            if snapshot.isReset || snapshot.checkpoint.sequence > checkpoint {
                try trees.setNumber(snapshot.checkpoint.sequence, .checkpoint)
            }
            let completed = try trees.number(.subscriptionsCompleted) ?? 0
            if snapshot.isLast, snapshot.subscriptionVersion > completed {
                try trees.setNumber(snapshot.subscriptionVersion, .subscriptionsCompleted)
            }
            try trees.setClock(clock)
        }
    }
}
