// The shared state behind `Database` values: one per file and context (thread, queue or
// actor), cached so that opening the same configuration in the same context again reuses it.

import Foundation
import Synchronization
import StrataStore
import StrataStorage

final class DatabaseCore {
    let configuration: Database.Configuration
    let confinement: Confinement
    let handle: StoreHandle
    let session: StoreSession
    /// Table contexts refer back to the core unowned; objects keep the core alive through their
    /// slots, so holding the contexts strongly here makes no cycle.
    private var contexts: [ObjectIdentifier: TableContext] = [:] {
        didSet { lastContext = nil }
    }
    /// The entry of `contexts` found last (cleared whenever `contexts` changes), so that a
    /// loop that adds or looks up objects of one class skips hashing its type. Read and written
    /// only by the instance's owner (a frozen instance's under its lock), hence no exclusivity
    /// checks on the lookup path.
    @exclusivity(unchecked) private var lastContext: (type: ObjectIdentifier, context: TableContext)?
    /// The property values of the object being added, reused by every `add` (an allocation
    /// and a free less per object).
    private var addScratch: [StoreValue] = []
    /// Contexts replaced in `contexts` or dropped by `invalidate()`: kept until the instance
    /// goes away, because objects refer to their context without retaining it (`_ObjectSlot`).
    private var retiredContexts: [TableContext] = []
    /// `DynamicObject` contexts, by type name (`dynamicContext(named:)`).
    private var dynamicContexts: [String: TableContext] = [:]
    private(set) var isInvalidated = false
    /// Damage a property setter met in the open write transaction (`noteWriteDamage`): its
    /// commit rolls back and throws this instead.
    var writeDamage: Database.Error?
    /// The callback async writes (`beginAsyncWrite`, `commitAsyncWrite`) in progress.
    lazy var asyncWrites = AsyncWriteQueue(core: self)

    /// Set on a frozen instance: it reads one pinned version from any thread, and every read
    /// path of its objects, results and lists holds this lock (its caches are not thread-safe).
    /// Nil for live instances, whose reads stay lock-free. See Database+Freezing.swift.
    let frozenLock: RecursiveLock?
    var isFrozen: Bool { frozenLock != nil }
    /// Whether the instance follows new versions on its own (actor-, main-actor- and
    /// queue-confined instances only). See DatabaseCore+AutoRefresh.swift.
    var autorefresh = true
    /// This instance's entry in the file's version watcher, when it auto-refreshes.
    var refreshTarget: RefreshTarget?
    /// The last frozen instance made from this one, reused while it reads the same version.
    weak var frozenCopy: DatabaseCore?
    /// Called by `reportAdvance(from:to:)`; see there.
    var refreshHandlers: [(UInt64, UInt64) -> Void] = []
    /// For tests: called on the executor whenever an auto-refresh request arrives, with whether
    /// the instance moved (it does not while `autorefresh` is off or a write is open).
    var autoRefreshProbe: ((Bool) -> Void)?
    /// Change observers (Notifier.swift); nil until the first observation.
    var notifier: Notifier?

    /// The thread of a thread-confined instance, so that property reads check it with one
    /// comparison.
    let ownerThread: pthread_t?
    /// The executor of an actor-isolated instance (not the main actor's), so that property
    /// reads ask the runtime directly whether they run on it, without going through
    /// `Confinement`.
    let ownerExecutor: ExecutorIdentity?

    private init(configuration: Database.Configuration, confinement: Confinement, handle: StoreHandle,
                 pinning live: StoreSession? = nil) throws(Database.Error) {
        self.configuration = configuration
        self.confinement = confinement
        if case .thread(let thread) = confinement { ownerThread = thread } else { ownerThread = nil }
        if case .actor(let box) = confinement {
            ownerExecutor = ExecutorIdentity(box.executor)
        } else {
            ownerExecutor = nil
        }
        self.handle = handle
        frozenLock = live == nil ? nil : RecursiveLock()
        do {
            session = try live?.pinnedCopy() ?? handle.store.makeSession()
        } catch {
            throw Database.Error.wrap(error, path: configuration.path)
        }
    }

    /// A frozen instance reading the version this (live) instance reads. Not in the instance
    /// cache: it lives as long as something refers to it, and releases its version then.
    func makeFrozenCopy() throws(Database.Error) -> DatabaseCore {
        if let frozenCopy, frozenCopy.session.version == session.version { return frozenCopy }
        StoreHandle.retain(handle)
        let frozen: DatabaseCore
        do {
            frozen = try DatabaseCore(configuration: configuration, confinement: .frozen, handle: handle, pinning: session)
        } catch {
            StoreHandle.release(handle)
            throw error
        }
        frozenCopy = frozen
        return frozen
    }

