// A session: one database instance's view of the file. It reads one version at a time (a
// pinned engine read transaction) and, while writing, holds the write transaction and the
// tables' uncommitted changes.

import StrataStorage
import Synchronization

/// One reader/writer of a store. Not thread-safe: the layer above confines it to one thread,
/// queue or actor.
public final class StoreSession {
    /// The store this session reads.
    public let store: Store
    private var read: ReadTransaction?
    // Unchecked exclusivity on the state every insert and update reads or bumps: a session
    // belongs to one owner at a time, and these are only ever read or assigned whole, never
    // held across a call (dynamic checks are per thread, so they never saw other threads).
    @exclusivity(unchecked) var write: WriteTransaction?
    /// Where `generation` lives: behind a pointer, so that object accessors can compare it
    /// without touching the session (StoreSession+UnsafeGeneration.swift says who owns it).
    package let generationPointer: UnsafeMutablePointer<UInt64> = StoreSession.allocateGeneration()
    /// Bumped whenever the engine transaction changes (tree handles are per transaction).
    @exclusivity(unchecked) private(set) var transactionSerial: UInt64 = 1
    /// Bumped by every change to objects in a write transaction, and whenever the version read
    /// changes. Cached query results check this, not `generation`: a value written in place
    /// changes what a query matches without moving any view.
    @exclusivity(unchecked) package private(set) var contentSerial: UInt64 = 1
    package private(set) var tables: [TableAccess] = []
    private var tableIndex: [String: Int] = [:]
    private var trees: [String: Tree?] = [:]
    /// This transaction's handles on the table-counter and change-log trees (looked up once
    /// per write transaction, without the String hash of `trees`), and the same trees as this
    /// session's last commit left them (see `TableAccess.carriedTrees`).
    @exclusivity(unchecked) private var tablesTreeHandle: (serial: UInt64, tree: Tree)?
    @exclusivity(unchecked) private var logTreeHandle: (serial: UInt64, tree: Tree)?
    @exclusivity(unchecked) private var carriedTablesTree: CommittedTree?
    @exclusivity(unchecked) private var carriedLogTree: CommittedTree?
    /// The change log's first key as this session's last commit left it, with the version
    /// that commit made: the next commit from that version prunes without a cursor.
    private var logFirst: (version: UInt64, first: UInt64)?
    var pendingSchema: Schema?
    /// Where a rollback goes back to while the write transaction holds chained writes
    /// (StoreSession+ChainedWrites.swift).
    var chainPoint: ChainPoint?
    /// Set between a chained commit and the next chained write.
    @exclusivity(unchecked) package internal(set) var isChainSuspended = false
    /// Commits of this session skip the store's commit participant (sync applying downloads).
    package var suspendsCommitParticipant = false
    /// The participant wrote into the open transaction and waits to hear it committed.
    var participantAwaitsCommit = false

    /// A session reading the newest version, or `read`'s version when given.
    init(store: Store, read given: ReadTransaction? = nil) throws(StoreError) {
        self.store = store
        for (position, object) in store.schema.objectSchemas.enumerated() {
            tables.append(TableAccess(session: self, position: position, schema: object))
            tableIndex[object.name] = position
        }
        if let given { read = given; return }
        do { read = try store.engine.beginRead() } catch { throw StoreError.wrap(error) }
    }

    /// A new session pinning the version this one reads (not its uncommitted changes), for a
    /// frozen snapshot. It never moves; close it (or let it go) to release the version.
    public func pinnedCopy() throws(StoreError) -> StoreSession {
        guard let read else { throw .transactionEnded }
        do {
            return try StoreSession(store: store, read: try store.engine.beginRead(sameVersionAs: read))
        } catch {
            throw StoreError.wrap(error)
        }
    }

    /// Writes a compacted copy of the version this session reads (not its uncommitted changes)
    /// to a new database file at `destination`.
    package func copyCompacted(to destination: String) throws(StoreError) {
        guard let read else { throw .transactionEnded }
        do { try store.engine.copyCompacted(from: read, to: destination) } catch { throw StoreError.wrap(error) }
    }

