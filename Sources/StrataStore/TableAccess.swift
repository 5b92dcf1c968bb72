// One table as seen by one session: locating objects, reading their columns, and — inside a
// write transaction — inserting, updating and deleting them, with the primary-key and
// secondary indexes kept in step and every change recorded for the change log.

import StrataStorage

package final class TableAccess {
    unowned(unsafe) let session: StoreSession
    /// The table's position in the session's schema.
    package let position: Int
    package let schema: ObjectSchema
    package let tableID: UInt32
    let columnIDs: [UInt16]
    package let primaryKeyIndex: Int?
    /// The primary key's kind (read by every lookup, without going through the schema's arrays).
    package let primaryKeyKind: PropertyKind?
    let indexedProperties: [Int]
    let clusterTreeName: String
    let primaryKeyTreeName: String
    let listTreeName: String
    let indexTreeNames: [Int: String]
    /// Indices of the properties stored in clusters (all but lists), and their kinds.
    let scalarProperties: [Int]
    let kinds: [PropertyKind]
    let optionals: [Bool]
    /// Indices of the link properties that are not lists (their null is a -1 key).
    let linkProperties: [Int]

    // Per transaction. A table access belongs to one session, used by one owner at a time (a
    // frozen instance reads under its lock), and no method holds an access to one of these
    // across a call that reaches the same property, so the state every insert and lookup
    // touches skips dynamic exclusivity checks (`swift_beginAccess` was ~3 % of a bulk insert,
    // and cost more than the rest of a cache hit in a lookup).
    @exclusivity(unchecked) private var treeSerial: UInt64 = .max
    @exclusivity(unchecked) private var clusterTree: Tree?
    @exclusivity(unchecked) private var metaLoaded = false
    @exclusivity(unchecked) private var cache: ClusterView?
    /// Cluster views of this generation, sorted by first key, so that repeated random lookups
    /// skip parsing a cluster's chunks again and, outside write transactions, skip the
    /// cluster tree's descent when a cached cluster holds the key.
    @exclusivity(unchecked) private var viewCache = ClusterViewCache()
    @exclusivity(unchecked) private var viewCacheGeneration: UInt64 = 0

    // Write state.
    @exclusivity(unchecked) var dirty: [Int64: DirtyCluster] = [:]
    /// First keys of clusters created by this transaction, ascending (all above the snapshot's).
    @exclusivity(unchecked) var newClusters: [Int64] = []
    /// The cluster of `newClusters.last` (inserts go there while it has room; saves hashing).
    @exclusivity(unchecked) private var lastNewCluster: DirtyCluster?
    /// The dirty cluster the last look-up in a write transaction found by descending the
    /// cluster tree: the next key in its range is found there without a descent.
    @exclusivity(unchecked) private var lastLocatedDirty: DirtyCluster?
    @exclusivity(unchecked) var nextKey: Int64 = 0
    @exclusivity(unchecked) private(set) var storedCount = 0
    /// The first key of the cluster tree's last cluster in this transaction's snapshot, once
    /// an insert looked for it (saves a descent per insert that finds no new cluster).
    @exclusivity(unchecked) private var snapshotLastCluster: Int64?
    /// What this session's last commit left of the table (`carryOver(committed:)`), for the
    /// next write transaction if it starts from the version that commit made.
    @exclusivity(unchecked) private var carried: Carried?
    /// The cluster and primary-key trees as this session's last commit left them, for the next
    /// write transaction: the engine takes them only if it starts from the version that commit
    /// made (`WriteTransaction.tree(committed:)`), and the trees are looked up by name otherwise.
    @exclusivity(unchecked) private var carriedTrees: (cluster: CommittedTree?, primaryKey: CommittedTree?) = (nil, nil)
    @exclusivity(unchecked) var changes = ChangeTracker()
    var dirtyLists: [ListID: [StoreValue]] = [:]
    /// The members of sets (`isSet` lists) that `insertIntoSet` changed in place, kept beside
    /// their `dirtyLists` entry so that each insert tests membership by hash. Every other
    /// change to a list drops its entry here.
    private var setMembers: [ListID: Set<StoreValueIdentity>] = [:]
    /// Moves with every insert and every write to a link (`noteChange`), and with every new
    /// transaction or return to a savepoint (`reset`, `restoreWriteState`): the changes that can
    /// make `linkHolders` miss a holder. (Deletes only leave holders that no longer exist.)
    private var tableSerial: UInt64 = 1
    /// For deleting objects one at a time: per link property (to-one or list or map) whose
    /// target is a top-level type, the objects of this table holding each target key, as of
    /// `linkHoldersSerial`. Built by one scan at the first single delete that needs it, kept
    /// up to date by `clearLinks` itself, and valid until `tableSerial` moves.
    private var linkHolders: [Int: [Int64: [ObjectKey]]] = [:]
    private var linkHoldersSerial: UInt64 = 0
    /// How often this transaction built `linkHolders` and used them without building: when
    /// the table's links change between single deletes, a build per delete would cost more
    /// than the scan it saves, so after two builds that were not used the scan goes on.
    private var linkHolderBuilds = 0
    private var linkHolderUses = 0
    private var encodeScratch: [UInt8] = []
    /// Set when the transaction that added this table was rolled back (see
    /// `StoreSession.dropPendingTables`): it holds no objects and takes no changes.
    /// Read through `isDropped`: another module reading a stored property accesses it with
    /// a dynamic exclusivity check whatever this declaration says (measured in the object
    /// layer's context lookup), while the getter's own access stays unchecked.
    @exclusivity(unchecked) private var dropped = false
    /// For a non-optional Int primary key: the guess of an object's key from its primary key
    /// (`locate(primaryKey:)`).
    @exclusivity(unchecked) private var keyGuess = PrimaryKeyGuess()
    /// How many write transactions took the last cluster the previous commit carried over
    /// (for tests).
    package private(set) var carriedClustersTaken = 0
    /// How many write transactions took the cluster tree the previous commit carried over
    /// (for tests).
    package private(set) var carriedTreesTaken = 0
    /// How many Int primary-key lookups the guess answered (for tests).
    package var primaryKeyGuessHits: Int { keyGuess.hits }
    package var isDropped: Bool { dropped }

    /// The table as a commit of this session wrote it: its counters and (when the commit
    /// inserted into it) its last cluster, whose buffers hold exactly the encoded chunks.
    private struct Carried {
        /// The version the commit made.
        let version: UInt64
        let nextKey: Int64
        let storedCount: Int
        /// The cluster tree's last cluster; nil once a transaction took it.
        var lastCluster: DirtyCluster?
    }

    struct ListID: Hashable {
        let property: Int
        let key: Int64
        /// The keys of a map property (its values are the entry without the flag).
        var isMapKeys = false
    }

    init(session: StoreSession, position: Int, schema: ObjectSchema) {
        self.session = session
        self.position = position
        self.schema = schema
        self.tableID = schema.tableID
        self.columnIDs = schema.properties.map(\.columnID)
        self.primaryKeyIndex = schema.primaryKeyIndex
        self.primaryKeyKind = schema.primaryKeyIndex.map { schema.properties[$0].kind }
        self.indexedProperties = schema.properties.indices.filter { schema.properties[$0].isIndexed && !schema.properties[$0].isPrimaryKey }
        clusterTreeName = "t\(schema.tableID).c"
        primaryKeyTreeName = "t\(schema.tableID).pk"
        listTreeName = "t\(schema.tableID).l"
        var names: [Int: String] = [:]
        for index in indexedProperties { names[index] = "t\(schema.tableID).i\(schema.properties[index].columnID)" }
        indexTreeNames = names
        scalarProperties = schema.properties.indices.filter { !schema.properties[$0].isList }
        kinds = schema.properties.map(\.kind)
        optionals = schema.properties.map { $0.isOptional || $0.kind == .link }
        linkProperties = schema.properties.indices.filter { schema.properties[$0].kind == .link && !schema.properties[$0].isList }
    }

    // MARK: Per-transaction state

    /// Forgets everything tied to the previous transaction.
    func reset() {
        treeSerial = .max
        clusterTree = nil
        primaryKeyTree = nil
        lookupCursor = nil
        metaLoaded = false
        cache = nil
        viewCache.removeAll(keepingCapacity: false)
        // A few clusters' worth of table is kept: a one-object commit would grow it again.
        dirty.removeAll(keepingCapacity: dirty.count <= 8)
        newClusters.removeAll()
        lastNewCluster = nil
        lastLocatedDirty = nil
        snapshotLastCluster = nil
        changes = ChangeTracker()
        dirtyLists.removeAll()
        setMembers.removeAll()
        dropLinkHolders()
    }

    func drop() {
        reset()
        carried = nil
        carriedTrees = (nil, nil)
        dropped = true
    }

    /// Forgets what the last commit carried over (the trees changed behind the table).
    func forgetCarried() {
        carried = nil
        carriedTrees = (nil, nil)
    }

    /// Called once the write transaction committed as `version`, before `reset`: keeps the
    /// table's counters and its last cluster for the next write transaction, which uses them
    /// only if it starts from `version` (then they are exactly what the file holds), so that a
    /// one-object commit neither reads the counters nor decodes the last cluster's chunks
    /// again. The cluster is kept only when it is complete, not shared with a savepoint, and
    /// this transaction knew it to be the tree's last.
    func carryOver(committed write: WriteTransaction) {
        let version = write.committingVersion
        if treeSerial == session.transactionSerial, !dropped {
            carriedTrees = (clusterTree.flatMap { write.committedTree($0) }, primaryKeyTree.flatMap { write.committedTree($0) })
        } else {
            carriedTrees = (nil, nil)
        }
        guard metaLoaded, !dropped else {
            carried = nil
            return
        }
        var last: DirtyCluster?
        if let first = newClusters.last ?? snapshotLastCluster, let cluster = dirty[first],
           cluster.complete, !cluster.frozen, cluster.keys.count > 0 {
            cluster.existsInSnapshot = true
            last = cluster
        }
        carried = Carried(version: version, nextKey: nextKey, storedCount: storedCount, lastCluster: last)
    }

    /// The carried-over state, if this write transaction starts from the version it was kept
    /// for.
    @inline(__always)
    private var carriedForThisWrite: Carried? {
        guard let carried, let write = session.write, carried.version == write.version else { return nil }
        return carried
    }

    /// A write transaction's state of this table, to come back to (ChainedWrites.swift).
    struct WriteState {
        fileprivate let dirty: [Int64: DirtyCluster]
        fileprivate let newClusters: [Int64]
        fileprivate let nextKey: Int64
        fileprivate let storedCount: Int
        fileprivate let metaLoaded: Bool
        fileprivate let changes: ChangeTracker
        fileprivate let dirtyLists: [ListID: [StoreValue]]
    }

    /// Records the table's write state. The dirty clusters are shared with the point and
    /// frozen at their current rows: new objects are still appended to them in place (a
    /// return to the point drops those rows), but any other change works on a copy.
    func saveWriteState() -> WriteState {
        for cluster in dirty.values { cluster.frozenRows = cluster.keys.count }
        return WriteState(dirty: dirty, newClusters: newClusters, nextKey: nextKey, storedCount: storedCount,
                          metaLoaded: metaLoaded, changes: changes, dirtyLists: dirtyLists)
    }

    /// Goes back to a recorded write state, after `reset()` (the engine transaction went back
    /// to the matching savepoint). `handedOut` is the key counter before the reset: keys handed
    /// out since the state was recorded stay used, and count as inserted and deleted.
    func restoreWriteState(_ state: WriteState, handedOut: Int64) {
        // Objects appended to a frozen cluster after the point go again.
        for cluster in state.dirty.values { cluster.truncateToFrozenRows() }
        dirty = state.dirty
        newClusters = state.newClusters
        storedCount = state.storedCount
        metaLoaded = state.metaLoaded
        nextKey = state.metaLoaded ? max(state.nextKey, handedOut) : state.nextKey
        var tracker = state.changes
        if tracker.firstInserted != nil, handedOut > tracker.nextKey {
            for key in tracker.nextKey..<handedOut { tracker.deletedInserted.insert(key) }
        }
        changes = tracker
        dirtyLists = state.dirtyLists
        setMembers.removeAll()
        dropLinkHolders()
    }

    /// Notes a change to this table's objects and to the session's content; a change to
    /// property `index` that holds no links (a value, or a list or map of values) leaves
    /// `linkHolders` valid.
    @inline(__always)
    private func noteChange(property index: Int? = nil) {
        if index.map({ kinds[$0] == .link }) ?? true { tableSerial &+= 1 }
        session.noteContentChange()
    }

    private func dropLinkHolders() {
        tableSerial &+= 1
        linkHolders.removeAll()
        linkHolderBuilds = 0
        linkHolderUses = 0
    }

    var reading: any TransactionReading { session.reading }

    func clusters() throws(StoreError) -> Tree? {
        try loadTrees()
        return clusterTree
    }

    /// Looks up this transaction's trees, once per transaction.
    @inline(__always)
    private func loadTrees() throws(StoreError) {
        if treeSerial != session.transactionSerial {
            treeSerial = session.transactionSerial
            // Not through the session's table of trees (a String hash per tree and
            // transaction): these handles are kept here for the transaction.
            let cluster = try session.lookUpTree(clusterTreeName, carried: carriedTrees.cluster)
            clusterTree = cluster.tree
            primaryKeyTree = try session.lookUpTree(primaryKeyTreeName, carried: carriedTrees.primaryKey).tree
            if cluster.carried { carriedTreesTaken &+= 1 }
            lookupCursor = nil
        }
    }

    /// The primary-key tree of this transaction (looked up with the cluster tree).
    @exclusivity(unchecked) private var primaryKeyTree: Tree?

    /// A cursor on the cluster tree kept for lookups in read-only sessions; write transactions
    /// make a fresh one each time (their puts invalidate cursors).
    private var lookupCursor: Cursor?

    private func clusterCursor(_ tree: Tree) throws -> Cursor {
        if session.readsThroughWrite { return try reading.makeCursor(on: tree) }
        if let lookupCursor { return lookupCursor }
        let cursor = try reading.makeCursor(on: tree)
        lookupCursor = cursor
        return cursor
    }

    private func loadMeta() throws(StoreError) {
        guard !metaLoaded else { return }
        if let carried = carriedForThisWrite {
            (nextKey, storedCount) = (carried.nextKey, carried.storedCount)
        } else {
            (nextKey, storedCount) = try session.tableMeta(tableID)
        }
        if session.readsThroughWrite { nextKey = max(nextKey, session.store.firstUnusedKey(inTable: tableID)) }
        metaLoaded = true
    }

    /// Called when the write transaction ends without committing, before `reset`: the keys it
    /// handed out stay used.
    func rollBack() {
        if metaLoaded { session.store.noteKeysUsed(inTable: tableID, below: nextKey) }
    }

    /// Number of objects in this version (including this transaction's changes).
    package var count: Int {
        get throws(StoreError) {
            if isDropped { return 0 }
            try loadMeta()
            return storedCount
        }
    }

    // MARK: Chunks of the snapshot

    func snapshotChunk(firstKey: Int64, column index: Int, expectedCount: Int?) throws(StoreError) -> ChunkView {
        guard let tree = try clusters() else { return .absent }
        return try chunk(in: tree, key: TreeKey.cluster(firstKey, column: columnIDs[index]), expectedCount: expectedCount,
                         expectedWidth: schema.properties[index].kind.width)
    }

    private func chunk(in tree: Tree, key: [UInt8], expectedCount: Int?, expectedWidth: Int) throws(StoreError) -> ChunkView {
        do {
            // The engine's views of a snapshot stay valid while its transaction is open: the
            // mapping never moves and pinned pages are never rewritten. The store never writes
            // a cluster tree before commit, so this holds inside write transactions too.
            let raw: UnsafeRawBufferPointer? = try key.withUnsafeBytes { k in
                try reading.withValue(forKey: k, in: tree) { $0 }
            }
            guard let raw else { return .absent }
            return try ChunkView(encoded: raw, expectedCount: expectedCount, expectedWidth: expectedWidth)
        } catch {
            throw StoreError.wrap(error)
        }
    }

    // MARK: Locating objects

    /// The cluster holding `key` and the key's row, or nil when no object has that key.
    package func locate(_ key: ObjectKey) throws(StoreError) -> (cluster: ClusterView, row: Int)? {
        if isDropped { return nil }
        if let cache, cache.generation == session.generation, let row = cache.row(of: key.rawValue) {
            return (cache, row)
        }
        // A key lives in one cluster per version, so a cached cluster of this generation that
        // holds it is the one. Write transactions skip this: their dirty clusters take
        // precedence over the snapshot's views the cache holds.
        if viewCacheGeneration == session.generation, !session.readsThroughWrite,
           let view = viewCache.last(atOrBelow: key.rawValue), let row = view.row(of: key.rawValue) {
            cache = view
            return (view, row)
        }
        guard let view = try clusterView(containing: key.rawValue), let row = view.row(of: key.rawValue) else { return nil }
        cache = view
        return (view, row)
    }

    /// Whether an object with this key exists in this version.
    package func contains(_ key: ObjectKey) throws(StoreError) -> Bool { try locate(key) != nil }

    /// Property index by column id (-1: a column this schema does not have).
    private(set) lazy var propertyByColumn: [Int] = {
        var map = [Int](repeating: -1, count: Int(columnIDs.max() ?? 0) + 1)
        for (index, id) in columnIDs.enumerated() { map[Int(id)] = index }
        return map
    }()

    private func clusterView(containing key: Int64) throws(StoreError) -> ClusterView? {
        if let first = newClusters.last, key >= newClusters[0] {
            var chosen = first
            for candidate in newClusters.reversed() where candidate <= key { chosen = candidate; break }
            return try clusterView(firstKey: chosen)
        }
        // Clusters hold disjoint, ascending key ranges (keys are handed out in increasing
        // order, and a cluster's stay sorted), so a key between a cluster's first and last keys
        // can be in no other cluster: the one the last look-up found answers, if it is still
        // this transaction's copy (a copy or a reset replaces it).
        if let hinted = lastLocatedDirty, key >= hinted.firstKey, hinted.keys.count > 0,
           key <= hinted.keys.view.int(hinted.keys.count - 1), dirty[hinted.firstKey] === hinted {
            return try dirtyView(hinted)
        }
        guard let tree = try clusters() else { return nil }
        do {
            // The greatest entry at or below (key, last column) is the last chunk of the cluster
            // that would hold `key`; its chunks are read walking back to the key chunk.
            let cursor = try clusterCursor(tree)
            guard try cursor.seek(toLast: TreeKey.cluster(key, column: UInt16.max)) else { return nil }
            let first = Int64(bitPattern: TreeKey.readU64(cursor.key))
            if let cluster = dirty[first] {
                lastLocatedDirty = cluster
                return try dirtyView(cluster)
            }
            if viewCacheGeneration == session.generation, let view = viewCache.view(first: first) { return view }
            var columns = [ChunkView](repeating: .absent, count: schema.properties.count)
            while true {
                let column = Int(cursor.key[8]) << 8 | Int(cursor.key[9])
                if column == Int(Cluster.keyColumn) {
                    let keys = try Cluster.keys(encoded: cursor.value, table: schema.name)
                    let view = try makeView(first: first, keys: keys, columns: columns)
                    if viewCacheGeneration != session.generation || viewCache.count >= ClusterViewCache.capacity {
                        viewCache.removeAll(keepingCapacity: true)
                        viewCacheGeneration = session.generation
                    }
                    viewCache.insert(view)
                    return view
                }
                try place(cursor.value, column: column, in: &columns)
                guard try cursor.previous(), Int64(bitPattern: TreeKey.readU64(cursor.key)) == first else {
                    throw StoreError.corrupted("a cluster of '\(schema.name)' has no key chunk")
                }
            }
        } catch {
            throw StoreError.wrap(error)
        }
    }

    func place(_ value: UnsafeRawBufferPointer, column: Int, in columns: inout [ChunkView]) throws(StoreError) {
        guard column < propertyByColumn.count else { return }
        let index = propertyByColumn[column]
        guard index >= 0, !schema.properties[index].isList else { return }
        columns[index] = try ChunkView(encoded: value, expectedWidth: schema.properties[index].kind.width)
    }

    func makeView(first: Int64, keys: ChunkView, columns: [ChunkView]) throws(StoreError) -> ClusterView {
        for (index, column) in columns.enumerated() where column.values != nil && column.count != keys.count {
            throw .corrupted("column '\(schema.properties[index].name)' of a '\(schema.name)' cluster holds \(column.count) values for \(keys.count) objects")
        }
        return ClusterView(firstKey: first, keys: keys, columns: columns, dirty: nil, generation: session.generation)
    }

    private func dirtyView(_ cluster: DirtyCluster) throws(StoreError) -> ClusterView {
        var columns = [ChunkView](repeating: .absent, count: schema.properties.count)
        var missing = false
        for index in columns.indices {
            if let buffer = cluster.columns[index] { columns[index] = buffer.view } else if !schema.properties[index].isList { missing = true }
        }
        if missing && cluster.existsInSnapshot, let snapshot = try snapshotView(firstKey: cluster.firstKey) {
            for index in columns.indices where cluster.columns[index] == nil { columns[index] = snapshot.columns[index] }
        }
        return ClusterView(firstKey: cluster.firstKey, keys: cluster.keys.view, columns: columns, dirty: cluster, generation: session.generation)
    }

    /// The snapshot's cluster that starts at `first` (ignoring this transaction's changes).
    private func snapshotView(firstKey first: Int64) throws(StoreError) -> ClusterView? {
        guard let tree = try clusters() else { return nil }
        do {
            let cursor = try reading.makeCursor(on: tree)
            guard try cursor.seek(to: TreeKey.cluster(first, column: Cluster.keyColumn)),
                  Int64(bitPattern: TreeKey.readU64(cursor.key)) == first else { return nil }
            return try readCluster(cursor, first: first)
        } catch {
            throw StoreError.wrap(error)
        }
    }

    /// Reads the cluster whose key chunk the cursor stands on, leaving the cursor on the first
    /// entry after it (or off the end).
    private func readCluster(_ cursor: Cursor, first: Int64) throws -> ClusterView {
        let keys = try Cluster.keys(encoded: cursor.value, table: schema.name)
        var columns = [ChunkView](repeating: .absent, count: schema.properties.count)
        while try cursor.next() {
            guard Int64(bitPattern: TreeKey.readU64(cursor.key)) == first else { break }
            try place(cursor.value, column: Int(cursor.key[8]) << 8 | Int(cursor.key[9]), in: &columns)
        }
        return try makeView(first: first, keys: keys, columns: columns)
    }

    package func clusterView(firstKey: Int64) throws(StoreError) -> ClusterView? {
        if let cluster = dirty[firstKey] { return try dirtyView(cluster) }
        return try snapshotView(firstKey: firstKey)
    }

    /// Calls `body` with each non-empty cluster in key order; stops when it returns false.
    package func forEachCluster(_ body: (ClusterView) throws -> Bool) throws {
        if isDropped { return }
        if let tree = try clusters() {
            let cursor = try reading.makeCursor(on: tree)
            var positioned = try cursor.first()
            while positioned {
                let first = Int64(bitPattern: TreeKey.readU64(cursor.key))
                let column = Int(cursor.key[8]) << 8 | Int(cursor.key[9])
                guard column == Int(Cluster.keyColumn) else { throw StoreError.corrupted("a cluster of '\(schema.name)' has no key chunk") }
                if let cluster = dirty[first] {
                    let view = try dirtyView(cluster)
                    if view.count > 0 { guard try body(view) else { return } }
                    guard first < Int64.max else { return }
                    positioned = try cursor.seek(to: TreeKey.cluster(first + 1, column: Cluster.keyColumn))
                    continue
                }
                let view = try readCluster(cursor, first: first)
                positioned = cursor.isPositioned
                if view.count > 0 { guard try body(view) else { return } }
            }
        }
        for first in newClusters {
            if let view = try clusterView(firstKey: first), view.count > 0 {
                guard try body(view) else { return }
            }
        }
    }

    /// All object keys in key order.
    package func allKeys() throws -> [ObjectKey] {
        var keys: [ObjectKey] = []
        keys.reserveCapacity(try count)
        try forEachCluster { view in
            for row in 0..<view.count { keys.append(view.key(at: row)) }
            return true
        }
        return keys
    }

    // MARK: Reading values generically

    package func value(_ key: ObjectKey, property index: Int) throws(StoreError) -> StoreValue {
        guard let (cluster, row) = try locate(key) else { throw .objectNotFound(type: schema.name) }
        let property = schema.properties[index]
        require(!property.isList, "use list(_:property:) for list properties")
        return try cluster.column(index).value(row, kind: property.kind)
    }

    // MARK: Primary keys and indexes

    /// The object whose primary key is `value`, if any.
    /// The raw value of a primary-key index entry (object keys, 8 bytes each), empty if none.
    private func primaryKeyCandidates(_ encoded: [UInt8]) throws(StoreError) -> [UInt8] {
        guard let tree = try primaryKeyTreeHandle() else { return [] }
        do {
            return try encoded.withUnsafeBytes { k in
                try reading.withValue(forKey: k, in: tree) { $0.map { [UInt8]($0) } ?? [] }
            }
        } catch {
            throw StoreError.wrap(error)
        }
    }

    private func primaryKeyTreeHandle() throws(StoreError) -> Tree? {
        try loadTrees()
        if primaryKeyTree == nil, session.readsThroughWrite { primaryKeyTree = try session.tree(primaryKeyTreeName) }
        return primaryKeyTree
    }

    /// The object whose primary key is `value`, with its cluster and row.
    ///
    /// For a non-optional `Int` primary key the key is first guessed: tables whose Int keys
    /// grow with insertion order (autoincrementing ids, the common case) hold
    /// `key = primaryKey - offset` for one offset, so the lookup tries the object at the key
    /// the last index lookup's offset predicts, and accepts it when its primary-key column
    /// holds `value` — primary keys are unique, so that object is the one. Otherwise (no
    /// object there, another value, other key types, or a table where guesses keep missing)
    /// the index answers, as `find(primaryKey:)`, and teaches the offset.
    package func locate(primaryKey value: StoreValue) throws(StoreError) -> (key: ObjectKey, cluster: ClusterView, row: Int)? {
        let guessable: (column: Int, value: Int64)?
        if case .int(let int) = value, let pk = primaryKeyIndex, primaryKeyKind == .int, !optionals[pk] {
            guessable = (pk, int)
        } else {
            guessable = nil
        }
        if let guessable, let guess = keyGuess.key(for: guessable.value) {
            if let (cluster, row) = try locate(ObjectKey(guess)), try cluster.column(guessable.column).int(row) == guessable.value {
                keyGuess.hit()
                return (ObjectKey(guess), cluster, row)
            }
            keyGuess.miss()
        }
        guard let key = try find(primaryKey: value) else { return nil }
        if let guessable { keyGuess.learn(primaryKey: guessable.value, key: key.rawValue) }
        guard let (cluster, row) = try locate(key) else { return nil }
        return (key, cluster, row)
    }

    package func find(primaryKey value: StoreValue) throws(StoreError) -> ObjectKey? {
        guard let pk = primaryKeyIndex, let tree = try primaryKeyTreeHandle() else { return nil }
        // The primary-key index maps a value's encoding to the object keys (8 bytes each;
        // more than one only when two long values share an encoding).
        // The value is encoded on the stack (except strings and data) and the read goes to the
        // concrete transaction: no allocation and no existential call per lookup.
        var cut = false
        var first: ObjectKey?
        var candidates: [ObjectKey] = []
        do {
            try IndexKey.withEncoded(value) { k, isCut in
                cut = isCut
                try session.withValue(forKey: k, in: tree) { raw in
                    guard let raw, raw.count >= 8 else { return }
                    first = ObjectKey(Int64(bitPattern: TreeKey.readU64(raw, at: 0)))
                    // Only a cut encoding can map to more than one object.
                    guard cut else { return }
                    var offset = 0
                    while offset + 8 <= raw.count {
                        candidates.append(ObjectKey(Int64(bitPattern: TreeKey.readU64(raw, at: offset))))
                        offset += 8
                    }
                }
            }
        } catch {
            throw StoreError.wrap(error)
        }
        guard cut else { return first }
        for key in candidates where try self.value(key, property: pk) == value { return key }
        return nil
    }

    /// The form property `index`'s `value` takes in its index (a mixed value's tag and bytes,
    /// `MixedEncoding.indexedForm`; any other value as it is).
    @inline(__always)
    func indexedForm(_ value: StoreValue, property index: Int) -> StoreValue {
        kinds[index] == .mixed ? MixedEncoding.indexedForm(value) : value
    }

    /// Objects whose indexed property `index` equals `value`, in key order.
    package func find(_ value: StoreValue, inIndexOf index: Int) throws(StoreError) -> [ObjectKey] {
        if index == primaryKeyIndex { return try find(primaryKey: value).map { [$0] } ?? [] }
        guard let name = indexTreeNames[index] else { fatalError("property \(index) of \(schema.name) is not indexed") }
        return try lookup(value, treeName: name, property: index, first: false)
    }

    private func lookup(_ value: StoreValue, treeName: String, property: Int, first: Bool) throws(StoreError) -> [ObjectKey] {
        guard let tree = try session.tree(treeName) else { return [] }
        let (prefix, cut) = IndexKey.encode(indexedForm(value, property: property))
        var found: [ObjectKey] = []
        do {
            try reading.forEach(in: tree, from: prefix) { key, _ in
                guard key.count == prefix.count + 8, key.starts(with: prefix) else { return false }
                found.append(IndexKey.objectKey(fromEntry: key))
                return !(first && !cut)
            }
        } catch {
            throw StoreError.wrap(error)
        }
        if cut {
            var confirmed: [ObjectKey] = []
            for key in found where try self.value(key, property: property) == value { confirmed.append(key) }
            found = confirmed
            if first, let one = found.first { return [one] }
        }
        return found
    }

    /// Adds the primary-key index entry of a new object at `key`, or throws
    /// `.duplicatePrimaryKey` (and changes nothing) when another object has the value.
    ///
    /// The value is encoded on the stack (except strings and data) and the entry goes in with one
    /// descent (`insertIfAbsent`); only an encoding already present — a duplicate, or a cut
    /// long value shared with another object — takes the general path.
    private func insertPrimaryKeyEntry(_ value: StoreValue, property pk: Int, key: Int64) throws(StoreError) {
        let session = self.session  // one strong reference for the calls below
        _ = try clusters()
        let tree: Tree
        if let existing = primaryKeyTree { tree = existing } else {
            tree = try session.createTree(primaryKeyTreeName)
            primaryKeyTree = tree
        }
        let write = try session.writer()
        var inserted = false
        var cut = false
        do {
            try IndexKey.withEncoded(value) { encoded, isCut in
                cut = isCut
                var objectKey = UInt64(bitPattern: key).bigEndian
                try withUnsafeBytes(of: &objectKey) { inserted = try write.insertIfAbsent($0, forKey: encoded, in: tree) }
            }
        } catch {
            throw StoreError.wrap(error)
        }
        if inserted { return }
        guard cut else { throw .duplicatePrimaryKey(type: schema.name, value: "\(value)") }
        // Objects whose long values share the cut encoding: confirm none has this value.
        let encoded = IndexKey.encode(value).bytes
        var existing = try primaryKeyCandidates(encoded)
        var offset = 0
        while offset + 8 <= existing.count {
            let other = ObjectKey(Int64(bitPattern: existing.withUnsafeBytes { TreeKey.readU64($0, at: offset) }))
            if try self.value(other, property: pk) == value {
                throw .duplicatePrimaryKey(type: schema.name, value: "\(value)")
            }
            offset += 8
        }
        IndexKey.appendBigEndian(UInt64(bitPattern: key), to: &existing)
        do { try write.put(existing, forKey: encoded, in: tree) } catch { throw StoreError.wrap(error) }
    }

    private func indexTreeName(for property: Int) -> String? {
        property == primaryKeyIndex ? primaryKeyTreeName : indexTreeNames[property]
    }

    private func addIndexEntry(_ value: StoreValue, key: ObjectKey, property: Int) throws(StoreError) {
        if property == primaryKeyIndex {
            let tree = try session.createTree(primaryKeyTreeName)
            let encoded = IndexKey.encode(value).bytes
            do {
                let existing = try session.writer().value(forKey: encoded, in: tree) ?? []
                try session.writer().put(existing + TreeKey.u64(UInt64(bitPattern: key.rawValue)), forKey: encoded, in: tree)
            } catch {
                throw StoreError.wrap(error)
            }
            return
        }
        guard let name = indexTreeName(for: property) else { return }
        let tree = try session.createTree(name)
        do { try session.writer().put([], forKey: IndexKey.entry(indexedForm(value, property: property), key), in: tree) } catch { throw StoreError.wrap(error) }
    }

    private func removeIndexEntry(_ value: StoreValue, key: ObjectKey, property: Int) throws(StoreError) {
        if property == primaryKeyIndex {
            guard let tree = try session.tree(primaryKeyTreeName) else { return }
            let encoded = IndexKey.encode(value).bytes
            do {
                let target = TreeKey.u64(UInt64(bitPattern: key.rawValue))
                // The common case, a unique primary key's entry naming only this object: one
                // comparison in place, then the delete (no copy of the entry's value).
                let writer = try session.writer()
                let onlyThisObject = try encoded.withUnsafeBytes { encodedKey in
                    try writer.withValue(forKey: encodedKey, in: tree) { stored in
                        stored.map { $0.count == 8 && $0.elementsEqual(target) } ?? false
                    }
                }
                if onlyThisObject {
                    _ = try writer.delete(forKey: encoded, in: tree)
                    return
                }
                guard var keys = try writer.value(forKey: encoded, in: tree) else { return }
                var offset = 0
                while offset + 8 <= keys.count {
                    if Array(keys[offset..<(offset + 8)]) == target { keys.removeSubrange(offset..<(offset + 8)) } else { offset += 8 }
                }
                if keys.isEmpty {
                    _ = try writer.delete(forKey: encoded, in: tree)
                } else {
                    try writer.put(keys, forKey: encoded, in: tree)
                }
            } catch {
                throw StoreError.wrap(error)
            }
            return
        }
        guard let name = indexTreeName(for: property), let tree = try session.tree(name) else { return }
        do { _ = try session.writer().delete(forKey: IndexKey.entry(indexedForm(value, property: property), key), in: tree) } catch { throw StoreError.wrap(error) }
    }

    // MARK: Writing

    /// The writer's complete copy of the cluster that starts at `first`, to append rows to:
    /// as it is even when a chained write's point holds it (`saveWriteState`), since a return to
    /// the point drops rows appended after it.
    @inline(__always)
    private func appendable(_ first: Int64) -> DirtyCluster? {
        guard let cluster = dirty[first], cluster.complete else { return nil }
        return cluster
    }

    /// The dirty cluster `first`, copied first if a chained write's point holds it.
    private func mutableDirty(_ first: Int64) -> DirtyCluster? {
        guard let cluster = dirty[first] else { return nil }
        guard cluster.frozen else { return cluster }
        let copy = cluster.copy()
        dirty[first] = copy
        // New objects go on into the copy.
        if lastNewCluster === cluster { lastNewCluster = copy }
        session.invalidateViews()
        return copy
    }

    /// The writer's copy of the cluster that starts at `first`, with the columns `properties`
    /// (nil: all) loaded.
    private func dirtyCluster(_ first: Int64, loading properties: [Int]?) throws(StoreError) -> DirtyCluster {
        let cluster: DirtyCluster
        if let existing = mutableDirty(first) {
            cluster = existing
        } else if let carriedCluster = takeCarriedCluster(first) {
            cluster = carriedCluster
        } else {
            guard let tree = try clusters() else { throw .corrupted("a cluster of '\(schema.name)' vanished") }
            let keys = try chunk(in: tree, key: TreeKey.cluster(first, column: Cluster.keyColumn), expectedCount: nil, expectedWidth: 8)
            try Cluster.checkCount(keys.count, table: schema.name)
            cluster = DirtyCluster(firstKey: first, columnCount: schema.properties.count, existsInSnapshot: true)
            cluster.keys.load(keys, count: keys.count)
            dirty[first] = cluster
            session.invalidateViews()
        }
        for index in properties ?? Array(schema.properties.indices) where cluster.columns[index] == nil && !schema.properties[index].isList {
            let property = schema.properties[index]
            let buffer = ColumnBuffer(kind: property.kind, optional: property.isOptional, capacity: Cluster.capacity)
            let source = cluster.existsInSnapshot
                ? try snapshotChunk(firstKey: first, column: index, expectedCount: cluster.keys.count) : .absent
            buffer.load(source, count: cluster.keys.count)
            if source.values == nil && property.kind == .link {
                for row in 0..<cluster.keys.count { buffer.setFixed(Int64(-1), at: row) }
            }
            cluster.columns[index] = buffer
            session.invalidateViews()
        }
        if properties == nil { cluster.complete = true }
        return cluster
    }

    /// The last cluster the previous commit carried over, if it starts at `first` and this
    /// transaction starts from that commit's version: it becomes this transaction's copy
    /// (complete, as the snapshot holds it). Taken once.
    private func takeCarriedCluster(_ first: Int64) -> DirtyCluster? {
        guard let cluster = carriedForThisWrite?.lastCluster, cluster.firstKey == first else { return nil }
        carried?.lastCluster = nil
        carriedClustersTaken &+= 1
        dirty[first] = cluster
        session.invalidateViews()
        return cluster
    }

    private func checkValue(_ value: StoreValue, for index: Int) throws(StoreError) {
        let property = schema.properties[index]
        if value.isNull {
            guard property.isOptional || property.kind == .link else {
                throw .invalidValue(type: schema.name, property: property.name, reason: "nil is not allowed for a non-optional \(property.typeDescription)")
            }
            return
        }
        guard let kind = value.kind, property.kind.stores(kind) else {
            throw .invalidValue(type: schema.name, property: property.name,
                                reason: "a \(value.kind.map(\.description) ?? "nil") value cannot be stored in a \(property.typeDescription) property")
        }
    }

    /// Creates an object with these property values (one per property; list properties take
    /// `.null` here and are filled with `setList`). Returns its key.
    @discardableResult
    package func insert(_ values: [StoreValue]) throws(StoreError) -> ObjectKey {
        require(values.count == schema.properties.count, "insert needs one value per property")
        try session.requireWrite()
        try loadMeta()
        for index in scalarProperties {
            let value = values[index]
            if value.isNull ? !optionals[index] : value.kind != kinds[index] { try checkValue(value, for: index) }
        }
        let key = nextKey
        // First, so that a duplicate throws before anything changed.
        if let pk = primaryKeyIndex { try insertPrimaryKeyEntry(values[pk], property: pk, key: key) }
        nextKey += 1
        let target = try insertionCluster(for: key)
        let row = target.keys.count
        target.keys.insertRow(at: row)
        target.keys.setFixed(key, at: row)
        // Through buffer pointers: no copy of each value and fewer retains of each column.
        target.columns.withUnsafeBufferPointer { columns in
            values.withUnsafeBufferPointer { values in
                for index in scalarProperties {
                    columns[index].unsafelyUnwrapped.append(values[index])  // complete: every scalar column is loaded
                }
            }
        }
        return try finishInsert(key, in: target, row: row, session: session)
    }

    /// Creates an object whose property values `write` stores straight into the new row's
    /// column buffers (typed, without a `StoreValue` per property): the object layer's `add`.
    /// `primaryKey` is the primary key's value (ignored without a primary key); its index entry
    /// goes in first, so that a duplicate throws before anything changed. Every scalar column
    /// starts as null in the row (zero in a non-optional column, "no object" in a link column);
    /// `write` sets the properties with the setters of their kinds (`InsertRow`), and must not
    /// call back into the store. Returns the key.
    package func insert(primaryKey: StoreValue, writing write: (InsertRow) -> Void) throws(StoreError) -> ObjectKey {
        // One strong reference for the whole insert: each call through the unowned(unsafe)
        // property retained and released the session.
        let session = self.session
        try session.requireWrite()
        try loadMeta()
        let key = nextKey
        if let pk = primaryKeyIndex {
            if primaryKey.isNull ? !optionals[pk] : primaryKey.kind != kinds[pk] { try checkValue(primaryKey, for: pk) }
            try insertPrimaryKeyEntry(primaryKey, property: pk, key: key)
        }
        nextKey += 1
        let target = try insertionCluster(for: key)
        let row = target.appendRow(key: key, scalarColumns: scalarProperties, linkColumns: linkProperties)
        target.withUnmanagedColumns { columns in write(InsertRow(columns: columns, row: row, table: self)) }
        return try finishInsert(key, in: target, row: row, session: session)
    }

    /// The cluster a new object with `key` goes into: the last cluster while it has room,
    /// otherwise a new one. Its scalar columns are all loaded.
    @inline(__always)
    private func insertionCluster(for key: Int64) throws(StoreError) -> DirtyCluster {
        // The common case: the cluster this transaction started last has room (it is complete;
        // a chained write's point may hold it, and appending is the change that needs no copy).
        if let last = lastNewCluster, last.keys.count < Cluster.capacity { return last }
        var cluster: DirtyCluster?
        if let last = newClusters.last {
            if lastNewCluster == nil { lastNewCluster = appendable(last) ?? mutableDirty(last) }
            cluster = lastNewCluster
        } else if let first = snapshotLastCluster {
            if let existing = appendable(first) { cluster = existing } else { cluster = try dirtyCluster(first, loading: nil) }
        } else if let carriedCluster = carriedForThisWrite?.lastCluster {
            // The last commit's last cluster is the snapshot's last: no descent, no decoding.
            snapshotLastCluster = carriedCluster.firstKey
            cluster = try dirtyCluster(carriedCluster.firstKey, loading: nil)
        } else if let tree = try clusters() {
            do {
                let cursor = try reading.makeCursor(on: tree)
                if try cursor.last() {
                    let first = Int64(bitPattern: TreeKey.readU64(cursor.key))
                    snapshotLastCluster = first
                    cluster = try dirtyCluster(first, loading: nil)
                }
            } catch {
                throw StoreError.wrap(error)
            }
        }
        if let candidate = cluster {
            // Keys ascend: a new key at or below the last one (damaged counters) would
            // overwrite an object, or start a cluster over an existing one.
            let count = candidate.keys.count
            if count > 0, case let last = candidate.keys.view.int(count - 1), key <= last {
                throw .corrupted("'\(schema.name)' would give a new object the key \(key), but its last object has \(last): the table's counters are damaged")
            }
            if count >= Cluster.capacity { cluster = nil }
        }
        if let cluster {
            if !cluster.complete { _ = try dirtyCluster(cluster.firstKey, loading: nil) }
            return cluster
        }
        let target = DirtyCluster(firstKey: key, columnCount: schema.properties.count, existsInSnapshot: false)
        for index in scalarProperties {
            target.columns[index] = ColumnBuffer(kind: kinds[index], optional: schema.properties[index].isOptional, capacity: Cluster.capacity)
        }
        target.complete = true
        dirty[key] = target
        newClusters.append(key)
        lastNewCluster = target
        return target
    }

    /// What follows writing a new object's row: secondary index entries, counts, the change
    /// record.
    @inline(__always)
    private func finishInsert(_ key: Int64, in target: DirtyCluster, row: Int, session: StoreSession) throws(StoreError) -> ObjectKey {
        session.invalidateViews()
        let objectKey = ObjectKey(key)
        for index in indexedProperties {
            let value = target.columns[index].unsafelyUnwrapped.view.value(row, kind: kinds[index])
            try addIndexEntry(value, key: objectKey, property: index)
        }
        storedCount += 1
        changes.insert(key)
        noteChange()
        if schema.isEmbedded { session.noteNewEmbedded(objectKey, in: self) }
        return objectKey
    }

    /// Sets one property of an existing object.
    package func set(_ value: StoreValue, for key: ObjectKey, property index: Int) throws(StoreError) {
        try session.requireWrite()
        try checkValue(value, for: index)
        guard let (view, row) = try locate(key) else { throw .objectNotFound(type: schema.name) }
        if let embedded = embeddedTarget(of: index) {
            // The new child must have no parent; the old one is deleted with the link.
            let old = try view.column(index).value(row, kind: .link)
            guard old != value else { return try write(value, for: key, property: index, at: (view, row)) }
            if case .link(let child) = value { try session.adoptEmbedded(child, in: embedded, by: self, property: index) }
            try write(value, for: key, property: index, at: (view, row))
            if case .link(let previous) = old { try session.delete([previous], from: embedded) }
            return
        }
        try write(value, for: key, property: index, at: (view, row))
    }

    /// `set`'s write, at the object's location.
    func write(_ value: StoreValue, for key: ObjectKey, property index: Int, at location: (view: ClusterView, row: Int)) throws(StoreError) {
        let (view, row) = location
        let indexed = index == primaryKeyIndex || indexTreeNames[index] != nil
        if indexed {
            let old = try view.column(index).value(row, kind: schema.properties[index].kind)
            if index == primaryKeyIndex, old != value, try find(primaryKey: value) != nil {
                throw .duplicatePrimaryKey(type: schema.name, value: "\(value)")
            }
            try removeIndexEntry(old, key: key, property: index)
            try addIndexEntry(value, key: key, property: index)
        }
        let cluster = try dirtyCluster(view.firstKey, loading: [index])
        if cluster.columns[index]!.set(value, at: row) { session.invalidateViews() }
        changes.modify(key.rawValue, property: index)
        noteChange(property: index)
    }

    /// A fixed-width column buffer to write `property` of the object at `key` in place, for
    /// the typed fast path. Marks the object modified.
    package func writableColumn(for key: ObjectKey, property index: Int) throws(StoreError) -> (buffer: ColumnBufferHandle, row: Int) {
        try session.requireWrite()
        guard let (view, row) = try locate(key) else { throw .objectNotFound(type: schema.name) }
        let cluster = try dirtyCluster(view.firstKey, loading: [index])
        changes.modify(key.rawValue, property: index)
        noteChange(property: index)
        return (ColumnBufferHandle(buffer: cluster.columns[index]!), row)
    }

    /// Deletes objects. Links to them from other objects are cleared by the session.
    package func delete(_ keys: [ObjectKey]) throws(StoreError) {
        try session.requireWrite()
        try loadMeta()
        for key in keys {
            guard let (view, row) = try locate(key) else { continue }
            if let pk = primaryKeyIndex {
                try removeIndexEntry(try view.column(pk).value(row, kind: schema.properties[pk].kind), key: key, property: pk)
            }
            for index in indexedProperties {
                try removeIndexEntry(try view.column(index).value(row, kind: schema.properties[index].kind), key: key, property: index)
            }
            for (index, property) in schema.properties.enumerated() where property.isList {
                try setList([], for: key, property: index, recordChange: false)
                if property.isMap { dirtyLists[ListID(property: index, key: key.rawValue, isMapKeys: true)] = [] }
            }
            let cluster = try dirtyCluster(view.firstKey, loading: nil)
            cluster.keys.removeRow(at: row)
            for buffer in cluster.columns { buffer?.removeRow(at: row) }
            session.invalidateViews()
            storedCount -= 1
            changes.delete(key.rawValue)
            // The link holders stay valid: a deleted holder is skipped where they are used.
            session.noteContentChange()
        }
    }

    // MARK: Lists

    /// The elements of a list property (a copy).
    package func list(_ key: ObjectKey, property index: Int) throws(StoreError) -> [StoreValue] {
        if let values = dirtyLists[ListID(property: index, key: key.rawValue)] { return values }
        let view = try listChunk(key, property: index)
        let kind = schema.properties[index].kind
        return (0..<view.count).map { view.value($0, kind: kind) }
    }

    /// The number of elements of a list property.
    package func listCount(_ key: ObjectKey, property index: Int) throws(StoreError) -> Int {
        if let values = dirtyLists[ListID(property: index, key: key.rawValue)] { return values.count }
        return try listChunk(key, property: index).count
    }

    /// One element of a list property.
    package func listElement(_ key: ObjectKey, property index: Int, at position: Int) throws(StoreError) -> StoreValue {
        if let values = dirtyLists[ListID(property: index, key: key.rawValue)] { return values[position] }
        let view = try listChunk(key, property: index)
        require(position >= 0 && position < view.count, "List index \(position) out of bounds (count \(view.count))")
        return view.value(position, kind: schema.properties[index].kind)
    }

    // MARK: Maps

    /// The keys of a map property, in ascending order of their UTF-8 bytes; its values are
    /// `list(key, property:)`, in the same order.
    package func mapKeys(_ key: ObjectKey, property index: Int) throws(StoreError) -> [String] {
        require(schema.properties[index].isMap, "mapKeys(_:property:) is for map properties")
        let stored: [StoreValue]
        if let values = dirtyLists[ListID(property: index, key: key.rawValue, isMapKeys: true)] {
            stored = values
        } else {
            guard let tree = try session.tree(listTreeName) else { return [] }
            let view = try chunk(in: tree, key: TreeKey.list(column: TreeKey.mapKeysColumn(columnIDs[index]), key), expectedCount: nil,
                                 expectedWidth: PropertyKind.string.width)
            stored = (0..<view.count).map { view.value($0, kind: .string) }
        }
        return try stored.map { value throws(StoreError) in
            guard case .string(let text) = value else {
                throw .corrupted("a key of the map '\(schema.properties[index].name)' of object \(key.rawValue) in '\(schema.name)' is not a string")
            }
            return text
        }
    }

    /// A map property's keys (in order) and the value of each; throws `corrupted` when the
    /// file's keys and values do not pair up.
    package func mapEntries(_ key: ObjectKey, property index: Int) throws(StoreError) -> (keys: [String], values: [StoreValue]) {
        let keys = try mapKeys(key, property: index)
        let values = try list(key, property: index)
        guard keys.count == values.count else {
            throw .corrupted("the map '\(schema.properties[index].name)' of object \(key.rawValue) in '\(schema.name)' has \(keys.count) keys and \(values.count) values")
        }
        return (keys, values)
    }

    /// Replaces the entries of a map property: `keys` in ascending order of their UTF-8 bytes,
    /// each once, and the value of each key at the same position.
    package func setMap(keys: [String], values: [StoreValue], for key: ObjectKey, property index: Int) throws(StoreError) {
        let property = schema.properties[index]
        guard property.isMap else {
            throw .invalidValue(type: schema.name, property: property.name, reason: "the property is not a map")
        }
        guard keys.count == values.count else {
            throw .invalidValue(type: schema.name, property: property.name, reason: "a map needs one value per key (\(keys.count) keys, \(values.count) values)")
        }
        for position in keys.indices.dropFirst() where !MapKeyOrder.precedes(keys[position - 1], keys[position]) {
            throw .invalidValue(type: schema.name, property: property.name,
                                reason: "a map's keys must be distinct and in ascending order; \"\(keys[position - 1])\" comes before \"\(keys[position])\"")
        }
        try setList(values, for: key, property: index)
        dirtyLists[ListID(property: index, key: key.rawValue, isMapKeys: true)] = keys.map(StoreValue.string)
    }

    /// The keys of the objects whose list of links `index` holds `target`, in key order, read
    /// from the stored lists alone (one pass over the property's list entries, no object
    /// located); nil while this transaction has changes to the table that are not stored yet.
    package func keys(withList index: Int, holding target: ObjectKey) throws(StoreError) -> [ObjectKey]? {
        var keys: [ObjectKey] = []
        let complete = try forEachStoredList(index) { owner, chunk in
            for row in 0..<chunk.count where !chunk.isNull(row) && chunk.int(row) == target.rawValue {
                keys.append(owner)
                break
            }
        }
        return complete ? keys : nil
    }

    /// Calls `body` with each object's stored list of links `index` (its owner and its chunk),
    /// in key order, in one pass over the property's list entries. Returns false, having read
    /// nothing, while this transaction has changes to the table that are not stored yet.
    func forEachStoredList(_ index: Int, _ body: (ObjectKey, ChunkView) throws -> Void) throws(StoreError) -> Bool {
        guard dirtyLists.isEmpty, dirty.isEmpty, newClusters.isEmpty else { return false }
        try forEachStoredListEntry(index, body)
        return true
    }

    /// Calls `body` with each stored list of property `index` (its owner and its chunk) in key
    /// order, as the file holds them, whatever this transaction changed: the caller overlays
    /// `dirtyLists` (an owner deleted in this transaction has an empty entry there).
    func forEachStoredListEntry(_ index: Int, _ body: (ObjectKey, ChunkView) throws -> Void) throws(StoreError) {
        if isDropped { return }
        guard let tree = try session.tree(listTreeName) else { return }
        let column = columnIDs[index]
        let start: [UInt8] = [UInt8(column >> 8), UInt8(column & 0xFF)]
        let end = start + [UInt8](repeating: 0xFF, count: 8)
        do {
            try reading.forEach(in: tree, from: start, to: end) { key, value in
                guard key.count == 10 else { throw StoreError.corrupted("a list entry of '\(schema.name)' has a key of \(key.count) bytes") }
                let owner = ObjectKey(Int64(bitPattern: TreeKey.readU64(key, at: 2)))
                try body(owner, try ChunkView(encoded: value, expectedCount: nil, expectedWidth: schema.properties[index].kind.width))
                return true
            }
        } catch {
            throw StoreError.wrap(error)
        }
    }

    /// The first value of the mixed list `index` of object `key` whose stored bytes are not a
    /// valid mixed value, described; nil when all are (for verification).
    func mixedListProblem(_ key: ObjectKey, property index: Int) throws(StoreError) -> String? {
        let chunk = try listChunk(key, property: index)
        for row in 0..<chunk.count where !chunk.isNull(row) {
            if let problem = MixedEncoding.problem(chunk.variableBytes(row)) { return problem }
        }
        return nil
    }

    /// Another table of this table's session, by name (a link's target).
    package func sessionTable(named name: String) -> TableAccess? { session.table(named: name) }

    /// Another table of this table's session, by id (a mixed value's link names it so).
    package func sessionTable(id: UInt32) -> TableAccess? { session.table(id: id) }

    private func listChunk(_ key: ObjectKey, property index: Int) throws(StoreError) -> ChunkView {
        if isDropped { return .absent }
        guard let tree = try session.tree(listTreeName) else { return .absent }
        return try chunk(in: tree, key: TreeKey.list(column: columnIDs[index], key), expectedCount: nil,
                         expectedWidth: schema.properties[index].kind.width)
    }

    /// Replaces the elements of a list property.
    package func setList(_ values: [StoreValue], for key: ObjectKey, property index: Int, recordChange: Bool = true) throws(StoreError) {
        if recordChange, let embedded = embeddedTarget(of: index) {
            // New children must have no parent and appear once; children that leave the list
            // are deleted.
            let old = Set(try list(key, property: index).compactMap { if case .link(let k) = $0 { k } else { nil } })
            var new: Set<ObjectKey> = []
            for case .link(let child) in values {
                guard new.insert(child).inserted else {
                    throw .invalidValue(type: schema.name, property: schema.properties[index].name,
                                        reason: "an embedded object can be in its parent's list only once")
                }
                if !old.contains(child) { try session.adoptEmbedded(child, in: embedded, by: self, property: index) }
            }
            try writeList(values, for: key, property: index, recordChange: recordChange)
            let removed = old.subtracting(new)
            if !removed.isEmpty { try session.delete(removed.sorted(), from: embedded) }
            return
        }
        try writeList(values, for: key, property: index, recordChange: recordChange)
    }

    /// `setList`'s write.
    func writeList(_ values: [StoreValue], for key: ObjectKey, property index: Int, recordChange: Bool) throws(StoreError) {
        try session.requireWrite()
        if isDropped { throw .objectNotFound(type: schema.name) }
        for value in values { try checkElement(value, property: index) }
        let id = ListID(property: index, key: key.rawValue)
        dirtyLists[id] = values
        setMembers[id] = nil
        if recordChange {
            changes.modify(key.rawValue, property: index)
            noteChange(property: index)
        } else {
            session.noteContentChange()  // the list of an object being deleted: see `delete`
        }
    }

    /// Throws unless `value` can be an element of the list (or a value of the map) `index`.
    private func checkElement(_ value: StoreValue, property index: Int) throws(StoreError) {
        let property = schema.properties[index]
        if value.isNull {
            // A map's links may be nil (RealmSwift's `Map<String, Object?>`); a list's may not.
            guard property.isOptional && (property.kind != .link || property.isMap) else {
                throw .invalidValue(type: schema.name, property: property.name, reason: "a list of \(property.kind) cannot hold nil")
            }
        } else if let kind = value.kind, !property.kind.stores(kind) {
            throw .invalidValue(type: schema.name, property: property.name, reason: "a \(value.kind!) value cannot be stored in a \(property.typeDescription)")
        }
    }

    // MARK: Changing lists and maps in place

    /// Whether `changeList`, `setMapValue`, `removeMapValue` and `insertIntoSet` apply to
    /// property `index`: lists and maps (of embedded objects too, whose one-parent bookkeeping
    /// the changes keep), and sets of values and top-level objects.
    package func changesInPlace(property index: Int) -> Bool {
        schema.properties[index].isList && !(schema.properties[index].isSet && embeddedTarget(of: index) != nil)
    }

    /// Makes sure the transaction's copy of a list (or a map's keys) is in `dirtyLists`, so
    /// that it can be changed in place.
    private func loadDirty(_ id: ListID) throws(StoreError) {
        guard dirtyLists[id] == nil else { return }
        let key = ObjectKey(id.key)
        dirtyLists[id] = id.isMapKeys ? try mapKeys(key, property: id.property).map(StoreValue.string) : try list(key, property: id.property)
    }

    /// Checks that a change in place to property `index` of object `key` may go ahead: a write
    /// transaction, a property of the shape `operation` is for (`shape`), and the object.
    private func beginChangeInPlace(_ key: ObjectKey, property index: Int, _ operation: String,
                                    _ shape: (PropertySchema) -> Bool) throws(StoreError) {
        try session.requireWrite()
        if isDropped { throw .objectNotFound(type: schema.name) }
        require(changesInPlace(property: index) && shape(schema.properties[index]), "\(operation) does not apply to '\(schema.name).\(schema.properties[index].name)'")
        guard try contains(key) else { throw .objectNotFound(type: schema.name) }
    }

    /// Ends a change made in place.
    private func changedInPlace(_ key: ObjectKey, property index: Int) {
        changes.modify(key.rawValue, property: index)
        noteChange(property: index)
    }

    /// Changes the list `index` of object `key` in place through `change`, which may add only
    /// `added` (checked here) and otherwise insert, remove, move or replace elements: a loop of
    /// changes in one transaction costs each change its own work, not a copy of the list
    /// (`changesInPlace(property:)` must hold).
    ///
    /// `change` returns the elements it removed (replaced ones included). In a list of
    /// embedded objects, the objects added must be new and without a parent (they are adopted
    /// here) and the ones removed are deleted, as `setList` does for a whole list.
    package func changeList(_ key: ObjectKey, property index: Int, adding added: [StoreValue],
                            _ change: (inout [StoreValue]) -> [StoreValue]) throws(StoreError) {
        try beginChangeInPlace(key, property: index, "changeList") { !$0.isMap }
        for value in added { try checkElement(value, property: index) }
        let id = ListID(property: index, key: key.rawValue)
        try loadDirty(id)
        let removed = change(&dirtyLists[id]!)
        setMembers[id] = nil
        changedInPlace(key, property: index)
        if let embedded = embeddedTarget(of: index) {
            try exchangeEmbedded(in: embedded, adding: added, removing: removed, property: index)
        }
    }

    /// The one-parent bookkeeping of a change in place to a list or map of embedded objects:
    /// adopts the children `added` and deletes the children `removed`, except a child that is
    /// both (put back where it was).
    private func exchangeEmbedded(in embedded: TableAccess, adding added: [StoreValue], removing removed: [StoreValue],
                                  property index: Int) throws(StoreError) {
        for case .link(let child) in added where !removed.contains(.link(child)) {
            try session.adoptEmbedded(child, in: embedded, by: self, property: index)
        }
        let gone = removed.compactMap { value -> ObjectKey? in
            if case .link(let child) = value, !added.contains(value) { child } else { nil }
        }
        if !gone.isEmpty { try session.delete(gone, from: embedded) }
    }

    /// Appends `value` to the set (an `isSet` list) `index` of object `key` unless the set
    /// holds the same value already (strings by their bytes, `StoreValue.identity`); returns
    /// whether it did. Membership is tested by hash
    /// against the members kept beside the transaction's copy, so a loop of inserts in one
    /// transaction is linear (`changesInPlace(property:)` must hold).
    package func insertIntoSet(_ value: StoreValue, for key: ObjectKey, property index: Int) throws(StoreError) -> Bool {
        try beginChangeInPlace(key, property: index, "insertIntoSet") { $0.isSet }
        try checkElement(value, property: index)
        let id = ListID(property: index, key: key.rawValue)
        try loadDirty(id)
        if setMembers[id] == nil { setMembers[id] = Set(dirtyLists[id]!.lazy.map(\.identity)) }
        guard setMembers[id]!.insert(value.identity).inserted else { return false }
        dirtyLists[id]!.append(value)
        changedInPlace(key, property: index)
        return true
    }

    /// Sets the map `index` of object `key` to hold `value` for `mapKey`, in place, keeping the
    /// keys in order (`changesInPlace(property:)` must hold).
    package func setMapValue(_ value: StoreValue, forKey mapKey: String, of key: ObjectKey, property index: Int) throws(StoreError) {
        try beginChangeInPlace(key, property: index, "setMapValue") { $0.isMap }
        try checkElement(value, property: index)
        let (keysID, valuesID) = (ListID(property: index, key: key.rawValue, isMapKeys: true), ListID(property: index, key: key.rawValue))
        try loadDirty(keysID)
        try loadDirty(valuesID)
        let (position, found) = Self.position(of: mapKey, in: dirtyLists[keysID]!)
        var replaced: [StoreValue] = []
        if found {
            replaced = [dirtyLists[valuesID]![position]]
            dirtyLists[valuesID]![position] = value
        } else {
            dirtyLists[keysID]!.insert(.string(mapKey), at: position)
            dirtyLists[valuesID]!.insert(value, at: position)
        }
        changedInPlace(key, property: index)
        if let embedded = embeddedTarget(of: index) {
            try exchangeEmbedded(in: embedded, adding: [value], removing: replaced, property: index)
        }
    }

    /// Removes `mapKey` from the map `index` of object `key`, in place; false when the map
    /// has no such key (`changesInPlace(property:)` must hold).
    @discardableResult
    package func removeMapValue(forKey mapKey: String, of key: ObjectKey, property index: Int) throws(StoreError) -> Bool {
        try beginChangeInPlace(key, property: index, "removeMapValue") { $0.isMap }
        let (keysID, valuesID) = (ListID(property: index, key: key.rawValue, isMapKeys: true), ListID(property: index, key: key.rawValue))
        try loadDirty(keysID)
        let (position, found) = Self.position(of: mapKey, in: dirtyLists[keysID]!)
        guard found else { return false }
        try loadDirty(valuesID)
        dirtyLists[keysID]!.remove(at: position)
        let removed = dirtyLists[valuesID]!.remove(at: position)
        changedInPlace(key, property: index)
        if let embedded = embeddedTarget(of: index) {
            try exchangeEmbedded(in: embedded, adding: [], removing: [removed], property: index)
        }
        return true
    }

    /// Where `mapKey` is among a map's stored keys (`MapKeyOrder`), and whether it is there.
    private static func position(of mapKey: String, in keys: [StoreValue]) -> (Int, Bool) {
        MapKeyOrder.position(of: mapKey, in: keys) { if case .string(let text) = $0 { text } else { "" } }
    }

    // MARK: Links to deleted objects

    /// Clears links to `deleted` objects of table `target` held by this table's objects, and
    /// removes them from lists.
    func clearLinks(to target: String, table targetID: UInt32, deleted: Set<Int64>) throws {
        // One object deleted (a loop of single deletes): a comparison, not a hash, per value.
        let only = deleted.count == 1 ? deleted.first : nil
        @inline(__always) func isDeleted(_ key: Int64) -> Bool { only.map { $0 == key } ?? deleted.contains(key) }
        let mixed = schema.properties.indices.filter { schema.properties[$0].kind == .mixed }
        if !mixed.isEmpty {
            try clearValues(of: mixed, storedHolds: { chunk, row in
                MixedEncoding.link(in: chunk.variableBytes(row)).map { $0.table == targetID && isDeleted($0.key) } ?? false
            }, holds: { value in
                if case .typedLink(let table, let key) = value { table == targetID && isDeleted(key.rawValue) } else { false }
            })
        }
        let linkProperties = schema.properties.indices.filter {
            schema.properties[$0].kind == .link && schema.properties[$0].objectType == target
        }
        guard !linkProperties.isEmpty else { return }
        // Through the holders, found by one scan for the whole loop.
        if let only, try clearLinksThroughHolders(to: only, linkProperties) { return }
        try clearValues(of: linkProperties, storedHolds: { chunk, row in isDeleted(chunk.int(row)) }, holds: { value in
            if case .link(let key) = value { isDeleted(key.rawValue) } else { false }
        })
    }

    /// Clears the values of `properties` (links or mixed values) that hold a deleted object:
    /// `storedHolds` tests a stored row without decoding it, `holds` a decoded value. A to-one
    /// link or a mixed property becomes nil; a map keeps the key with nil (as in RealmSwift); a
    /// list of links or a set drops the element; a list of mixed values keeps it as nil.
    private func clearValues(of properties: [Int], storedHolds: (ChunkView, Int) -> Bool, holds: (StoreValue) -> Bool) throws {
        var clears: [(ObjectKey, Int)] = []
        var lists: [(ObjectKey, Int, [StoreValue])] = []
        let columns = properties.filter { !schema.properties[$0].isList }
        if !columns.isEmpty {
            try forEachCluster { view in
                for index in columns {
                    let chunk = try view.column(index)
                    for row in 0..<min(view.count, chunk.count) where !chunk.isNull(row) && storedHolds(chunk, row) {
                        clears.append((view.key(at: row), index))
                    }
                }
                return true
            }
        }
        // Lists and maps: the transaction's own copies, then in one pass over the list tree
        // the stored ones it has not replaced (not a lookup and a decoded copy per object: a
        // loop of single deletes pays this once per delete).
        for index in properties where schema.properties[index].isList {
            let property = schema.properties[index]
            let drops = !property.isMap && (property.isSet || property.kind == .link)
            func cleared(_ values: [StoreValue]) -> [StoreValue]? {
                guard values.contains(where: holds) else { return nil }
                return drops ? values.filter { !holds($0) } : values.map { holds($0) ? .null : $0 }
            }
            for (id, values) in dirtyLists where id.property == index && !id.isMapKeys {
                if let kept = cleared(values) { lists.append((ObjectKey(id.key), index, kept)) }
            }
            try forEachStoredListEntry(index) { owner, chunk in
                guard (0..<chunk.count).contains(where: { !chunk.isNull($0) && storedHolds(chunk, $0) }),
                      dirtyLists[ListID(property: index, key: owner.rawValue)] == nil else { return }
                if let kept = cleared((0..<chunk.count).map { chunk.value($0, kind: property.kind) }) { lists.append((owner, index, kept)) }
            }
        }
        for (key, index) in clears { try set(.null, for: key, property: index) }
        for (key, index, kept) in lists { try setList(kept, for: key, property: index) }
    }

    /// Clears the links to the one deleted object `target` held by link `properties` (to-one,
    /// lists or maps) through `linkHolders`, scanning each property once per run of single
    /// deletes instead of once per delete. Returns false, having done nothing, when a
    /// property's target type is embedded: writing those links deletes objects, which the
    /// holders would not follow.
    private func clearLinksThroughHolders(to target: Int64, _ properties: [Int]) throws -> Bool {
        guard properties.allSatisfy({ embeddedTarget(of: $0) == nil }) else { return false }
        if linkHoldersSerial != tableSerial {
            if linkHolderBuilds >= 2 && linkHolderUses < linkHolderBuilds { return false }
            linkHolders.removeAll()
        }
        var built = false
        var work: [(index: Int, holders: [ObjectKey])] = []
        for index in properties {
            if linkHolders[index] == nil {
                linkHolders[index] = try scanLinkHolders(index)
                built = true
            }
            if let holders = linkHolders[index]?[target] { work.append((index, holders)) }
        }
        let link = StoreValue.link(ObjectKey(target))
        for (index, holders) in work {
            let property = schema.properties[index]
            // Holders deleted since the index was built (deletes leave it valid) are skipped.
            for owner in holders where try contains(owner) {
                if property.isList {
                    let values = try list(owner, property: index)
                    // A map keeps the key; its value becomes nil, as in RealmSwift. A list drops it.
                    try setList(property.isMap ? values.map { $0 == link ? .null : $0 } : values.filter { $0 != link },
                                for: owner, property: index)
                } else {
                    try set(.null, for: owner, property: index)
                }
            }
            linkHolders[index]?[target] = nil
        }
        if built { linkHolderBuilds += 1 } else { linkHolderUses += 1 }
        // These writes changed only what the holders now say.
        linkHoldersSerial = tableSerial
        return true
    }

    /// The objects holding each target key in link property `index`: its column, or its lists
    /// (the transaction's own, then the stored ones it has not replaced), each holder once.
    private func scanLinkHolders(_ index: Int) throws -> [Int64: [ObjectKey]] {
        var holders: [Int64: [ObjectKey]] = [:]
        if schema.properties[index].isList {
            for (id, values) in dirtyLists where id.property == index && !id.isMapKeys {
                let owner = ObjectKey(id.key)
                for case .link(let target) in values where holders[target.rawValue]?.last != owner {
                    holders[target.rawValue, default: []].append(owner)
                }
            }
            try forEachStoredListEntry(index) { owner, chunk in
                guard dirtyLists[ListID(property: index, key: owner.rawValue)] == nil else { return }
                for row in 0..<chunk.count where !chunk.isNull(row) {
                    let target = chunk.int(row)
                    if target >= 0, holders[target]?.last != owner { holders[target, default: []].append(owner) }
                }
            }
        } else {
            try forEachCluster { view in
                let chunk = try view.column(index)
                for row in 0..<min(view.count, chunk.count) where !chunk.isNull(row) {
                    let target = chunk.int(row)
                    if target >= 0 { holders[target, default: []].append(view.key(at: row)) }
                }
                return true
            }
        }
        return holders
    }

    // MARK: Commit

    /// Writes the transaction's clusters, lists and counters to the engine.
    func flush(into write: WriteTransaction) throws {
        guard metaLoaded || !dirty.isEmpty || !dirtyLists.isEmpty else { return }
        try loadMeta()
        if !dirty.isEmpty {
            let tree: Tree
            if let known = try clusters() { tree = known } else {
                tree = try write.createTree(named: clusterTreeName)
                clusterTree = tree
            }
            for (first, cluster) in dirty {
                if cluster.keys.count == 0 {
                    if cluster.existsInSnapshot {
                        _ = try write.delete(forKey: TreeKey.cluster(first, column: Cluster.keyColumn), in: tree)
                        for id in columnIDs { _ = try write.delete(forKey: TreeKey.cluster(first, column: id), in: tree) }
                    }
                    continue
                }
                // Keys on the stack; each chunk encoded straight where the engine keeps the
                // value (for most chunks, its overflow page image): no buffer in between.
                let keys = cluster.keys
                try TreeKey.withCluster(first, column: Cluster.keyColumn) { key in
                    try write.put(length: keys.encodedLength(), forKey: key, in: tree) { keys.encode(into: $0) }
                }
                for (index, buffer) in cluster.columns.enumerated() {
                    guard let buffer else { continue }
                    try TreeKey.withCluster(first, column: columnIDs[index]) { key in
                        try write.put(length: buffer.encodedLength(), forKey: key, in: tree) { buffer.encode(into: $0) }
                    }
                }
            }
        }
        if !dirtyLists.isEmpty {
            let tree = try write.createTree(named: listTreeName)
            for (id, values) in dirtyLists {
                let column = id.isMapKeys ? TreeKey.mapKeysColumn(columnIDs[id.property]) : columnIDs[id.property]
                let key = TreeKey.list(column: column, ObjectKey(id.key))
                if values.isEmpty {
                    _ = try write.delete(forKey: key, in: tree)
                    continue
                }
                let property = schema.properties[id.property]
                let buffer = id.isMapKeys ? ColumnBuffer(kind: .string, optional: false, capacity: values.count)
                    : ColumnBuffer(kind: property.kind, optional: property.isOptional, capacity: values.count)
                for (row, value) in values.enumerated() {
                    buffer.insertRow(at: row)
                    buffer.set(value, at: row)
                }
                buffer.encode(into: &encodeScratch)
                try write.put(encodeScratch, forKey: key, in: tree)
            }
        }
        try session.storeTableMeta(tableID, nextKey: nextKey, count: storedCount, in: write)
    }
}