    deinit {
        refreshTarget?.detach()
        session.close()
        StoreHandle.release(handle)
    }

    // MARK: The instance cache

    /// The cache refers to a core through a token that only the core owns, so that no weak
    /// reference ever points at the core itself (a weak reference gives an object a side
    /// table, which makes every retain and release of it slower).
    private final class Token {
        unowned(unsafe) let core: DatabaseCore
        init(_ core: DatabaseCore) { self.core = core }
    }
    private struct Weak: @unchecked Sendable { weak var token: Token? }
    private static let cache = Locked<[String: Weak]>([:])
    private var token: Token?

    static func open(_ configuration: Database.Configuration, _ confinement: Confinement) throws(Database.Error) -> DatabaseCore {
        let key = configuration.identity + "|" + confinement.cacheKey
        // A core is released in its own context, so the core behind a live token for this
        // context's key cannot be mid-release here.
        if let core = cache.withLock({ $0[key]?.token?.core }), core.configuration.opensIdentically(to: configuration), !core.isInvalidated,
           core.confinement.isSame(as: confinement) {
            // Opening again in the same context gives the same instance, moved to the newest
            // version unless it is in the middle of a write.
            if !core.session.isInWriteTransaction { core.advanceToLatest() }
            return core
        }
        let handle = try StoreHandle.acquire(configuration)
        let core: DatabaseCore
        do {
            core = try DatabaseCore(configuration: configuration, confinement: confinement, handle: handle)
        } catch {
            StoreHandle.release(handle)
            throw error
        }
        // (If this throws, the core's deinit releases the handle.)
        if let types = configuration.objectTypes { try core.checkExistingTables(types) }
        let token = Token(core)
        core.token = token
        CurrentContext.register(confinement)
        cache.withLock {
            $0 = $0.filter { $0.value.token != nil }
            $0[key] = Weak(token: token)
        }
        core.startAutoRefresh()
        return core
    }

    /// The cached instance of `configuration` in `confinement`, which must be the caller's
    /// context (a core is released in its own context, so only there is the lookup safe).
    static func cached(_ configuration: Database.Configuration, _ confinement: Confinement) -> DatabaseCore? {
        let key = configuration.identity + "|" + confinement.cacheKey
        guard let core = cache.withLock({ $0[key]?.token?.core }), !core.isInvalidated, core.confinement.isSame(as: confinement) else { return nil }
        return core
    }

    // MARK: Checks

    /// The confinement check of a property read.
    @inline(__always)
    func verifyRead() {
        if isOwnerRunning { return }
        confinement.verify("reading an object's property")
    }

    /// Whether the caller is the owning thread or runs on the owning actor's executor: the
    /// one-comparison answer for the common confinements (`confinement.verify` decides the
    /// rest, and stops with the message).
    @inline(__always)
    private var isOwnerRunning: Bool {
        if let ownerThread, pthread_equal(ownerThread, pthread_self()) != 0 { return true }
        if let ownerExecutor, ownerExecutor.isCurrent { return true }
        return false
    }

    func verify(_ operation: @autoclosure () -> String) {
        if !isOwnerRunning { confinement.verify(operation()) }
        require(!isInvalidated, "The database instance was invalidated; open a new one.")
    }

    func verifyWrite(_ operation: @autoclosure () -> String) {
        if isFrozen { frozenWrite(operation()) }
        verify(operation())
        require(session.isInWriteTransaction, "Cannot modify managed objects outside a write transaction: wrap the change in database.write { } (or asyncWrite, or beginWrite()/commitWrite()).")
    }

    // MARK: Tables