    /// The version this session's read transaction pins (during a write, the version the
    /// write started from), or nil once closed.
    public var pinnedVersion: UInt64? { read?.version }

    deinit {
        write?.rollback()
        read?.close()
        deallocateGeneration()
    }

    /// The table for the object type with this name.
    package func table(named name: String) -> TableAccess? { tableIndex[name].map { tables[$0] } }

    /// The table with this id (as a mixed value's link names it), or nil.
    package func table(id: UInt32) -> TableAccess? { tables.first { $0.tableID == id } }

    /// The version this session reads.
    public var version: UInt64 { write?.version ?? read?.version ?? 0 }

    /// The version the open write transaction will make when it commits; nil outside one.
    public var committingVersion: UInt64? { write?.committingVersion }

    /// Whether a write transaction is open for changes: false between a chained grouped
    /// commit and the next chained write (see StoreSession+ChainedWrites.swift), when the engine
    /// transaction stays open only to hold the committed writes.
    public var isInWriteTransaction: Bool { write != nil && !isChainSuspended }

    /// Whether reads go through an engine write transaction (one open for changes, or one
    /// holding chained writes).
    package var readsThroughWrite: Bool { write != nil }

    /// Whether the session has been closed.
    public var isClosed: Bool { read == nil && write == nil }

    var reading: any TransactionReading {
        if let write { return write }
        return read.unsafelyUnwrapped
    }

    /// `reading.withValue`, dispatched to the concrete transaction so the call and its closure
    /// are specialised (the primary-key lookup path).
    @inline(__always)
    func withValue<R>(forKey key: UnsafeRawBufferPointer, in tree: Tree, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        if let write { return try write.withValue(forKey: key, in: tree, body) }
        return try read.unsafelyUnwrapped.withValue(forKey: key, in: tree, body)
    }

    package func invalidateViews() { generation &+= 1 }

    /// Forgets cached tree handles (after trees were dropped or created behind the tables).
    func forgetTrees() {
        forgetTreeHandles()
        carriedTablesTree = nil
        carriedLogTree = nil
        for table in tables {
            table.reset()
            table.forgetCarried()
        }
        generation &+= 1
    }

    package func noteContentChange() { contentSerial &+= 1 }

    /// Forgets this transaction's tree handles (the cached ones and the two of the commit path).
    private func forgetTreeHandles() {
        trees.removeAll(keepingCapacity: true)
        tablesTreeHandle = nil
        logTreeHandle = nil
    }

    func transactionChanged() {
        generation &+= 1
        contentSerial &+= 1
        transactionSerial &+= 1
        forgetTreeHandles()
        for table in tables { table.reset() }
        syncTables(with: store.schema)
    }

    /// Rebuilds the table list from the store's schema (after a migration replaced it).
    func resetTables() {
        tables.removeAll()
        tableIndex.removeAll()
        forgetTreeHandles()
        generation &+= 1
        syncTables(with: store.schema)
    }

    /// Makes `tables` the session's tables (StoreSession+Evolution.swift chooses them).
    func replaceTables(_ tables: [TableAccess]) {
        self.tables = tables
        tableIndex = Dictionary(uniqueKeysWithValues: tables.enumerated().map { ($1.schema.name, $0) })
        forgetTreeHandles()
        generation &+= 1
    }

    /// Writes the tables' pending changes into the engine transaction and forgets them, so
    /// that what follows reads them from the transaction (migrations use this before they
    /// drop columns and rebuild indexes).
    func flushTables() throws {
        guard let write else { throw StoreError.transactionEnded }
        for table in tables {
            try table.flush(into: write)
            table.reset()
            table.forgetCarried()  // the transaction's counters and clusters now differ from them
        }
        forgetTreeHandles()
        generation &+= 1
    }

    /// Adds sessions' tables for types the store learned about.
    private func syncTables(with schema: Schema) {
        guard schema.objectSchemas.count > tables.count else { return }
        for object in schema.objectSchemas where tableIndex[object.name] == nil {
            tableIndex[object.name] = tables.count
            tables.append(TableAccess(session: self, position: tables.count, schema: object))
        }
    }

