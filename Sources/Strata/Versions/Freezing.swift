// Frozen snapshots: `freeze()` on a database, object, results or list gives an immutable view
// of the version the live instance reads, usable from any thread or actor at once.
//
// A frozen database is a `DatabaseCore` with confinement `.frozen` and its own store session,
// pinned to the live instance's version (a second reader slot on the same version, so the live
// instance can move on). It is not in the instance cache; it lives while any frozen object,
// results, list or database refers to it, and its version is released when the last goes.
//
// Its read paths keep per-transaction caches (the store's table views and cursors, results'
// key caches, lists' decoded values, objects' cluster locations) that are not thread-safe, so
// a frozen instance serializes its reads with one recursive lock (`DatabaseCore.frozenLock`):
// every entry point into the store for a frozen instance takes it, and frozen objects never
// use the lock-free cached-location path of live objects (their slots carry no session
// generation, so each property read goes through `_frozenLocation`, under the lock). What the
// reads return points into the pinned version's pages, which never change. Live instances take
// no lock anywhere.

import StrataStore

extension Object {
    /// The location of property `column` of a frozen object, found (once) under the frozen
    /// instance's lock.
    final func _frozenLocation(_ column: Int, _ table: TableContext) -> (ChunkView, Int) {
        table.core.withReadLock {
            if let cluster = _slot.cluster, _slot.generation == table.session.generation {
                do { return (try cluster.column(column), _slot.row) } catch { table.fail(error) }
            }
            do {
                guard let (cluster, row) = try table.table.locate(ObjectKey(_slot.key)) else {
                    fatalError("Object of type '\(table.table.schema.name)' does not exist in this frozen version.")
                }
                _slot.cluster = cluster
                _slot.row = row
                _slot.generation = cluster.generation
                _slot.columns = UnsafePointer(cluster.columns)
                return (try cluster.column(column), row)
            } catch {
                table.fail(error)
            }
        }
    }

    /// Whether the object belongs to a frozen database. Unmanaged objects are not frozen.
    public final var isFrozen: Bool { _slot.table?.core.isFrozen ?? false }

    /// An immutable copy of this managed object as of the version its database reads, usable
    /// from any thread or actor (see `Frozen` to send it across actors in Swift 6). Returns the
    /// object itself when it is already frozen. Freezing an unmanaged or invalidated object, or
    /// freezing inside a write transaction, is a programming error.
    public func freeze() -> Self {
        guard let table = _slot.table else {
            fatalError("Cannot freeze an unmanaged object; add it to a database first.")
        }
        if table.core.isFrozen { return self }
        require(!isInvalidated, "Cannot freeze an object that has been deleted or invalidated; check isInvalidated first.")
        let frozen = Database(core: table.core).freeze()
        guard let copy = frozen.materialize(type(of: self), typeName: table.info.schema.name, key: ObjectKey(_slot.key)) as? Self else {
            fatalError("internal error: a live object is missing from its frozen version")
        }
        return copy
    }

    /// The live version of this frozen object in the caller's context (this thread, or the
    /// actor the caller is isolated to), or nil when it has since been deleted. The object's
    /// `database` is then the live database of that context. Returns the object itself when
    /// it is live. To thaw into a queue-confined database, use `Database.thaw(_:)` there.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> Self? {
        guard let table = _slot.table else {
            fatalError("Cannot thaw an unmanaged object; only managed objects can be frozen and thawed.")
        }
        guard table.core.isFrozen else { return self }
        return Database(core: table.core.liveCore(isolation: isolation)).thaw(self)
    }
}

extension Database {
    /// Whether this is a frozen database: an immutable snapshot of one version.
    public var isFrozen: Bool { core.isFrozen }

    /// An immutable snapshot of the version this instance reads, usable from any thread or
    /// actor. Its objects, results and lists are frozen too. Returns `self` when already
    /// frozen. The snapshot pins its version (see `numberOfActiveVersions`) until the last
    /// reference to it, or to anything read from it, goes away.
    ///
    /// Writing to, refreshing or observing frozen data is a programming error; `thaw()` gives
    /// the live equivalent. Freezing inside a write transaction is not allowed either: the
    /// snapshot could not contain the uncommitted changes.
    public func freeze() -> Database {
        if core.isFrozen { return self }
        core.verify("freeze()")
        require(!isInWriteTransaction, "Cannot freeze inside a write transaction: commit (or cancel) it first; a snapshot holds committed versions only.")
        do {
            return Database(core: try core.makeFrozenCopy())
        } catch {
            fatalError("freeze() could not pin the version: \(error). Release frozen snapshots you no longer need.")
        }
    }

