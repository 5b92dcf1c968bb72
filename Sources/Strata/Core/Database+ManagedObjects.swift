// How the collections and accessors reach managed objects through a `Database` value.

import StrataStore

extension Database {
    /// The managed object for `key` of type `type`, or nil when it does not exist.
    func materialize<T: Object>(_ type: T.Type, key: ObjectKey) -> T? {
        core.withReadLock {
            guard let context = try? core.context(for: type) else { return nil }
            guard context.containsOrStops(key) else { return nil }
            return context.materialize(type, key: key)
        }
    }

    /// Adds `object` if it is unmanaged and returns its key.
    func ensureManaged(_ object: Object) -> ObjectKey {
        if core.isFrozen { core.frozenWrite("adding or linking an object") }
        if let table = object._slot.table {
            if table.core.isFrozen && !core.isFrozen {
                fatalError("""
                    Cannot add or link a frozen '\(table.table.schema.name)' object to live data. Thaw both: call thaw() on \
                    the object and on the list or object you add it to, and use the thawed ones in the write transaction.
                    """)
            }
            require(table.core === core, "Cannot link to an object managed by another Database instance; use create(_:value:update:) to copy it.")
            return ObjectKey(object._slot.key)
        }
        return core.add(object, update: .error)
    }

    /// Whether the instance holds no version now: `invalidate()` released it and nothing has
    /// read since. (Objects read before are invalidated for good: `TableContext.isReleased`.)
    var isInvalidatedForObjects: Bool { core.hasReleasedVersion }
    func verify(_ operation: @autoclosure () -> String) { core.verify(operation()) }
    func verifyWrite(_ operation: @autoclosure () -> String) { core.verifyWrite(operation()) }
}