    /// Adds tables for new object types (in the current write transaction, or in one of their
    /// own when none is open). Types the file already has must match.
    public func addTables(_ objects: [ObjectSchema]) throws(StoreError) {
        let ownTransaction = write == nil
        if ownTransaction { try beginWrite() }
        do {
            let write = try writer()
            let (current, version) = try Store.readSchema(write)
            let base = pendingSchema ?? current ?? Schema([])
            guard let merged = try Store.reconcile(stored: base, requested: Schema(objects), exactOnly: false) else {
                throw try Store.mismatch(stored: base, requested: Schema(objects))
            }
            try merged.validate()
            try Store.writeSchema(merged, version: version, in: write)
            pendingSchema = merged
            forgetTreeHandles()
            syncTables(with: merged)
            if ownTransaction { try commit() }
        } catch {
            if ownTransaction { rollback() }
            throw StoreError.wrap(error)
        }
    }

    // MARK: Versions

    /// Moves to the newest version; returns whether the version changed.
    @discardableResult
    public func refresh() throws(StoreError) -> Bool {
        require(write == nil, "refresh() inside a write transaction")
        guard let current = read else { throw .transactionEnded }
        if store.engine.latestVersion == current.version { return false }
        do {
            let next = try store.engine.beginRead()
            current.close()
            read = next
        } catch {
            throw StoreError.wrap(error)
        }
        transactionChanged()
        return true
    }

    /// Releases the pinned version; the session can no longer read.
    public func close() {
        write?.rollback()
        write = nil
        chainPoint = nil
        isChainSuspended = false
        read?.close()
        read = nil
        transactionChanged()
    }

    /// Starts reading the newest version again after `close()`, with the same tables (their
    /// cached views are forgotten, as on any move).
    public func reopen() throws(StoreError) {
        require(read == nil && write == nil, "reopen() on a session that is still open")
        do { read = try store.engine.beginRead() } catch { throw StoreError.wrap(error) }
        transactionChanged()
    }

    // MARK: Writing

    /// Starts a write transaction on the newest version, blocking while another writer holds
    /// the lock.
    public func beginWrite() throws(StoreError) {
        require(write == nil, "a write transaction is already open")
        do {
            write = try store.engine.beginWrite()
        } catch {
            throw StoreError.wrap(error)
        }
        transactionChanged()
    }

    /// Starts a write transaction, suspending (not blocking a thread) while waiting for the lock.
    public func beginWrite(isolation: isolated (any Actor)? = #isolation) async throws(StoreError) {
        require(write == nil, "a write transaction is already open")
        do {
            write = try await store.engine.beginWrite()
        } catch {
            throw StoreError.wrap(error)
        }
        transactionChanged()
    }

    /// Makes `transaction` the session's write transaction: one this session's engine began
    /// elsewhere (an async write waits for the lock on a background task, then hands the
    /// transaction to the session's context).
    func adoptWrite(_ transaction: WriteTransaction) {
        require(write == nil, "a write transaction is already open")
        write = transaction
        transactionChanged()
    }

    func requireWrite() throws(StoreError) {
        guard write != nil, !isChainSuspended else {
            fatalError("Cannot modify objects outside a write transaction: call write { } or beginWrite() first.")
        }
    }

    func writer() throws(StoreError) -> WriteTransaction {
        guard let write, !isChainSuspended else { throw .transactionEnded }
        return write
    }

    /// The change-log entry (`ChangeSet.encoded()`) of a transaction whose only changes are
    /// objects inserted into one table (none of them deleted again), written straight from
    /// the table's tracker; nil for any other transaction.
    func insertsOnlyLogEntry() -> [UInt8]? {
        var only: TableAccess?
        for table in tables where !table.changes.isEmpty {
            guard only == nil else { return nil }
            only = table
        }
        guard let table = only, let first = table.changes.insertedRange else { return nil }
        return ChangeSet.insertsOnlyEntry(table: table.tableID, first: first.lowerBound, count: first.count)
    }

