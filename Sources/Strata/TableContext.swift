import StrataStore

/// One model class in one database instance: the store table, the class's accessors, and the
/// instance they belong to.
final class TableContext {
    /// Unowned: the instance owns its table contexts; objects keep the instance alive through
    /// their slot.
    unowned(unsafe) let core: DatabaseCore
    let table: TableAccess
    let session: StoreSession
    let info: ClassInfo
    /// Property index by the identity of the wrapper key paths the accessors pass: a short
    /// list behind a pointer (a linear search beats hashing at these sizes, and a pointer
    /// needs no exclusivity checks or reference counting on the read path).
    private var keyPathEntries = UnsafeMutablePointer<(keyPath: ObjectIdentifier, column: Int)>.allocate(capacity: 8)
    private var keyPathCapacity = 8
    private var keyPathCount = 0

    deinit { keyPathEntries.deallocate() }

    /// The frozen instance's lock (see `DatabaseCore.frozenLock`); nil for a live instance.
    let frozenLock: RecursiveLock?
    /// Whether `frozenLock` is set: a plain flag for the property-read path, which should not
    /// touch the lock's reference count.
    let isFrozen: Bool

    @inline(__always)
    func column(forKeyPath id: ObjectIdentifier) -> Int? {
        if isFrozen { return frozenLock.unsafelyUnwrapped.withLock { findColumn(forKeyPath: id) } }
        return findColumn(forKeyPath: id)
    }

    @inline(__always)
    private func findColumn(forKeyPath id: ObjectIdentifier) -> Int? {
        let column = knownColumn(forKeyPath: id)
        return column >= 0 ? column : nil
    }

    /// The column remembered for `id`, or -1; a live instance's only (a frozen one's list is
    /// read under its lock).
    @inline(__always)
    func knownColumn(forKeyPath id: ObjectIdentifier) -> Int {
        let entries = keyPathEntries
        var index = 0
        while index < keyPathCount {
            if entries[index].keyPath == id { return entries[index].column }
            index &+= 1
        }
        return -1
    }

    func remember(keyPath id: ObjectIdentifier, column: Int) {
        if let frozenLock { return frozenLock.withLock { store(keyPath: id, column: column) } }
        store(keyPath: id, column: column)
    }

    private func store(keyPath id: ObjectIdentifier, column: Int) {
        if keyPathCount == keyPathCapacity {
            let grown = UnsafeMutablePointer<(keyPath: ObjectIdentifier, column: Int)>.allocate(capacity: keyPathCapacity * 2)
            grown.moveInitialize(from: keyPathEntries, count: keyPathCount)
            keyPathEntries.deallocate()
            keyPathEntries = grown
            keyPathCapacity *= 2
        }
        (keyPathEntries + keyPathCount).initialize(to: (id, column))
        keyPathCount += 1
    }

    init(core: DatabaseCore, table: TableAccess, info: ClassInfo) {
        self.core = core
        self.table = table
        self.session = core.session
        self.info = info
        self.frozenLock = core.frozenLock
        self.isFrozen = core.frozenLock != nil
    }

    /// The public face of the instance.
    var database: Database { Database(core: core) }

    /// Stops on an error the store reported while reading or writing a property, which only
    /// a damaged file or a failed disk causes.
    func fail(_ error: any Error) -> Never {
        fatalError("Strata could not access '\(table.schema.name)' in \(core.configuration.path): \(error)")
    }

    /// A managed object for `key`.
    func materialize<T: Object>(_ type: T.Type, key: ObjectKey, cluster: ClusterView? = nil, row: Int = 0) -> T {
        let object = T()
        object._slot.table = self
        object._slot.core = core
        object._slot.key = key.rawValue
        if let cluster {
            object._slot.cluster = cluster
            object._slot.row = row
            object._slot.generation = cluster.generation
            // A frozen object's reads always take the locked path (`_relocate`), which the
            // missing session generation forces.
            if frozenLock == nil { object._slot.sessionGeneration = UnsafePointer(session.generationPointer) }
            object._slot.columns = UnsafePointer(cluster.columns)
        }
        return object
    }
}

extension Database {
    /// The managed object for `key` of type `type`, or nil when it does not exist.
    func materialize<T: Object>(_ type: T.Type, key: ObjectKey) -> T? {
        core.withReadLock {
            guard let context = try? core.context(for: type), (try? context.table.contains(key)) == true else { return nil }
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

    var isInvalidatedForObjects: Bool { core.isInvalidated }
    func verify(_ operation: @autoclosure () -> String) { core.verify(operation()) }
    func verifyWrite(_ operation: @autoclosure () -> String) { core.verifyWrite(operation()) }
}