/// Write access to one fixed-width column buffer, for typed setters.
package struct ColumnBufferHandle {
    let buffer: ColumnBuffer

    @inline(__always)
    package func set<T>(_ value: T, at row: Int) { buffer.setFixed(value, at: row) }

    package func setNull(at row: Int) { buffer.setNull(row) }
}

/// The row of an object being inserted (`TableAccess.insert(primaryKey:writing:)`): typed
/// setters that write into the cluster's column buffers. Valid only during that call. Each
/// setter must be the one of the column's kind (the object layer's fields were checked against
/// the table's schema); `set(_:_:)` takes any value and checks it.
package struct InsertRow {
    private let columns: UnsafeBufferPointer<Unmanaged<ColumnBuffer>?>
    private let row: Int
    private unowned(unsafe) let table: TableAccess

    fileprivate init(columns: UnsafeBufferPointer<Unmanaged<ColumnBuffer>?>, row: Int, table: TableAccess) {
        self.columns = columns
        self.row = row
        self.table = table
    }

    /// The column's buffer without reference counting (the cluster holds it during the insert).
    @inline(__always)
    private func withBuffer<R>(_ column: Int, _ body: (ColumnBuffer) -> R) -> R {
        columns[column].unsafelyUnwrapped._withUnsafeGuaranteedRef(body)
    }

    /// An `.int` column.
    package func setInt(_ value: Int64, _ column: Int) { withBuffer(column) { $0.setFixed(value, at: row) } }
    /// A `.double` column.
    package func setDouble(_ value: Double, _ column: Int) { withBuffer(column) { $0.setFixed(value, at: row) } }
    /// A `.float` column.
    package func setFloat(_ value: Float, _ column: Int) { withBuffer(column) { $0.setFixed(value, at: row) } }
    /// A `.bool` column.
    package func setBool(_ value: Bool, _ column: Int) { withBuffer(column) { $0.setFixed(UInt8(value ? 1 : 0), at: row) } }
    /// A `.date` column, as seconds since the reference date.
    package func setDate(_ seconds: Double, _ column: Int) { withBuffer(column) { $0.setFixed(seconds, at: row) } }
    /// A `.string` column.
    package func setString(_ value: String, _ column: Int) {
        var value = value
        value.withUTF8 { bytes in withBuffer(column) { _ = $0.setVariable(UnsafeRawBufferPointer(bytes), at: row) } }
    }
    /// Any value (`.null` for nil, or a link column's "no object"); stops with a message if
    /// it does not fit the column, like a value of the wrong kind in `insert(_:)`.
    package func set(_ value: StoreValue, _ column: Int) {
        if let kind = value.kind {
            require(table.kinds[column].stores(kind), "a \(kind) value cannot be stored in a \(table.kinds[column]) column")
        } else {
            require(table.optionals[column], "nil cannot be stored in a non-optional column")
        }
        withBuffer(column) { _ = $0.set(value, at: row) }
    }
}