    /// The table context of a model class, adding the class's table to the file if needed.
    func context(for type: Object.Type) throws(Database.Error) -> TableContext {
        if let context = cachedContext(for: type) { return context }
        let info = try ClassInfo.of(type)
        if session.table(named: info.schema.name) == nil {
            if let types = configuration.objectTypes, !types.contains(where: { $0 == type }) {
                throw Database.Error(.invalidInput, "Object type '\(info.schema.name)' is not in this database's configuration.objectTypes; add it there.")
            }
            try addTables(for: [type])
        }
        guard let table = session.table(named: info.schema.name) else {
            throw Database.Error(.invalidInput, "Object type '\(info.schema.name)' is not managed by this database.")
        }
        if table.schema.properties.map(\.name) != info.schema.properties.map(\.name) {
            throw Database.Error(.schemaMismatch, "The file's '\(info.schema.name)' has properties \(table.schema.properties.map(\.name)) but the class declares \(info.schema.properties.map(\.name)); raise schemaVersion to migrate.")
        }
        if table.schema.isEmbedded != info.schema.isEmbedded {
            throw Database.Error(.schemaMismatch, "The file's '\(info.schema.name)' is \(table.schema.isEmbedded ? "an embedded" : "a top-level") type but the class is \(info.schema.isEmbedded ? "an EmbeddedObject" : "an Object"); raise schemaVersion to migrate.")
        }
        for (stored, declared) in zip(table.schema.properties, info.schema.properties) where !stored.hasSameStorage(as: declared) {
            throw Database.Error(.schemaMismatch, "The file's '\(info.schema.name).\(stored.name)' is \(stored.description) but the class declares \(declared.description); raise schemaVersion to migrate.")
        }
        try declareInverses(from: type)
        let context = TableContext(core: self, table: table, info: info)
        if let replaced = contexts.updateValue(context, forKey: ObjectIdentifier(type)) { retiredContexts.append(replaced) }
        return context
    }

    /// Tells the store about the `LinkingObjects` properties of `type` and of every class it
    /// reaches, so that queries on `type` can go through them (`$0.owners.name == "Ann"`).
    private func declareInverses(from type: Object.Type) throws(Database.Error) {
        for info in try ClassInfo.closure(of: [type]) {
            for linking in info.linkingProperties where linking.linksHere {
                session.store.declareInverse(linking.name, of: info.schema.name,
                                             InverseProperty(originType: linking.originType.className(), originProperty: linking.originProperty))
            }
        }
    }

    /// Checks each of `types` (and the types they link to) whose table the file has against
    /// that table, so that a class that disagrees with the file is an error at open. Opening a
    /// file this process has open already shares its store, whose own check ran when it was
    /// first opened, possibly for other classes.
    func checkExistingTables(_ types: [Object.Type]) throws(Database.Error) {
        for info in try ClassInfo.closure(of: types) where session.table(named: info.schema.name) != nil {
            _ = try context(for: info.type)
        }
    }

    /// Whether the file has a table for this class (without creating one).
    func existingContext(for type: Object.Type) throws(Database.Error) -> TableContext? {
        if let context = cachedContext(for: type) { return context }
        let info = try ClassInfo.of(type)
        guard session.table(named: info.schema.name) != nil else { return nil }
        return try context(for: type)
    }

    /// The context of `DynamicObject`s of the stored type `name` (made on first use, kept
    /// while the session has the table). Throws `invalidInput` when the file has no such type.
    func dynamicContext(named name: String) throws(Database.Error) -> TableContext {
        if let context = dynamicContexts[name], !context.table.isDropped { return context }
        guard let table = session.table(named: name) else {
            throw Database.Error(.invalidInput, "The database has no type named '\(name)'.", path: configuration.path)
        }
        let context = TableContext(core: self, table: table, info: ClassInfo.dynamic(table.schema))
        if let replaced = dynamicContexts.updateValue(context, forKey: name) { retiredContexts.append(replaced) }
        return context
    }

    /// The context here for objects of `type` stored as `typeName`: for `DynamicObject`, the
    /// dynamic context of that name; for a model class, its context (nil while the file has no
    /// table for it). For the paths that carry objects and results between instances (freeze,
    /// thaw, hand-over), where a `DynamicObject`'s class does not say its type.
    func existingContext(for type: Object.Type, typeName: String?) -> TableContext? {
        if type == DynamicObject.self { return typeName.flatMap { try? dynamicContext(named: $0) } }
        return (try? existingContext(for: type)) ?? nil
    }

    /// The model class for a table's name: one this instance has used, else one of
    /// `configuration.objectTypes`, else any class of that name the process has seen (a mixed
    /// value's link names only the table).
    func modelClass(named name: String) -> Object.Type? {
        if let context = contexts.values.first(where: { $0.info.schema.name == name && !$0.table.isDropped }) { return context.info.type }
        if let type = configuration.objectTypes?.first(where: { (try? ClassInfo.of($0).schema.name) == name }) { return type }
        return ClassInfo.type(named: name)
    }

    /// The cached context of a class, if its table is still the session's. Rolling back the
    /// write that added a type's table drops that table from the session; a context made in
    /// that write would otherwise keep writing to the dropped table, whose changes no commit
    /// flushes (they were lost, and the file was left with index trees but no schema).
    private func cachedContext(for type: Object.Type) -> TableContext? {
        let id = ObjectIdentifier(type)
        if let last = lastContext, last.type == id {
            return last.context.table.isDropped ? nil : last.context
        }
        guard let context = contexts[id] else { return nil }
        lastContext = (id, context)
        return context.table.isDropped ? nil : context
    }

