// A session: one database instance's view of the file. It reads one version at a time (a
// pinned engine read transaction) and, while writing, holds the write transaction and the
// tables' uncommitted changes.

import StrataStorage

/// One reader/writer of a store. Not thread-safe: the layer above confines it to one thread,
/// queue or actor.
public final class StoreSession {
    /// The store this session reads.
    public let store: Store
    private var read: ReadTransaction?
    private var write: WriteTransaction?
    /// Bumped whenever views handed out earlier (clusters, chunks) may be stale.
    package private(set) var generation: UInt64 = 1
    /// Bumped whenever the engine transaction changes (tree handles are per transaction).
    private(set) var transactionSerial: UInt64 = 1
    /// Bumped by every change to objects in a write transaction, and whenever the version read
    /// changes. Cached query results check this, not `generation`: a value written in place
    /// changes what a query matches without moving any view.
    package private(set) var contentSerial: UInt64 = 1
    package private(set) var tables: [TableAccess] = []
    private var tableIndex: [String: Int] = [:]
    private var trees: [String: Tree?] = [:]
    private var pendingSchema: Schema?

    init(store: Store) throws(StoreError) {
        self.store = store
        for (position, object) in store.schema.objectSchemas.enumerated() {
            tables.append(TableAccess(session: self, position: position, schema: object))
            tableIndex[object.name] = position
        }
        do { read = try store.engine.beginRead() } catch { throw StoreError.wrap(error) }
    }

    deinit {
        write?.rollback()
        read?.close()
    }

    /// The table for the object type with this name.
    package func table(named name: String) -> TableAccess? { tableIndex[name].map { tables[$0] } }

    /// The version this session reads.
    public var version: UInt64 { write?.version ?? read?.version ?? 0 }

    /// Whether a write transaction is open.
    public var isInWriteTransaction: Bool { write != nil }

    /// Whether the session has been closed.
    public var isClosed: Bool { read == nil && write == nil }

    var reading: any TransactionReading {
        if let write { return write }
        return read.unsafelyUnwrapped
    }

    package func invalidateViews() { generation &+= 1 }

    package func noteContentChange() { contentSerial &+= 1 }

    private func transactionChanged() {
        generation &+= 1
        contentSerial &+= 1
        transactionSerial &+= 1
        trees.removeAll(keepingCapacity: true)
        for table in tables { table.reset() }
        syncTables(with: store.schema)
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
            trees.removeAll(keepingCapacity: true)
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
        precondition(write == nil, "refresh() inside a write transaction")
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
        read?.close()
        read = nil
        transactionChanged()
    }

    // MARK: Writing

    /// Starts a write transaction on the newest version, blocking while another writer holds
    /// the lock.
    public func beginWrite() throws(StoreError) {
        precondition(write == nil, "a write transaction is already open")
        do {
            write = try store.engine.beginWrite()
        } catch {
            throw StoreError.wrap(error)
        }
        transactionChanged()
    }

    /// Starts a write transaction, suspending (not blocking a thread) while waiting for the lock.
    public func beginWrite(isolation: isolated (any Actor)? = #isolation) async throws(StoreError) {
        precondition(write == nil, "a write transaction is already open")
        do {
            write = try await store.engine.beginWrite()
        } catch {
            throw StoreError.wrap(error)
        }
        transactionChanged()
    }

    func requireWrite() throws(StoreError) {
        guard write != nil else {
            preconditionFailure("Cannot modify objects outside a write transaction: call write { } or beginWrite() first.")
        }
    }

    func writer() throws(StoreError) -> WriteTransaction {
        guard let write else { throw .transactionEnded }
        return write
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
        guard let write else { throw .transactionEnded }
        let changes = pendingChanges()
        do {
            for table in tables { try table.flush(into: write) }
            try appendLog(changes, in: write)
            try write.commit()
        } catch {
            self.write = nil
            write.rollback()
            for table in tables { table.rollBack() }
            dropPendingTables()
            transactionChanged()
            _ = try? refreshAfterWrite()
            throw StoreError.wrap(error)
        }
        self.write = nil
        if let pendingSchema { store.publish(pendingSchema) }
        pendingSchema = nil
        transactionChanged()
        try refreshAfterWrite()
        return changes
    }

    /// Discards the write transaction.
    public func rollback() {
        guard let write else { return }
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
    private func dropPendingTables() {
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

    /// Deletes objects of `table` and clears links to them from every table.
    package func delete(_ keys: [ObjectKey], from table: TableAccess) throws(StoreError) {
        try table.delete(keys)
        let deleted = Set(keys.map(\.rawValue))
        do {
            for other in tables { try other.clearLinks(to: table.schema.name, deleted: deleted) }
        } catch {
            throw StoreError.wrap(error)
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

    func tableMeta(_ id: UInt32) throws(StoreError) -> (nextKey: Int64, count: Int) {
        guard let tree = try tree(Store.tablesTree) else { return (0, 0) }
        do {
            guard let bytes = try reading.value(forKey: TreeKey.u64(UInt64(id)), in: tree) else { return (0, 0) }
            guard bytes.count == 16 else { throw StoreError.corrupted("a table's counters are damaged") }
            return bytes.withUnsafeBytes { (Int64(bitPattern: TreeKey.readU64($0)), Int(TreeKey.readU64($0, at: 8))) }
        } catch {
            throw StoreError.wrap(error)
        }
    }

    func storeTableMeta(_ id: UInt32, nextKey: Int64, count: Int, in write: WriteTransaction) throws {
        let tree = try write.createTree(named: Store.tablesTree)
        try write.put(TreeKey.u64(UInt64(bitPattern: nextKey)) + TreeKey.u64(UInt64(count)), forKey: TreeKey.u64(UInt64(id)), in: tree)
    }

    // MARK: The change log

    private func appendLog(_ changes: ChangeSet, in write: WriteTransaction) throws {
        let tree = try write.createTree(named: Store.logTree)
        // Keep entries newer than the oldest pinned version; older ones no reader can ask for.
        if let oldest = store.engine.oldestPinnedVersion {
            var stale: [[UInt8]] = []
            try write.forEach(in: tree) { key, _ in
                guard TreeKey.readU64(key) <= oldest else { return false }
                stale.append(Array(key))
                return true
            }
            for key in stale { _ = try write.delete(forKey: key, in: tree) }
        }
        if !changes.isEmpty {
            try write.put(changes.encoded(), forKey: TreeKey.u64(write.committingVersion), in: tree)
        }
    }

    /// The merged changes of the commits after `version` up to this session's version; nil
    /// when the log no longer reaches back that far.
    public func changes(since version: UInt64) throws(StoreError) -> ChangeSet? {
        var merged = ChangeSet(version: self.version)
        guard version < self.version else { return merged }
        guard let tree = try tree(Store.logTree) else { return nil }
        do {
            var reached = false
            try reading.forEach(in: tree, from: TreeKey.u64(version + 1), to: TreeKey.u64(self.version)) { key, value in
                let v = TreeKey.readU64(key)
                reached = true
                merged.merge(try ChangeSet.decode(value, version: v))
                return true
            }
            _ = reached
        } catch {
            throw StoreError.wrap(error)
        }
        return merged
    }
}