/// Cluster views sorted by first key (at most `capacity`; cleared when full).
struct ClusterViewCache {
    static let capacity = 4096
    private var firsts: [Int64] = []
    private var views: [ClusterView] = []

    var count: Int { views.count }

    mutating func removeAll(keepingCapacity: Bool) {
        firsts.removeAll(keepingCapacity: keepingCapacity)
        views.removeAll(keepingCapacity: keepingCapacity)
    }

    /// The position of the first entry whose first key is greater than `key`. Clusters hold
    /// runs of consecutive keys, so once the cache holds most of a table's clusters their
    /// first keys are close to evenly spaced: the search first guesses by interpolation and
    /// steps to the boundary when the guess is next to it (random lookups made every branch of
    /// a plain bisection a misprediction), else bisects.
    private func upperBound(_ key: Int64) -> Int {
        let count = firsts.count
        if count >= 8 {
            let first = firsts[0], last = firsts[count &- 1]
            if key < first { return 0 }
            if key >= last { return count }
            // first ≤ key < last, so both differences are positive and the quotient is below
            // count − 1; as unsigned values they cannot overflow.
            let spread = UInt64(bitPattern: last &- first), offset = UInt64(bitPattern: key &- first)
            let (product, overflow) = offset.multipliedReportingOverflow(by: UInt64(count &- 1))
            if !overflow {
                let guess = Int(product / spread)  // firsts[guess] is about key
                // The answer is guess + 1 when firsts[guess] ≤ key < firsts[guess + 1].
                if firsts[guess] <= key {
                    if firsts[guess &+ 1] > key { return guess &+ 1 }
                    if guess &+ 2 < count, firsts[guess &+ 2] > key { return guess &+ 2 }
                } else if guess > 0, firsts[guess &- 1] <= key {
                    return guess
                }
            }
        }
        var low = 0
        var high = count
        while low < high {
            let mid = (low &+ high) >> 1
            if firsts[mid] <= key { low = mid &+ 1 } else { high = mid }
        }
        return low
    }

