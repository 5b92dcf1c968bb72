// One table as seen by one session: its schema-derived constants, the state of the current
// transaction, and locating objects and reading their clusters. The rest of its work lives in
// extensions named after it: indexes (TableAccess+Indexes), inserts, updates and deletes
// (+Writes), lists, sets and maps (+Collections), links to deleted objects (+Links), embedded
// objects' one-parent rule (+EmbeddedObjects), the commit's flush and what it carries over
// (+Flush), and a chained write's savepoints (+WriteState); counting through an index
// (Query/TableAccess+IndexCount), inverse relationships (Schema/InverseProperty) and checking
// its objects (Verification/TableAccess+Verification) sit with their subjects. What it
// remembers within a transaction is one value, `caches` (TableAccessCaches.swift).

import StrataStorage

package final class TableAccess {
    // Alive while used: the session holds this table, and callers reach it through the session.
    unowned(unsafe) let session: StoreSession
    /// The table's position in the session's schema.
    package let position: Int
    /// The table's type. Changes only in its properties' `name`s (`adoptDeclaredNames`), which
    /// nothing derived below depends on.
    package internal(set) var schema: ObjectSchema
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
    // touches skips dynamic exclusivity checks (`swift_beginAccess` costs more than the rest
    // of a cache hit in a lookup).

    /// What this transaction found once and keeps to skip the work again; `reset()` drops all
    /// of it at once (TableAccessCaches.swift).
    @exclusivity(unchecked) var caches = TableAccessCaches()
    /// Whether `nextKey` and `storedCount` are loaded for this transaction.
    @exclusivity(unchecked) var metaLoaded = false

    // Write state.
    @exclusivity(unchecked) var dirty: [Int64: DirtyCluster] = [:]
    /// First keys of clusters created by this transaction, ascending (all above the snapshot's).
    @exclusivity(unchecked) var newClusters: [Int64] = []
    @exclusivity(unchecked) var nextKey: Int64 = 0
    @exclusivity(unchecked) var storedCount = 0
    @exclusivity(unchecked) var changes = ChangeTracker()
    var dirtyLists: [ListID: [StoreValue]] = [:]

    // Across transactions.

    /// What this session's last commit left of the table (`carryOver(committed:)`), for the
    /// next write transaction if it starts from the version that commit made.
    @exclusivity(unchecked) var carried: Carried?
    /// The cluster and primary-key trees as this session's last commit left them, for the next
    /// write transaction: the engine takes them only if it starts from the version that commit
    /// made (`WriteTransaction.tree(committed:)`), and the trees are looked up by name otherwise.
    @exclusivity(unchecked) var carriedTrees: (cluster: CommittedTree?, primaryKey: CommittedTree?) = (nil, nil)
    /// The buffer the commit encodes each list into (its capacity is kept between commits).
    var encodeScratch: [UInt8] = []
    /// Set when the transaction that added this table was rolled back (see
    /// `StoreSession.dropPendingTables`): it holds no objects and takes no changes.
    /// Read through `isDropped`: another module reading a stored property accesses it with
    /// a dynamic exclusivity check whatever this declaration says (the object layer's context
    /// lookup reads it per object), while the getter's own access stays unchecked.
    @exclusivity(unchecked) private(set) var dropped = false
    /// For a non-optional Int primary key: the guess of an object's key from its primary key
    /// (`locate(primaryKey:)`), learned across transactions (each guess is checked).
    @exclusivity(unchecked) var keyGuess = PrimaryKeyGuess()
    /// How many write transactions took the last cluster the previous commit carried over
    /// (for tests).
    package internal(set) var carriedClustersTaken = 0
    /// How many write transactions took the cluster tree the previous commit carried over
    /// (for tests).
    package private(set) var carriedTreesTaken = 0
    /// How many Int primary-key lookups the guess answered (for tests).
    package var primaryKeyGuessHits: Int { keyGuess.hits }
    package var isDropped: Bool { dropped }

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
        caches.reset()
        metaLoaded = false
        // A few clusters' worth of table is kept: a one-object commit would grow it again.
        dirty.removeAll(keepingCapacity: dirty.count <= 8)
        newClusters.removeAll()
        changes = ChangeTracker()
        dirtyLists.removeAll()
    }

    /// Empties the table for good: the transaction that added it was rolled back.
    func drop() {
        reset()
        carried = nil
        carriedTrees = (nil, nil)
        dropped = true
    }

    /// Notes a change to this table's objects and to the session's content; a change to
    /// property `index` that holds no links (a value, or a list or map of values) leaves
    /// `caches.linkHolders` valid.
    @inline(__always)
    func noteChange(property index: Int? = nil) {
        if index.map({ kinds[$0] == .link }) ?? true { caches.tableSerial &+= 1 }
        session.noteContentChange()
    }

    var reading: any TransactionReading { session.reading }

    func clusters() throws(StoreError) -> Tree? {
        try loadTrees()
        return caches.clusterTree
    }

    /// Looks up this transaction's trees, once per transaction.
    @inline(__always)
    func loadTrees() throws(StoreError) {
        if caches.treeSerial != session.transactionSerial {
            caches.treeSerial = session.transactionSerial
            // Not through the session's table of trees (a String hash per tree and
            // transaction): these handles are kept here for the transaction.
            let cluster = try session.lookUpTree(clusterTreeName, carried: carriedTrees.cluster)
            caches.clusterTree = cluster.tree
            caches.primaryKeyTree = try session.lookUpTree(primaryKeyTreeName, carried: carriedTrees.primaryKey).tree
            if cluster.carried { carriedTreesTaken &+= 1 }
            caches.lookupCursor = nil
        }
    }

    func clusterCursor(_ tree: Tree) throws -> Cursor {
        if session.readsThroughWrite { return try reading.makeCursor(on: tree) }
        if let cursor = caches.lookupCursor { return cursor }
        let cursor = try reading.makeCursor(on: tree)
        caches.lookupCursor = cursor
        return cursor
    }

    func loadMeta() throws(StoreError) {
        guard !metaLoaded else { return }
        if let carried = carriedForThisWrite {
            (nextKey, storedCount) = (carried.nextKey, carried.storedCount)
        } else {
            (nextKey, storedCount) = try session.tableMeta(tableID)
        }
        if session.readsThroughWrite { nextKey = max(nextKey, session.store.firstUnusedKey(inTable: tableID)) }
        metaLoaded = true
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

    func chunk(in tree: Tree, key: [UInt8], expectedCount: Int?, expectedWidth: Int) throws(StoreError) -> ChunkView {
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
        if let last = caches.lastView, last.generation == session.generation, let row = last.row(of: key.rawValue) {
            return (last, row)
        }
        // A key lives in one cluster per version, so a cached cluster of this generation that
        // holds it is the one. Write transactions skip this: their dirty clusters take
        // precedence over the snapshot's views the cache holds.
        if caches.viewCacheGeneration == session.generation, !session.readsThroughWrite,
           let view = caches.viewCache.last(atOrBelow: key.rawValue), let row = view.row(of: key.rawValue) {
            caches.lastView = view
            return (view, row)
        }
        guard let view = try clusterView(containing: key.rawValue), let row = view.row(of: key.rawValue) else { return nil }
        caches.lastView = view
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

    func clusterView(containing key: Int64) throws(StoreError) -> ClusterView? {
        if let first = newClusters.last, key >= newClusters[0] {
            var chosen = first
            for candidate in newClusters.reversed() where candidate <= key { chosen = candidate; break }
            return try clusterView(firstKey: chosen)
        }
        // Clusters hold disjoint, ascending key ranges (keys are handed out in increasing
        // order, and a cluster's stay sorted), so a key between a cluster's first and last keys
        // can be in no other cluster: the one the last look-up found answers, if it is still
        // this transaction's copy (a copy or a reset replaces it).
        if let hinted = caches.lastLocatedDirty, key >= hinted.firstKey, hinted.keys.count > 0,
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
                caches.lastLocatedDirty = cluster
                return try dirtyView(cluster)
            }
            if caches.viewCacheGeneration == session.generation, let view = caches.viewCache.view(first: first) { return view }
            var columns = [ChunkView](repeating: .absent, count: schema.properties.count)
            while true {
                let column = Int(cursor.key[8]) << 8 | Int(cursor.key[9])
                if column == Int(Cluster.keyColumn) {
                    let keys = try Cluster.keys(encoded: cursor.value, table: schema.name)
                    let view = try makeView(first: first, keys: keys, columns: columns)
                    if caches.viewCacheGeneration != session.generation || caches.viewCache.count >= ClusterViewCache.capacity {
                        caches.viewCache.removeAll(keepingCapacity: true)
                        caches.viewCacheGeneration = session.generation
                    }
                    caches.viewCache.insert(view)
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

    func dirtyView(_ cluster: DirtyCluster) throws(StoreError) -> ClusterView {
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
    func snapshotView(firstKey first: Int64) throws(StoreError) -> ClusterView? {
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
    func readCluster(_ cursor: Cursor, first: Int64) throws -> ClusterView {
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
}
