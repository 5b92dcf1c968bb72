public import Foundation
public import Dispatch
public import StrataStore
import StrataStorage

/// A database instance: one view of a Strata file (or in-memory database), confined to the
/// thread, serial queue or actor that opened it. RealmSwift calls this type `Realm`.
///
/// Open it where you will use it:
///
/// ```swift
/// let db = try Database()                                   // this thread
/// let db = try Database(configuration: config, queue: q)    // a serial queue (open it on q)
/// let db = try await Database(actor: self)                  // inside an actor
/// let db = try await Database()                             // on the main actor
/// ```
///
/// Opening the same configuration again in the same context gives the same underlying
/// instance. Instances are not `Sendable`: the compiler keeps them in their context, and a use
/// from the wrong thread, queue or actor stops with a message that says so. Pass primary keys
/// or `Sendable` values between contexts instead.
public struct Database {
    let core: DatabaseCore

    init(core: DatabaseCore) { self.core = core }

    // MARK: Opening

    /// Opens a database confined to the current thread (or to `queue`, which must be serial and
    /// must be the queue this is called on).
    ///
    /// On the main thread or the main queue (or with `queue: .main`) the instance belongs to
    /// the main actor: it is the instance `try await Database()` gives in `@MainActor` code, it
    /// refreshes itself and delivers notifications through the main queue, and the async writes
    /// work on it. That needs the main queue to run: an async `@main`, `dispatchMain()` or
    /// `RunLoop.main.run()` (app frameworks do it for you). On any other thread, the instance
    /// has no way to be handed work: it moves to newer versions, and delivers notifications,
    /// only when you call `refresh()` or begin a write.
    public init(configuration: Configuration = .defaultConfiguration, queue: DispatchQueue? = nil) throws {
        let confinement: Confinement
        if let queue {
            confinement = .opened(on: queue)
            // dispatchPrecondition would stop without a word on Linux; say what went wrong.
            let onQueue = switch confinement {
            case .queue(_, let key): DispatchQueue.getSpecific(key: key) != nil
            default: Confinement.isOnMainQueue
            }
            require(onQueue, """
                Database(configuration:queue:) was called outside the queue '\(queue.label)'. A queue-confined \
                database must be opened on its queue: call it inside queue.sync { } or queue.async { }.
                """)
        } else {
            confinement = .callingThread
        }
        core = try DatabaseCore.open(resolving: configuration, confinement)
    }

    /// Opens the database at `fileURL` with the default configuration's other settings.
    public init(fileURL: URL) throws {
        var configuration = Configuration.defaultConfiguration
        configuration.fileURL = fileURL
        try self.init(configuration: configuration)
    }

    /// Opens a database isolated to the main actor: `try await Database()` in `@MainActor` code.
    @MainActor
    public init(configuration: Configuration = .defaultConfiguration) async throws {
        core = try DatabaseCore.open(resolving: configuration, .mainActor)
    }

    /// Opens a database isolated to `actor` (a custom actor, a global actor's shared instance or
    /// `MainActor.shared`). Call it from code isolated to that actor; inside an actor's
    /// initializer, `try await Database(actor: self)`.
    public init(configuration: Configuration = .defaultConfiguration, actor: isolated any Actor) async throws {
        try Task.checkCancellation()
        core = try DatabaseCore.open(resolving: configuration, .isolated(to: actor))
    }

    /// Opens a database isolated to the caller's actor.
    public static func open(configuration: Configuration = .defaultConfiguration,
                            _isolation actor: isolated any Actor = #isolation) async throws -> Database {
        try await Database(configuration: configuration, actor: actor)
    }

    // MARK: Properties

    /// The configuration the instance was opened with.
    public var configuration: Configuration { core.configuration }

    /// The file's schema: every object type it holds.
    public var schema: Schema { core.session.store.schema }

    /// Whether the database holds no objects.
    public var isEmpty: Bool {
        core.verify("isEmpty")
        return core.withReadLock {
            core.session.tables.allSatisfy { table in
                do { return try table.count == 0 } catch {
                    if DamageMarker.isDamage(error) { core.stop(error, "isEmpty could not count '\(table.schema.name)'") }
                    return true
                }
            }
        }
    }

    /// The version this instance reads.
    public var version: UInt64 { core.session.version }

    // MARK: Writing

    /// Whether a write transaction is open on this instance.
    public var isInWriteTransaction: Bool { core.session.isInWriteTransaction }

