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