    /// The changes made so far in this write transaction.
    public func pendingChanges() -> ChangeSet {
        var set = ChangeSet(version: (write?.committingVersion) ?? version)
        for table in tables where !table.changes.isEmpty { set.tables[table.tableID] = table.changes.changes() }
        return set
    }

    /// Commits the write transaction and moves the session to the version it made.
    @discardableResult
    public func commit() throws(StoreError) -> ChangeSet {
        guard write != nil else { throw .transactionEnded }
        try deleteUnparentedEmbedded()
        try runCommitParticipant()
        let changes = pendingChanges()
        try commit(reporting: changes)
        return changes
    }

    /// Commits the write transaction and moves the session to the version it made; returns
    /// what it changed only when `reportingChanges` (otherwise the change-log entry of a
    /// commit that only inserted into one table is encoded without building the change set).
    @discardableResult
    package func commit(reportingChanges: Bool) throws(StoreError) -> ChangeSet? {
        guard write != nil else { throw .transactionEnded }
        try deleteUnparentedEmbedded()
        try runCommitParticipant()
        let changes = reportingChanges ? pendingChanges() : nil
        try commit(reporting: changes)
        return changes
    }

    /// The commit, with the change set when the caller built it.
    private func commit(reporting changes: ChangeSet?) throws(StoreError) {
        guard let write else { throw .transactionEnded }
        require(!isChainSuspended, "commit() between chained writes")
        chainPoint = nil
        let first: UInt64?
        do {
            for table in tables { try table.flush(into: write) }
            if let changes {
                first = try appendLog(changes.encoded(), in: write)
            } else {
                first = try appendLog(insertsOnlyLogEntry() ?? pendingChanges().encoded(), in: write)
            }
            write.readsAfterCommit = true
            try write.commit()
        } catch {
            participantAwaitsCommit = false
            logFirst = nil
            carriedTablesTree = nil
            carriedLogTree = nil
            self.write = nil
            write.rollback()
            for table in tables { table.rollBack() }
            dropPendingTables()
            transactionChanged()
            _ = try? refreshAfterWrite()
            throw StoreError.wrap(error)
        }
        self.write = nil
        logFirst = first.map { (write.committingVersion, $0) }
        carriedTablesTree = currentHandle(tablesTreeHandle).flatMap { write.committedTree($0) }
        carriedLogTree = currentHandle(logTreeHandle).flatMap { write.committedTree($0) }
        for table in tables { table.carryOver(committed: write) }
        if let pendingSchema { store.publish(pendingSchema) }
        pendingSchema = nil
        transactionChanged()
        notifyCommitParticipant()
        // The version the commit made, read from a transaction the commit opened while the
        // disk wrote its record; without one, the newest version.
        if let next = write.takeReadAfterCommit() {
            read?.close()
            read = next
        } else {
            try refreshAfterWrite()
        }
    }

    /// Prepares the write transaction's commit and detaches it from the session, so that the
    /// commit's I/O can run on another thread (`PendingCommit.perform()`) while the session
    /// keeps reading the version it started from. Call `finishCommit(_:)` afterwards, back in
    /// the session's context.
    public func prepareCommit() throws(StoreError) -> PendingCommit {
        guard let write else { throw .transactionEnded }
        require(!isChainSuspended, "prepareCommit() between chained writes")
        try deleteUnparentedEmbedded()
        try runCommitParticipant()
        let changes = pendingChanges()
        logFirst = nil
        do {
            for table in tables { try table.flush(into: write) }
            _ = try appendLog(changes.encoded(), in: write)
        } catch {
            rollbackAll()
            throw StoreError.wrap(error)
        }
        chainPoint = nil
        self.write = nil
        let pending = PendingCommit(write: write, changes: changes, schema: pendingSchema, engine: store.engine)
        pendingSchema = nil
        transactionChanged()
        return pending
    }

