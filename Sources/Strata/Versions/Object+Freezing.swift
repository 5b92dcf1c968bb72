// Frozen objects (see Database+Freezing.swift for frozen snapshots).

import StrataStore

extension Object {
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
