public import Foundation
import StrataStorage
import StrataStore

/// A store of `Codable` values in a Strata database, by id: the database-backed replacement
/// for the "actor with a dictionary and a JSON file" repository.
///
/// ```swift
/// struct Question: Codable, Identifiable, Sendable {
///     var id: String
///     var title: String
///     var owner: String
///     var done: Bool
///     var created: Date
/// }
///
/// let questions = try Repository(Question.self, in: configuration, indexes: ["owner"])
/// try await questions.save(Question(id: "q-1", title: "Why?", owner: "Ann", done: false, created: .now))
/// let open = try await questions.items(where: "owner == %@ AND done == false", "Ann", sortedBy: "created")
/// ```
///
/// Each stored property of `T` is a column of an object type named after `T` (or `name:`), so
/// predicates and sorting run on the columns and `indexes:` are real secondary indexes;
/// ``RepositoryError`` lists what can go wrong. How properties map to columns, and what is
/// stored as JSON, is described in <doc:Repositories>. Several repositories (of different
/// types) may share one file; each opens its own instance of the database, isolated to the
/// repository.
public final actor Repository<T: Codable & Identifiable & Sendable> where T.ID: RepositoryIdentifier {
    /// The database file and how it opens.
    public nonisolated let configuration: Database.Configuration
    /// The name of the object type that holds the items.
    public nonisolated let typeName: String
    let table: CodableTable
    /// Object type → old property name → new, applied when the file still has the old one
    /// (`renamed:` resolved to the types whose columns it renames).
    private let renamed: [String: [String: String]]
    private var database: Database?
    /// The column map of the instance's table context for the type, made on first read.
    private var columnMap: ColumnMap?
    /// The running `changes` observations (Repository+Observation.swift).
    var observations = RepositoryObservations<T>()
    /// Items `find(by:)` decoded, valid for one version of the file (ItemCache.swift).
    @usableFromInline var cache: ItemCache<T>
    /// The open file's engine, for the newest version `find(by:)` compares the cache's with.
    /// Unretained so that reading the version costs no reference counting on the hit path (the
    /// engine keeps weak references, which makes each retain a slow one): the engine lives as
    /// long as `database`, which holds it and is never released once set.
    private var engine: Unmanaged<StorageEngine>?
    /// The most ids a save or delete lists for the cache; a larger batch empties it instead.
    private static var cachedIDsPerCommit: Int { 1_024 }

    /// A repository of `type`'s values in the database `configuration` names.
    ///
    /// The columns are derived from the type at once (see <doc:Repositories>), so a type that
    /// cannot be stored is an error here; the file is opened on first use. A configuration
    /// without `objectTypes` is opened with none: the repository's instance manages only its
    /// own type, and `Object` models in the same file are opened as usual by their own
    /// instances.
    ///
    /// When the file stores the type with other columns than `type` makes (a property added,
    /// removed or renamed), the file is changed to match on first use, in one transaction;
    /// a change that would lose or invent values is a ``RepositoryError/schemaMismatch(type:property:reason:)``
    /// and leaves the file as it is (see "When the type changes" in <doc:Repositories>).
    ///
    /// - Parameters:
    ///   - name: the object type's name in the file (default: the type's name).
    ///   - indexes: names of properties to keep a secondary index on.
    ///   - renamed: properties renamed since the file was written, old name → new name: the
    ///     values stored under the old name are carried over to the new one. A property of a
    ///     nested struct is named by its path: `["address.zip": "address.postalCode"]`.
    ///   - cachedItems: how many items `find(by:)` keeps decoded between calls (see
    ///     "Lookups and the item cache" in <doc:Repositories>); nil for the default, as many as
    ///     take about 16 MiB inline (at least 1,024), 0 for none.
    public init(_ type: T.Type = T.self, in configuration: Database.Configuration, name: String? = nil,
                indexes: [String] = [], renamed: [String: String] = [:], cachedItems: Int? = nil) throws(RepositoryError) {
        var configuration = configuration
        if configuration.objectTypes == nil { configuration.objectTypes = [] }
        self.configuration = configuration
        let typeName = name ?? String(describing: type)
        self.typeName = typeName
        let table = try CodableTable(type, typeName: typeName, indexes: indexes)
        self.renamed = try table.typeRenames(renamed)
        self.table = table
        let limit = max(0, cachedItems ?? ItemCache<T>.defaultLimit)
        cacheLimit = limit
        cache = ItemCache(limit: limit)
    }

    /// A repository of `type`'s values in the database file at `fileURL`.
    public init(_ type: T.Type = T.self, fileURL: URL, name: String? = nil, indexes: [String] = [],
                renamed: [String: String] = [:], cachedItems: Int? = nil) throws(RepositoryError) {
        try self.init(type, in: Database.Configuration(fileURL: fileURL), name: name, indexes: indexes, renamed: renamed,
                      cachedItems: cachedItems)
    }

    /// How many items `find(by:)` keeps decoded between calls at most (`cachedItems:`).
    public nonisolated var cachedItemLimit: Int { cacheLimit }
    private nonisolated let cacheLimit: Int

    // MARK: Writing

    /// Stores `item`, replacing the stored item with the same id if there is one.
    public func save(_ item: T) async throws(RepositoryError) {
        try await save(contentsOf: [item])
    }

    /// Stores every item in one transaction (all or none), replacing stored items with the
    /// same ids.
    public func save(contentsOf items: some Sequence<T> & Sendable) async throws(RepositoryError) {
        let database = try await open()
        let table = table
        var ids: [T.ID]? = []
        let versions = try write(database) { () throws(RepositoryError) in
            let columns = try columnMap(database)
            // One row at a time, so that a large batch's encoded rows are never all in memory;
            // an item that cannot be stored throws here and the transaction rolls back.
            for item in items {
                try table.write(item, columns: columns)
                if ids != nil {
                    if ids!.count < Self.cachedIDsPerCommit { ids!.append(item.id) } else { ids = nil }
                }
            }
        }
        cache.commit(from: versions.base, to: versions.committed, writing: ids)
    }

    /// Deletes the item with this id; nothing happens when there is none.
    public func delete(_ id: T.ID) async throws(RepositoryError) {
        let database = try await open()
        let typeName = typeName
        let versions = try write(database) {
            if let object = database.dynamicObject(ofType: typeName, forPrimaryKey: id._repositoryStored) {
                database.delete(object)
            }
        }
        cache.commit(from: versions.base, to: versions.committed, writing: [id])
    }

    /// Deletes every item matching a string predicate (`"done == true"`), in one transaction;
    /// returns how many were deleted.
    @discardableResult
    public func delete(where predicate: String, _ arguments: any Sendable...) async throws(RepositoryError) -> Int {
        let database = try await open()
        let matching = try query(database, predicate, arguments, sortedBy: nil, ascending: true)
        let count = matching.count
        let versions = try write(database) { database.delete(matching) }
        cache.commit(from: versions.base, to: versions.committed, writing: nil)
        return count
    }

    // MARK: Reading

    /// The item with this id, or nil.
    ///
    /// Items found are kept decoded (up to `cachedItems:`) for the version of the file they
    /// were read at, so a second lookup of the same id costs a dictionary read until a commit
    /// (in this process or another) makes a new version; see "Lookups and the item cache" in
    /// <doc:Repositories>.
    @inlinable
    public func find(by id: T.ID) async throws(RepositoryError) -> T? {
        // The hit path, specialized in the caller: one load of the file's newest version (no
        // refresh) and a read of the cache when that is the version the cache was filled at.
        if let item = cache.hit(id, at: newestVersion()) { return item }
        return try await findReading(id)
    }

    /// The file's newest version: one load of the counter every commit publishes (in this
    /// process or another). The cache answers only when it is at this version, so an item
    /// another commit changed is never returned. 0 before the file is open, when the cache
    /// holds nothing.
    @usableFromInline
    func newestVersion() -> UInt64 {
        engine?._withUnsafeGuaranteedRef { $0.latestVersion } ?? 0
    }

    /// `find(by:)` when the cache does not answer: moves the instance to the newest version
    /// (opening the file on first use), answers from the cache at that version, or finds the
    /// row with the primary-key lookup, decodes it and keeps it.
    @usableFromInline
    func findReading(_ id: T.ID) async throws(RepositoryError) -> T? {
        // Once open, no suspension point: the lookup runs in the one hop onto the actor.
        let database: Database
        if let opened = self.database {
            opened.refresh()
            database = opened
        } else {
            database = try await openForReading()
        }
        let version = database.version
        if let cached = cache.item(id, at: version) { return cached }
        let columns = try columnMap(database)
        let located: (key: ObjectKey, cluster: ClusterView, row: Int)?
        do {
            located = try columns.context.table.locate(primaryKey: id._repositoryStoreValue)
        } catch {
            throw .database(reason: "looking up a '\(typeName)' item by id failed: \(error)")
        }
        guard let (key, cluster, row) = located else { return nil }
        let item: T = try columns.item(T.self, cluster: cluster, row: row, key: key)
        cache.insert(item, at: version)
        return item
    }

    /// Every item, in the order they were first saved.
    public func loadAll() async throws(RepositoryError) -> [T] {
        let database = try await openForReading()
        let columns = try columnMap(database)
        var items: [T] = []
        do {
            items.reserveCapacity(try columns.context.table.count)
            try columns.context.table.forEachCluster { cluster in
                for row in 0..<cluster.count {
                    items.append(try columns.item(T.self, cluster: cluster, row: row, key: cluster.key(at: row)))
                }
                return true
            }
        } catch let error as RepositoryError {
            throw error
        } catch {
            throw .database(reason: "reading the '\(typeName)' items failed: \(error)")
        }
        return items
    }

    /// How many decoded items the lookup cache holds now (for tests of its bound).
    var cachedItemCount: Int { cache.count }

    /// How many items are stored.
    public var count: Int {
        get async throws(RepositoryError) { try await openForReading().dynamicObjects(typeName).count }
    }

    /// The items matching a string predicate (see <doc:StringPredicates>; property names are
    /// the type's coding keys), optionally sorted by one property.
    ///
    /// ```swift
    /// let open = try await questions.items(where: "owner == %@ AND done == false", "Ann", sortedBy: "created")
    /// ```
    public func items(where predicate: String, _ arguments: any Sendable..., sortedBy sortKey: String? = nil,
                      ascending: Bool = true) async throws(RepositoryError) -> [T] {
        let database = try await openForReading()
        return try decode(query(database, predicate, arguments, sortedBy: sortKey, ascending: ascending))
    }

    /// Every item sorted by one property.
    public func items(sortedBy sortKey: String, ascending: Bool = true) async throws(RepositoryError) -> [T] {
        let database = try await openForReading()
        return try decode(query(database, nil, [], sortedBy: sortKey, ascending: ascending))
    }

    // MARK: The database

    /// The instance, opened (and the type's table added or checked) on first use.
    private func open() async throws(RepositoryError) -> Database {
        if let database { return database }
        let opened: Database
        do {
            opened = try await Database(configuration: configuration, actor: self)
        } catch {
            throw .database(reason: "opening \(configuration.fileURL?.path ?? configuration.description) failed: \(error)")
        }
        // Another call may have opened it while this one waited.
        if let database { return database }
        try prepareTable(in: opened)
        database = opened
        engine = Unmanaged.passUnretained(opened.core.session.store.engine)
        return opened
    }

    /// The instance, moved to the newest version so that other instances' commits are seen
    /// (a check of one counter when nothing was committed since).
    func openForReading() async throws(RepositoryError) -> Database {
        let database: Database
        if let opened = self.database { database = opened } else { database = try await open() }
        database.refresh()
        return database
    }

    /// The column map of the instance's table context for the type, kept while the context is
    /// the instance's.
    func columnMap(_ database: Database) throws(RepositoryError) -> ColumnMap {
        let core = database.core
        if let columnMap, columnMap.isCurrent, columnMap.context.core === core { return columnMap }
        let context: TableContext
        do {
            context = try core.dynamicContext(named: typeName)
        } catch {
            throw .database(reason: "\(error)")
        }
        let made = ColumnMap(table: table, context: context)
        columnMap = made
        return made
    }

    /// Adds the type's table to the file, or brings the one it has to the type (SchemaEvolution.swift).
    private func prepareTable(in database: Database) throws(RepositoryError) {
        let session = database.core.session
        if session.table(named: typeName) != nil {
            if (try? table.check(stored: CodableTable.sessionSchema(session))) != nil { return }
            guard !configuration.readOnly else { return try table.check(stored: CodableTable.sessionSchema(session)) }
            try evolveTable(in: session)
            return
        }
        guard !configuration.readOnly else {
            throw .database(reason: "the read-only file has no '\(typeName)' items and cannot add the type")
        }
        do {
            try session.addTables(table.schemas)
        } catch {
            // The file has some of the types in another form (another process added them
            // since this one opened the file, or embedded types outlived an earlier version).
            try evolveTable(in: session)
            return
        }
        try table.check(stored: CodableTable.sessionSchema(session))
    }

    /// Changes the file's definition of the type (and its embedded types) to the type's, in one
    /// write transaction, after checking nothing is lost.
    private func evolveTable(in session: StoreSession) throws(RepositoryError) {
        let table = table
        let renamed = renamed
        let defaults = table.defaultsForMissingKeys(T.self)
        let nestedDefaults = table.nestedDefaultsForMissingKeys(T.self)
        var storedSchema = Schema([])
        do {
            _ = try session.evolveTables(table.schemas, renames: renamed, defaults: [typeName: defaults], validate: { stored, objectCount in
                storedSchema = stored
                try table.checkEvolution(from: stored, renames: renamed, objectCount: objectCount)
            }, fill: { existingKeys in
                try table.fillNestedDefaults(nestedDefaults, addedTo: storedSchema, renames: renamed[table.typeName] ?? [:],
                                             in: session, existingKeys: existingKeys)
            })
        } catch let error as RepositoryError {
            throw error
        } catch {
            throw .database(reason: "changing the file's '\(typeName)' to the Swift type failed (the file is unchanged): \(error)")
        }
        try table.check(stored: CodableTable.sessionSchema(session))
    }

    /// Runs `block` in a write transaction and commits it; returns the version the transaction
    /// started from and the one its commit made (nil when the instance is not at that version
    /// afterwards), for the item cache.
    @discardableResult
    private func write(_ database: Database, _ block: () throws(RepositoryError) -> Void) throws(RepositoryError)
        -> (base: UInt64, committed: UInt64?) {
        var base: UInt64 = 0
        var committing: UInt64?
        do {
            try database.write { () throws -> Void in
                base = database.version
                committing = database.core.session.committingVersion
                try block()
            }
        } catch let error as RepositoryError {
            throw error
        } catch {
            throw .database(reason: "the write failed: \(error)")
        }
        return (base, committing == database.version ? committing : nil)
    }

    func query(_ database: Database, _ predicate: String?, _ arguments: [any Sendable], sortedBy sortKey: String?,
                       ascending: Bool) throws(RepositoryError) -> Results<DynamicObject> {
        var results = database.dynamicObjects(typeName)
        if let predicate {
            do {
                results = try results.filter(FilterPredicate(predicate, argumentArray: arguments.map { $0 as Any }))
            } catch {
                throw .invalidQuery(type: typeName, reason: "\(error)")
            }
        }
        if let sortKey {
            guard let field = table.fields.first(where: { $0.name == sortKey }), case .column = field.storage else {
                throw .invalidQuery(type: typeName, reason: "cannot sort by '\(sortKey)': sorting takes a property stored in its own column (\(table.fields.filter { if case .column = $0.storage { true } else { false } }.map(\.name).joined(separator: ", ")))")
            }
            results = results.sorted(byKeyPath: sortKey, ascending: ascending)
        }
        return results
    }

    private func decode(_ results: Results<DynamicObject>) throws(RepositoryError) -> [T] {
        let columns = try columnMap(results.database)
        let keys = results.keys()
        var items: [T] = []
        items.reserveCapacity(keys.count)
        for key in keys { items.append(try table.item(T.self, columns: columns, key: key)) }
        return items
    }
}