    /// Moves the session to the version a pending commit made (or, if it failed, forgets the
    /// types it would have added).
    /// `succeeded` is what `perform()` reported (passed in rather than read from `pending`,
    /// which another thread wrote).
    public func finishCommit(_ pending: PendingCommit, succeeded: Bool) throws(StoreError) {
        // Acquires what `perform()` released on its thread, so everything it did (and the
        // transaction it dropped) happens before what follows here.
        require(pending.isFinished, "finishCommit(_:succeeded:) called before the pending commit was performed")
        if succeeded, let schema = pending.schema { store.publish(schema) }
        if succeeded { notifyCommitParticipant() } else { participantAwaitsCommit = false }
        if !succeeded {
            let known = Set(store.schema.objectSchemas.map(\.name))
            tables.removeAll { !known.contains($0.schema.name) }
            tableIndex = Dictionary(uniqueKeysWithValues: tables.enumerated().map { ($1.schema.name, $0) })
        }
        // A write the caller started meanwhile keeps its state; otherwise views move on.
        try refreshAfterWrite()
        if write == nil { transactionChanged() }
    }

    /// Discards the write transaction's changes: all of them, or, while it holds chained
    /// writes (StoreSession+ChainedWrites.swift), those made since the last chained commit, which stay.
    public func rollback() {
        guard let write else { return }
        if let chainPoint {
            rollBack(to: chainPoint, in: write)
            return
        }
        rollbackAll()
    }

    /// Discards the write transaction, chained writes included.
    package func rollbackAll() {
        guard let write else { return }
        chainPoint = nil
        isChainSuspended = false
        participantAwaitsCommit = false
        self.write = nil
        write.rollback()
        for table in tables { table.rollBack() }
        dropPendingTables()
        transactionChanged()
    }

    /// Forgets the tables of the types the transaction that just ended without committing
    /// added. Objects made in that transaction still point at them, so they are marked dropped
    /// rather than just removed: they must find nothing, and take no writes that no commit
    /// would flush.
    func dropPendingTables() {
        guard pendingSchema != nil else { return }
        pendingSchema = nil
        let known = Set(store.schema.objectSchemas.map(\.name))
        for table in tables where !known.contains(table.schema.name) { table.drop() }
        tables.removeAll { !known.contains($0.schema.name) }
        tableIndex = Dictionary(uniqueKeysWithValues: tables.enumerated().map { ($1.schema.name, $0) })
    }

    private func refreshAfterWrite() throws(StoreError) {
        do {
            let next = try store.engine.beginRead()
            read?.close()
            read = next
        } catch {
            throw StoreError.wrap(error)
        }
    }

    /// Deletes objects of `table` and clears links to them from every table; the embedded
    /// objects they hold are deleted with them.
    package func delete(_ keys: [ObjectKey], from table: TableAccess) throws(StoreError) {
        let children = try table.embeddedChildren(of: keys)
        try table.delete(keys)
        let deleted = Set(keys.map(\.rawValue))
        do {
            for other in tables { try other.clearLinks(to: table.schema.name, table: table.tableID, deleted: deleted) }
        } catch {
            throw StoreError.wrap(error)
        }
        for (embedded, keys) in children where !keys.isEmpty { try delete(keys, from: embedded) }
    }

    // MARK: Embedded objects

    /// Embedded objects made in this write transaction that no link or list holds yet, by
    /// table id: the next link to one of them makes it that object's; a commit deletes those
    /// still without a parent.
    private var unparentedEmbedded: [UInt32: Set<Int64>] = [:]
    /// The write transaction `unparentedEmbedded` belongs to (entries of an earlier one, rolled
    /// back or committed, are void).
    private var unparentedTransaction: ObjectIdentifier?

    /// `unparentedEmbedded`, emptied first if it belongs to an earlier transaction.
    private func currentUnparented() {
        let current = write.map(ObjectIdentifier.init)
        if unparentedTransaction != current {
            unparentedEmbedded.removeAll()
            unparentedTransaction = current
        }
    }

    /// Records a new embedded object, which has no parent yet.
    func noteNewEmbedded(_ key: ObjectKey, in table: TableAccess) {
        currentUnparented()
        unparentedEmbedded[table.tableID, default: []].insert(key.rawValue)
    }