    /// Runs `block` in a write transaction and commits it, returning the block's value. If the
    /// block throws, the transaction is rolled back and the error rethrown. Blocks the thread
    /// while another writer holds the lock; in async code prefer `asyncWrite`.
    @discardableResult
    public func write<Result>(_ block: () throws -> Result) throws -> Result {
        try core.write(block) { try core.commitWrite() }
    }

    /// Starts a write transaction, blocking while another writer holds the lock. Pair it with
    /// `commitWrite()` or `cancelWrite()`. Stops with a message if the database is read-only
    /// or the disk fails; `write { }` throws instead.
    ///
    /// The instance stays open until the transaction ends, even if nothing else refers to it:
    /// as in RealmSwift, `try Database().beginWrite()`, then `try Database().create(…)` and
    /// `try Database().commitWrite()` in the same context all use the one instance and its
    /// transaction. So a transaction begun here must be committed or cancelled (or the instance
    /// invalidated); until then it holds the file's write lock. On a plain thread that exits
    /// with it still open, it is rolled back.
    public func beginWrite() {
        do { try core.beginWrite() } catch { core.stop(error, "beginWrite() failed") }
        core.holdOpenForWrite()
    }

    /// Commits the write transaction: durable (per the configuration's durability) and visible
    /// to other instances when it returns.
    public func commitWrite() throws { try core.commitWrite() }

    /// Rolls the write transaction back. Objects added in it become invalidated.
    public func cancelWrite() { core.cancelWrite() }

    /// Runs `block` in a write transaction without blocking a thread: suspends while waiting
    /// for the write lock, runs the block on the caller's actor, then commits and resumes once
    /// the commit is durable. Only for databases isolated to an actor or the main actor.
    ///
    /// Cancelling the task while it waits for the write lock (or before) throws
    /// `CancellationError` at once: the block never runs and nothing is written. Once the
    /// block runs, cancellation no longer affects the write, which commits normally. If the
    /// block throws, the transaction is rolled back and the error rethrown. From the call until
    /// it returns, `isPerformingAsynchronousWriteOperations` is true.
    ///
    /// When it returns, the commit has been delivered to this instance's observers, and to the
    /// observations registered from this instance on other actors and queues
    /// (`observe(on:)`): their instances refreshed, each in its own context, while this waited.
    @discardableResult
    public func asyncWrite<Result>(_isolation actor: isolated any Actor = #isolation,
                                   _ block: () throws -> Result) async throws -> Result {
        guard let confined = core.confinement.actor else {
            fatalError("asyncWrite() can only be used on databases isolated to an actor or the main actor; use write { } on thread- and queue-confined databases.")
        }
        require(confined === actor || (actor === MainActor.shared && confined === MainActor.shared), """
            asyncWrite() was called from \(type(of: actor)), but the database is isolated to \(core.confinement.description). \
            Call it from code isolated to that actor, or open a Database in this actor with Database(configuration:actor:).
            """)
        require(!core.session.isInWriteTransaction,
                     "asyncWrite() was called inside a write transaction; make the changes in the open transaction instead.")
        try Task.checkCancellation()
        core.awaitedWrites += 1
        defer { core.awaitedWrites -= 1 }
        try await core.beginWriteAsync()
        if Task.isCancelled {
            core.session.rollback()
            throw CancellationError()
        }
        let result = try core.runInWriteTransaction(block)
        if core.session.isInWriteTransaction { try await core.commitWriteAsync() }
        // This instance's observers got the commit above; those it handed to other actors and
        // queues get it before the caller goes on (and, say, invalidates their tokens).
        await core.deliverHandedOverObservations()
        return result
    }

    // MARK: Objects