extension Repository {
    /// The object type recording which JSON files a repository's file has imported.
    static var importRecordType: String { "StrataJSONImport" }

    /// Imports `load()`'s items unless the file records an import under `key` already: the items
    /// and the record commit in one transaction, so a crash leaves either both or neither.
    /// `load` runs only when the import is still to do; its error is thrown as it is.
    func importOnce(key: String, _ load: () throws(RepositoryError) -> [T]) async throws(RepositoryError) {
        let database = try await openForReading()
        let session = database.core.session
        if session.table(named: Self.importRecordType) == nil {
            do {
                try session.addTables([ObjectSchema(name: Self.importRecordType, properties: [
                    PropertySchema(name: "id", kind: .string, isPrimaryKey: true),
                    PropertySchema(name: "imported", kind: .date),
                ])])
            } catch {
                throw .database(reason: "adding the import record to the file failed: \(error)")
            }
        }
        if database.dynamicObject(ofType: Self.importRecordType, forPrimaryKey: key) != nil { return }
        let items = try load()
        let table = table
        try write(database) { () throws(RepositoryError) in
            guard database.dynamicObject(ofType: Self.importRecordType, forPrimaryKey: key) == nil else { return }
            let columns = try columnMap(database)
            // An item that cannot be stored throws here and the transaction (record included)
            // rolls back.
            for item in items { try table.write(item, columns: columns) }
            database.dynamicCreate(Self.importRecordType, value: ["id": key, "imported": Date()], update: .error)
        }
    }
}