    /// Makes the embedded object `key` of `table` the child of the link being written: it
    /// must be new in this transaction and without a parent.
    func adoptEmbedded(_ key: ObjectKey, in table: TableAccess, by owner: TableAccess, property: Int) throws(StoreError) {
        currentUnparented()
        guard unparentedEmbedded[table.tableID]?.remove(key.rawValue) != nil else {
            throw .invalidValue(type: owner.schema.name, property: owner.schema.properties[property].name,
                                reason: "'\(table.schema.name)' objects are embedded, and this one already belongs to an object; an embedded object has one parent. Assign a new (unmanaged) object, e.g. a copy made with \(table.schema.name)(value:)")
        }
    }

    /// Deletes the embedded objects made in this transaction that nothing holds.
    func deleteUnparentedEmbedded() throws(StoreError) {
        currentUnparented()
        let orphans = unparentedEmbedded
        unparentedEmbedded.removeAll()
        for (tableID, keys) in orphans where !keys.isEmpty {
            guard let table = tables.first(where: { $0.tableID == tableID }) else { continue }
            try delete(keys.sorted().map(ObjectKey.init), from: table)
        }
    }

    /// Deletes every object of `table`.
    package func deleteAll(in table: TableAccess) throws(StoreError) {
        do { try delete(try table.allKeys(), from: table) } catch { throw StoreError.wrap(error) }
    }

    // MARK: Trees

    func tree(_ name: String) throws(StoreError) -> Tree? {
        if let cached = trees[name] { return cached }
        do {
            let tree = try reading.tree(named: name)
            trees[name] = tree
            return tree
        } catch {
            throw StoreError.wrap(error)
        }
    }

    func createTree(_ name: String) throws(StoreError) -> Tree {
        if let cached = trees[name], let cached { return cached }
        do {
            let tree = try writer().createTree(named: name)
            trees[name] = tree
            return tree
        } catch {
            throw StoreError.wrap(error)
        }
    }

    /// The tree `name` of this transaction, not through `trees`: the carried-over handle when
    /// the engine takes it (this write transaction starts from the version the commit that
    /// left it made), else a look-up by name.
    /// `carried` tells whether the carried-over handle was taken.
    func lookUpTree(_ name: String, carried: CommittedTree?) throws(StoreError) -> (tree: Tree?, carried: Bool) {
        do {
            if let carried, let write, let tree = try write.tree(committed: carried) { return (tree, true) }
            return (try reading.tree(named: name), false)
        } catch {
            throw StoreError.wrap(error)
        }
    }

    /// The handle if it was made in this transaction.
    private func currentHandle(_ handle: (serial: UInt64, tree: Tree)?) -> Tree? {
        guard let handle, handle.serial == transactionSerial else { return nil }
        return handle.tree
    }

    /// The write transaction's tree `name` (created if missing), kept in `handle` for the
    /// transaction, from the carried-over `carried` when the engine takes it.
    private func writableTree(_ name: String, handle: inout (serial: UInt64, tree: Tree)?, carried: CommittedTree?,
                              in write: WriteTransaction) throws -> Tree {
        if let tree = currentHandle(handle) { return tree }
        let tree: Tree
        if let carried, let known = try write.tree(committed: carried) { tree = known } else { tree = try write.createTree(named: name) }
        handle = (transactionSerial, tree)
        return tree
    }

    func tableMeta(_ id: UInt32) throws(StoreError) -> (nextKey: Int64, count: Int) {
        guard let tree = try tree(Store.tablesTree) else { return (0, 0) }
        do {
            guard let bytes = try reading.value(forKey: TreeKey.u64(UInt64(id)), in: tree) else { return (0, 0) }
            guard bytes.count == 16 else { throw StoreError.corrupted("a table's counters are damaged") }
            let (next, count) = bytes.withUnsafeBytes { (Int64(bitPattern: TreeKey.readU64($0)), TreeKey.readU64($0, at: 8)) }
            // Keys are handed out from 0 and never reused, so there are never more objects than
            // keys handed out; the last key (Int64.max) is never handed out, so `nextKey + 1`
            // cannot overflow.
            guard next >= 0, next < Int64.max, count <= UInt64(next) else {
                throw StoreError.corrupted("a table's counters are damaged (next object key \(next), \(count) objects)")
            }
            return (next, Int(count))
        } catch {
            throw StoreError.wrap(error)
        }
    }