    /// Adds an unmanaged object (and the unmanaged objects it links to) to the database; the
    /// object becomes managed in place. With `update` `.modified` or `.all`, an existing object
    /// with the same primary key is updated instead (only changed properties, or all).
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        Self.requireTopLevel(type(of: object), "add")
        _ = core.add(object, update: update)
    }

    /// Adds a sequence of objects.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        for object in objects {
            Self.requireTopLevel(type(of: object), "add")
            _ = core.add(object, update: update)
        }
    }

    /// Stops with a message for an embedded type where only top-level objects may go.
    private static func requireTopLevel(_ type: Object.Type, _ operation: String) {
        if type is EmbeddedObject.Type {
            fatalError("'\(type.className())' is an EmbeddedObject: it cannot be \(operation == "add" ? "added" : "created") on its own. Assign it to a property (a link or a list) of the object it belongs to.")
        }
    }

    /// Creates a managed object from a dictionary of property values, an array in property
    /// order, or another object, and returns it. Properties the value does not name keep their
    /// declared initial values (for a new object) or are left alone (for an updated one). An
    /// array gives the persisted properties in declaration order, as in RealmSwift: a shorter
    /// one names the first properties only (the rest are not given); a longer one stops the
    /// process with a message naming both counts.
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
        core.verifyWrite("create(_:value:update:)")
        Self.requireTopLevel(type, "create")
        let context: TableContext
        do { context = try core.context(for: type) } catch { fatalError("\(error)") }
        let info = context.info
        if update != .error && info.primaryKeyIndex == nil {
            fatalError("'\(type.className())' does not have a primary key and cannot be updated; create it with update: .error.")
        }
        let object = T()
        do {
            try info.apply(value: value, to: object, database: self)
        } catch {
            fatalError("create(\(type.className()).self, value:): \(error)")
        }
        if update != .error, let pk = info.primaryKeyIndex {
            let given = Set(givenProperties(value, info: info))
            let pkValue: StoreValue
            if case .value(let v) = info.fields[pk].stored(object, self) { pkValue = v } else { pkValue = .null }
            let found: ObjectKey?
            do { found = try context.table.find(primaryKey: pkValue) } catch { context.fail(error) }
            if let existing = found {
                let managed = context.materialize(type, key: existing)
                for index in info.schema.properties.indices where index != pk && given.contains(index) {
                    let input = info.fields[index].unmanagedAny(object)
                    // Lists and links are always written. The checks come before reading the
                    // current value: the store has no single value for a list property.
                    let property = info.schema.properties[index]
                    if update == .modified, !property.isList, property.kind != .link,
                       let current = try? context.table.value(existing, property: index),
                       case .value(let new) = info.fields[index].stored(object, self), current == new {
                        continue
                    }
                    _ = info.fields[index].setManaged(managed, column: index, any: input)
                }
                return managed
            }
        }
        _ = core.add(object, update: .error)
        return object
    }

    private func givenProperties(_ value: Any, info: ClassInfo) -> [Int] {
        let value = unwrapAny(value) ?? value
        if let dictionary = value as? [String: Any] { return dictionary.keys.compactMap { info.schema.propertyIndex(named: $0) } }
        if let array = value as? [Any] { return Array(0..<min(array.count, info.schema.properties.count)) }
        return Array(info.schema.properties.indices)
    }

    /// Deletes a managed object. Links to it become nil and it leaves every list.
    public func delete(_ object: Object) {
        delete([object])
    }

    /// Deletes managed objects.
    public func delete<S: Sequence>(_ objects: S) where S.Element: Object {
        core.verifyWrite("delete(_:)")
        var byTable: [ObjectIdentifier: (TableContext, [ObjectKey])] = [:]
        for object in objects {
            guard let table = object._slot.table else {
                fatalError("Cannot delete an unmanaged object; only objects added to a database can be deleted.")
            }
            require(table.core === core, "Cannot delete an object managed by another Database instance.")
            byTable[ObjectIdentifier(table), default: (table, [])].1.append(ObjectKey(object._slot.key))
        }
        do {
            for (table, keys) in byTable.values { try core.session.delete(keys, from: table.table) }
        } catch {
            core.stop(error, "delete failed")
        }
    }

    /// Deletes every object of the results.
    public func delete<T: Object>(_ results: Results<T>) {
        core.verifyWrite("delete(_:)")
        guard let context = results.context else { return }
        do {
            try core.session.delete(results.keys(), from: context.table)
        } catch {
            core.stop(error, "delete failed")
        }
    }

    /// Deletes every object in the database.
    public func deleteAll() {
        core.verifyWrite("deleteAll()")
        do {
            for table in core.session.tables { try core.session.deleteAll(in: table) }
        } catch {
            core.stop(error, "deleteAll failed")
        }
    }

    /// All objects of a type, as live results.
    public func objects<T: Object>(_ type: T.Type) -> Results<T> {
        core.verify("objects(_:)")
        if type is EmbeddedObject.Type {
            fatalError("'\(type.className())' is an EmbeddedObject, which cannot be queried on its own; query the objects that hold it through their link, e.g. db.objects(Person.self).where { $0.address.city == \"Oslo\" }.")
        }
        do {
            return Results(database: self, context: try core.withReadLock { try core.existingContext(for: type) }, predicate: nil)
        } catch {
            fatalError("\(error)")
        }
    }

    /// The object of a type with this primary key, or nil.
    public func object<T: Object, Key>(ofType type: T.Type, forPrimaryKey key: Key) -> T? {
        core.verify("object(ofType:forPrimaryKey:)")
        return core.withReadLock { lookUp(type, forPrimaryKey: key) }
    }

    private func lookUp<T: Object, Key>(_ type: T.Type, forPrimaryKey key: Key) -> T? {
        let context: TableContext?
        do { context = try core.existingContext(for: type) } catch { fatalError("\(error)") }
        guard let context else { return nil }
        // The object's cluster is found now (the first read needs it anyway), so the object
        // starts with its position and its reads skip `_relocate`.
        guard let found = context.locate(primaryKey: context.primaryKeyValue(key, "object(ofType:forPrimaryKey:)")) else { return nil }
        found.cluster.prefetch(row: found.row)
        return context.materialize(type, key: found.key, cluster: found.cluster, row: found.row)
    }

    // MARK: Versions

    // refresh(), asyncRefresh() and autorefresh are in Database+Versions.swift; freeze() and thaw() in
    // Database+Freezing.swift.

    /// Releases the version the instance reads (its pinned snapshot), so that later commits
    /// can reuse the space it held: call it before a long pause in a thread that no longer
    /// needs what it read. An open write transaction is rolled back, and pending async writes
    /// are settled first.
    ///
    /// Objects read before become invalidated: `isInvalidated` is true and using their
    /// properties stops with a message. The instance itself stays usable: its next
    /// use (a query, `object(ofType:forPrimaryKey:)`, a write, …) reads the newest version,
    /// including what other instances committed meanwhile. `Results` made before keep working
    /// and read that version too. Calling it again before anything was read does nothing; a
    /// frozen instance ignores it (it releases its version when the last reference to it goes
    /// away).
    public func invalidate() {
        core.verifyContext("invalidate()")
        core.invalidate()
    }

    // MARK: Files

    /// Makes the database file hold every commit by itself.
    ///
    /// Small durable writes are made durable in the commit log (the `-log` file beside the
    /// database) and reach the database file later, in one flush for many writes. Strata does
    /// this on its own when the log fills up, on a large write, and when the last instance in
    /// the last process closes. Call `checkpoint()` before you copy or back up the database
    /// file without its `-log` file: afterwards the file alone opens at the newest version.
    /// Commits are durable whether or not you call it.
    ///
    /// Like a write transaction, it waits for the write lock (and for this instance's pending
    /// asynchronous writes), so it must not be called inside a write transaction. Read-only,
    /// in-memory and `.none`-durability databases have no commit log, and this does nothing.
    public func checkpoint() throws {
        core.verify("checkpoint()")
        require(!core.session.isInWriteTransaction, "checkpoint() cannot run inside a write transaction: it waits for the write lock. Call it after commitWrite() or outside write { }.")
        if core.asyncWrites.isBusy { core.asyncWrites.drain() }
        do {
            try core.handle.store.engine.checkpoint()
        } catch {
            throw Error.wrap(error, path: core.configuration.path)
        }
    }

    /// Whether a file exists for the configuration.
    public static func fileExists(for configuration: Configuration) -> Bool {
        guard configuration.inMemoryIdentifier == nil else { return StoreHandle.isOpen(configuration) }
        return FileManager.default.fileExists(atPath: configuration.path)
    }

    /// Deletes the configuration's file, its lock file, its commit log and its damage marker.
    /// Throws `alreadyOpen` while an instance is open; returns whether there was a file.
    @discardableResult
    public static func deleteFiles(for configuration: Configuration) throws -> Bool {
        guard !StoreHandle.isOpen(configuration) else {
            throw Error(.alreadyOpen, "Cannot delete \(configuration.path) while it is open.", path: configuration.path)
        }
        let path = configuration.path
        let existed = FileManager.default.fileExists(atPath: path)
        try DatabaseFiles(path: path).removeAll()
        return existed
    }

    /// How `add` and `create` treat an object whose primary key already exists.
    public enum UpdatePolicy: Int, Sendable {
        /// Adding a duplicate primary key is an error.
        case error = 1
        /// Update the existing object, writing only the properties whose values changed.
        case modified = 3
        /// Update the existing object, writing every property.
        case all = 2
    }
}

extension Database: Equatable {
    /// Instances are equal when they are the same underlying instance (same file and context).
    public static func == (lhs: Database, rhs: Database) -> Bool { lhs.core === rhs.core }
}