    /// A live database for this frozen one's configuration in the caller's context (this
    /// thread, or the actor the caller is isolated to), at the newest version. Returns `self`
    /// when it is already live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> Database {
        guard core.isFrozen else { return self }
        return Database(core: core.liveCore(isolation: isolation))
    }

    /// A frozen copy of `object` (RealmSwift's `realm.freeze(object)`).
    public func freeze<T: Object>(_ object: T) -> T { object.freeze() }

    /// The live version of `object` (frozen or managed by another instance of this file) in
    /// this database, or nil when this database's version does not have it.
    public func thaw<T: Object>(_ object: T) -> T? {
        require(!core.isFrozen, "thaw(_:) must be called on a live database; this one is frozen.")
        guard object._slot.table != nil else {
            fatalError("Cannot thaw an unmanaged object; only managed objects can be frozen and thawed.")
        }
        core.verify("thaw(_:)")
        guard let table = object._slot.table else { return nil }
        return materialize(type(of: object), typeName: table.info.schema.name, key: ObjectKey(object._slot.key)) as? T
    }

    /// A frozen copy of `results`.
    public func freeze<T: Object>(_ results: Results<T>) -> Results<T> { results.freeze() }

    /// The live version of `results` in this database.
    public func thaw<T: Object>(_ results: Results<T>) -> Results<T> {
        require(!core.isFrozen, "thaw(_:) must be called on a live database; this one is frozen.")
        core.verify("thaw(_:)")
        // Results queried from a list: the same query over the same object's list here (no
        // objects when this version does not have that object).
        if results.listKeys != nil {
            return results.rebuiltFromList(in: self) ?? results.emptyFromList(in: self)
        }
        return results.rebased(on: self)
    }
}

extension Results {
    /// Whether the results belong to a frozen database.
    public var isFrozen: Bool { database.core.isFrozen }

    /// Immutable results as of the version the database reads, usable from any thread or
    /// actor. Returns `self` when already frozen.
    public func freeze() -> Results<Element> {
        if isFrozen { return self }
        let frozen = database.freeze()
        guard let listKeys else { return rebased(on: frozen) }
        // Results queried from a list: the list's objects in the frozen version are the ones
        // it holds now (the snapshot is of the current version).
        database.core.verify("freeze()")
        let keys = listKeys()
        let typeName = context?.info.schema.name
        let context = frozen.core.withReadLock { frozen.core.existingContext(for: Element.self, typeName: typeName) }
        return Results(database: frozen, context: context, predicate: predicate, orderings: orderings, listKeys: { keys },
                       listOrigin: listOrigin)
    }

    /// The live results in the caller's context (this thread, or the actor the caller is
    /// isolated to), at the newest version. Returns `self` when already live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> Results<Element>? {
        guard isFrozen else { return self }
        let live = database.thaw(_isolation: isolation)
        // Results queried from a list: the same query over the live list of the same object,
        // or nil when that object has been deleted since.
        if listKeys != nil { return rebuiltFromList(in: live) }
        return rebased(on: live)
    }

    /// The same query on another instance of the same file.
    func rebased(on target: Database) -> Results<Element> {
        let typeName = context?.info.schema.name
        let context = target.core.withReadLock { target.core.existingContext(for: Element.self, typeName: typeName) }
        return Results(database: target, context: context, predicate: predicate, orderings: orderings, listKeys: listKeys,
                       listOrigin: listOrigin)
    }
}

extension List {
    /// Whether the list belongs to a frozen object.
    public var isFrozen: Bool { owner?.isFrozen ?? false }

    /// The list as of the version its object's database reads, immutable and usable from any
    /// thread or actor. Returns `self` when already frozen. Freezing an unmanaged list is a
    /// programming error.
    public func freeze() -> List<Element> {
        guard let owner else { fatalError("Cannot freeze an unmanaged List; only lists of managed objects can be frozen.") }
        if owner.isFrozen { return self }
        return List(owner: owner.freeze(), column: column)
    }

    /// The live list in the caller's context (this thread, or the actor the caller is isolated
    /// to), or nil when its object has since been deleted. Returns `self` when live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> List<Element>? {
        guard let owner else { fatalError("Cannot thaw an unmanaged List; only lists of managed objects can be frozen and thawed.") }
        guard owner.isFrozen else { return self }
        return owner.thaw(_isolation: isolation).map { List(owner: $0, column: column) }
    }
}