    /// The cached cluster with the greatest first key at or below `key`.
    func last(atOrBelow key: Int64) -> ClusterView? {
        let position = upperBound(key)
        return position > 0 ? views[position - 1] : nil
    }

    /// The cached cluster starting at `first`.
    func view(first: Int64) -> ClusterView? {
        let position = upperBound(first)
        guard position > 0, firsts[position - 1] == first else { return nil }
        return views[position - 1]
    }

    mutating func insert(_ view: ClusterView) {
        let position = upperBound(view.firstKey)
        if position > 0, firsts[position - 1] == view.firstKey {
            views[position - 1] = view
            return
        }
        firsts.insert(view.firstKey, at: position)
        views.insert(view, at: position)
    }
}

/// The offset between Int primary keys and object keys that the last index lookup showed, and
/// whether guessing with it pays: after 8 misses in a row (keys unrelated to insertion order)
/// the next 1,024 lookups go straight to the index before guessing is tried again.
struct PrimaryKeyGuess {
    private var offset: Int64 = 0
    private var known = false
    private var misses = 0
    private var resting = 0
    private(set) var hits = 0

    /// The key to try for `primaryKey`, or nil to ask the index.
    @inline(__always)
    mutating func key(for primaryKey: Int64) -> Int64? {
        guard known else { return nil }
        if resting > 0 {
            resting -= 1
            return nil
        }
        let (key, overflow) = primaryKey.subtractingReportingOverflow(offset)
        return overflow || key < 0 ? nil : key
    }

    @inline(__always)
    mutating func hit() {
        misses = 0
        hits &+= 1
    }

    mutating func miss() {
        misses += 1
        if misses >= 8 {
            misses = 0
            resting = 1_024
        }
    }

    mutating func learn(primaryKey: Int64, key: Int64) {
        offset = primaryKey &- key
        known = true
    }
}