    private func addTables(for types: [Object.Type]) throws(Database.Error) {
        let infos = try ClassInfo.closure(of: types).filter { session.table(named: $0.schema.name) == nil }
        guard !infos.isEmpty else { return }
        guard !configuration.readOnly else {
            throw Database.Error(.fileAccess, "The read-only database has no '\(infos[0].schema.name)' objects and cannot add the type.")
        }
        do {
            try session.addTables(infos.map(\.schema))
        } catch {
            throw Database.Error.wrap(error, path: configuration.path)
        }
    }

    // MARK: Adding objects

    func add(_ object: Object, update: Database.UpdatePolicy) -> ObjectKey {
        verifyWrite("add(_:)")
        if let table = object._slot.table {
            require(table.core === self, "Object is already managed by another Database instance; use create(_:value:update:) to copy it into this one.")
            return ObjectKey(object._slot.key)
        }
        require(!object._slot.invalidated, "Cannot add an invalidated object.")
        let context: TableContext
        do { context = try self.context(for: type(of: object)) } catch { fatalError("\(error)") }
        let info = context.info
        if update != .error && info.primaryKeyIndex == nil {
            fatalError("'\(info.schema.name)' does not have a primary key and cannot be updated; add it with update: .error.")
        }
        // Links and lists are written after the object is managed, so that cycles end.
        var deferred: [(Int, Any)] = []
        if info.hasPropertiesWrittenAfterAdd {
            info.fields.withUnsafeBufferPointer { fields in
                for index in fields.indices where info.isWrittenAfterAdd[index] {
                    deferred.append((index, fields[index].unmanagedAny(object)))
                }
            }
        }
        let key = update == .error ? insert(object, context) : insertOrUpdate(object, context, update: update)
        object._becomeManaged(context, key: key.rawValue)
        object._slot.cluster = nil
        object._slot.sessionGeneration = nil
        for (index, value) in deferred {
            _ = info.fields[index].setManaged(object, column: index, any: value)
        }
        return key
    }

    /// Adds `object` as a new object: its values go straight from the wrappers into the new
    /// row (`InsertPlan`), without a `StoreValue` per property.
    @inline(__always)
    private func insert(_ object: Object, _ context: TableContext) -> ObjectKey {
        let info = context.info
        let plan = info.insertPlan
        let primaryKey = info.primaryKeyIndex.map { plan.primaryKey(object, column: $0, info: info, core: self) } ?? .null
        do {
            return try context.table.insert(primaryKey: primaryKey) { row in
                plan.write(object, into: row, info: info, core: self)
            }
        } catch {
            addFailed(error, info.schema.name)
        }
    }

    /// Adds `object`, or updates the object with its primary key (`update` `.modified` or `.all`).
    private func insertOrUpdate(_ object: Object, _ context: TableContext, update: Database.UpdatePolicy) -> ObjectKey {
        let info = context.info
        let schema = context.table.schema
        let database = Database(core: self)
        // The slots are overwritten in place (emptying the array would release its elements
        // through an unspecialised `replaceSubrange`, which costs more than the allocation it
        // would save).
        var values = addScratch
        addScratch = []
        if values.count != schema.properties.count { values = Array(repeating: .null, count: schema.properties.count) }
        defer {
            for index in values.indices { values[index] = .null }  // holds no strings or data between adds
            addScratch = values
        }
        // Through a buffer pointer, each field is called in place rather than copied out of the
        // array (an existential copy and destroy per property).
        info.fields.withUnsafeBufferPointer { fields in
            for index in fields.indices where !info.isWrittenAfterAdd[index] {
                guard case .value(let value) = fields[index].stored(object, database) else { fatalError("internal error: list value for a scalar") }
                values[index] = value
            }
        }
        do {
            if let pk = info.primaryKeyIndex, let existing = try context.table.find(primaryKey: values[pk]) {
                for (index, value) in values.enumerated() where index != pk && !(schema.properties[index].kind == .link || schema.properties[index].isList) {
                    if update == .modified, try context.table.value(existing, property: index) == value { continue }
                    try context.table.set(value, for: existing, property: index)
                }
                return existing
            }
            return try context.table.insert(values)
        } catch {
            addFailed(error, schema.name)
        }
    }

    /// Stops an `add` the store refused: a duplicate primary key (a programming error, as in
    /// RealmSwift) with the store's message, anything else (a damaged file, a failed disk)
    /// naming the type.
    private func addFailed(_ error: StoreError, _ typeName: String) -> Never {
        if case .duplicatePrimaryKey = error { fatalError("\(error)") }
        stop(error, "Could not add the '\(typeName)' object")
    }