    func storeTableMeta(_ id: UInt32, nextKey: Int64, count: Int, in write: WriteTransaction) throws {
        let tree = try writableTree(Store.tablesTree, handle: &tablesTreeHandle, carried: carriedTablesTree, in: write)
        // Both on the stack: big-endian words, as `TreeKey.u64` writes them.
        var value = (UInt64(bitPattern: nextKey).bigEndian, UInt64(count).bigEndian)
        try withUnsafeBytes(of: &value) { value in
            try TreeKey.withU64(UInt64(id)) { try write.put(value, forKey: $0, in: tree) }
        }
    }

    // MARK: The change log

    /// How many of the newest change-log entries a commit keeps at most, whatever readers pin.
    /// The log is live data of every version, not something a snapshot can reach: kept back to
    /// an old snapshot's version, it would grow by one entry per commit for as long as the
    /// snapshot is held (a frozen `Results`, another instance or another process), and promise 4
    /// (a snapshot pins only what it can reach) would not hold. An observer more commits behind
    /// than this finds the log gone (`changes(since:)` is nil) and reports conservatively.
    static let changeLogLength: UInt64 = 1024

    /// Appends the commit's change-log entry and prunes the entries no reader can ask for, and
    /// those more than `changeLogLength` commits old. Returns the log's first key afterwards
    /// when known (for `logFirst`).
    private func appendLog(_ entry: [UInt8], in write: WriteTransaction) throws -> UInt64? {
        let tree = try writableTree(Store.logTree, handle: &logTreeHandle, carried: carriedLogTree, in: write)
        var first: UInt64?
        // Keep entries newer than the oldest pinned version (older ones no reader can ask
        // for), and no more than `changeLogLength` of them.
        var oldest = store.engine.oldestPinnedVersion
        if write.committingVersion > Self.changeLogLength {
            let horizon = write.committingVersion - Self.changeLogLength
            if oldest.map({ $0 < horizon }) ?? true { oldest = horizon }
        }
        if let oldest {
            if let known = logFirst, known.version == write.version, oldest < known.first || oldest - known.first < 64 {
                // The log is as this session's last commit left it, and its first key is
                // known: delete the few stale keys by name, without a cursor (a key missing in
                // between deletes nothing).
                if oldest >= known.first {
                    for version in known.first...oldest { _ = try TreeKey.withU64(version) { try write.delete(forKey: $0, in: tree) } }
                }
                first = max(known.first, oldest + 1)
            } else {
                var stale: [[UInt8]] = []
                var kept: UInt64?
                try write.forEach(in: tree) { key, _ in
                    let version = TreeKey.readU64(key)
                    guard version <= oldest else {
                        kept = version
                        return false
                    }
                    stale.append(Array(key))
                    return true
                }
                for key in stale { _ = try write.delete(forKey: key, in: tree) }
                first = kept ?? write.committingVersion
            }
        }
        // Every commit has an entry (empty ones too), so a gap means the log was pruned.
        try entry.withUnsafeBytes { entry in try TreeKey.withU64(write.committingVersion) { try write.put(entry, forKey: $0, in: tree) } }
        return first.map { min($0, write.committingVersion) }
    }

    /// The merged changes of the commits after `version` up to this session's version; nil
    /// when the log no longer reaches back that far.
    public func changes(since version: UInt64) throws(StoreError) -> ChangeSet? {
        var merged = ChangeSet(version: self.version)
        guard version < self.version else { return merged }
        guard let tree = try tree(Store.logTree) else { return nil }
        do {
            var expected = version + 1
            var complete = true
            try reading.forEach(in: tree, from: TreeKey.u64(version + 1), to: TreeKey.u64(self.version)) { key, value in
                let v = TreeKey.readU64(key)
                guard v == expected else { complete = false; return false }
                expected += 1
                merged.merge(try ChangeSet.decode(value, version: v))
                return true
            }
            guard complete && expected == self.version + 1 else { return nil }
        } catch {
            throw StoreError.wrap(error)
        }
        return merged
    }
}