    // MARK: Writes

    func beginWrite() throws(Database.Error) {
        if isFrozen { frozenWrite("beginWrite()") }
        verify("beginWrite()")
        require(!session.isInWriteTransaction, "The database is already in a write transaction; write transactions cannot be nested. Make the changes inside the open transaction's block.")
        guard !configuration.readOnly else { throw readOnlyWrite() }
        if asyncWrites.isBusy { asyncWrites.drain() }
        advanceToLatestBeforeWrite()
        let old = session.version
        writeDamage = nil
        do { try session.beginWrite() } catch { throw Database.Error.wrap(error, path: configuration.path) }
        try didBeginWrite(from: old)
    }

    func beginWriteAsync(isolation: isolated (any Actor)? = #isolation) async throws(Database.Error) {
        if isFrozen { frozenWrite("asyncWrite()") }
        guard !configuration.readOnly else { throw readOnlyWrite() }
        advanceToLatestBeforeWrite()
        let old = session.version
        writeDamage = nil
        do { try await session.beginWrite(isolation: isolation) } catch { throw Database.Error.wrap(error, path: configuration.path) }
        try didBeginWrite(from: old)
    }

    /// Runs `block` in a new write transaction and ends what it leaves open with `commit`; if
    /// the block throws, the transaction is rolled back and the error rethrown. The body of
    /// `write { }` and `write(withoutNotifying:_:)`.
    func write<Result>(_ block: () throws -> Result, committing commit: () throws -> Void) throws -> Result {
        try beginWrite()
        let result = try runInWriteTransaction(block)
        if session.isInWriteTransaction { try commit() }
        return result
    }

    /// Runs `block` in the open write transaction; if it throws, rolls the transaction back (when
    /// the block left it open) and rethrows. A block that committed or cancelled itself is left
    /// as it is.
    func runInWriteTransaction<Result>(_ block: () throws -> Result) rethrows -> Result {
        do {
            return try block()
        } catch {
            if session.isInWriteTransaction { session.rollback() }
            throw error
        }
    }

    private func readOnlyWrite() -> Database.Error {
        Database.Error(.fileAccess, "Cannot write to a read-only database (\(configuration.path)); open it with readOnly = false to write.",
                       path: configuration.path)
    }

    func commitWrite() throws(Database.Error) {
        verify("commitWrite()")
        require(session.isInWriteTransaction, "commitWrite() called outside a write transaction.")
        try throwWriteDamage()
        let old = session.version
        let target = ownCommit()
        defer { target?.committing(0) }
        do { try session.commit(reportingChanges: false) } catch { throw Database.Error.wrap(error, path: configuration.path) }
        notifyObservers(advancedFrom: old, to: session.version)
    }

    /// Commits with the I/O on a background thread; the caller (on the instance's actor) is
    /// suspended meanwhile and the instance keeps reading the version it started from.
    func commitWriteAsync(isolation: isolated (any Actor)? = #isolation) async throws(Database.Error) {
        try throwWriteDamage()
        let pending: PendingCommit
        let old = session.version
        let target = ownCommit()
        defer { target?.committing(0) }
        do { pending = try session.prepareCommit() } catch { throw Database.Error.wrap(error, path: configuration.path) }
        let path = configuration.path
        let outcome: Database.Error? = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    try pending.perform()
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: Database.Error.wrap(error, path: path))
                }
            }
        }
        do { try session.finishCommit(pending, succeeded: outcome == nil) } catch { throw Database.Error.wrap(error, path: path) }
        if let outcome { throw outcome }
        if !session.isInWriteTransaction { notifyObservers(advancedFrom: old, to: session.version) }
    }

    /// Tells the instance's auto-refresh target that the version about to be committed is the
    /// instance's own (it moves there itself); returns the target, to be told when it is over.
    private func ownCommit() -> RefreshTarget? {
        guard let target = refreshTarget, let version = session.committingVersion else { return nil }
        target.committing(version)
        return target
    }

    func cancelWrite() {
        verify("cancelWrite()")
        require(session.isInWriteTransaction, "cancelWrite() called outside a write transaction.")
        writeDamage = nil
        session.rollback()
    }

    func invalidate() {
        if isFrozen { return }  // a frozen instance releases its version when it goes away
        asyncWrites.drain()
        if session.isInWriteTransaction { session.rollback() }
        isInvalidated = true
        retiredContexts += contexts.values
        retiredContexts += dynamicContexts.values
        dynamicContexts.removeAll()
        contexts.removeAll()
        refreshTarget?.detach()
        refreshTarget = nil
        session.close()  // releases the pinned version
    }
}
