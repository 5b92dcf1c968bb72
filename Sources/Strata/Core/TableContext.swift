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
    /// `info.columnOffsets`, for materialising objects.
    let columnOffsets: UnsafeBufferPointer<Int>
    /// `info.ownerOffsets`, likewise.
    let ownerOffsets: UnsafeBufferPointer<Int>
    /// Whether the class has reference-typed properties to bind (`info.referenceProperties`).
    let hasReferenceProperties: Bool

    /// The frozen instance's lock (see `DatabaseCore.frozenLock`); nil for a live instance.
    let frozenLock: RecursiveLock?
    /// Set when `invalidate()` released the instance's version: the objects made through this
    /// context are invalidated. The instance makes a new context on its next use of the class.
    var isReleased = false
    /// The live views of collections nested in mixed values of this table's objects, so
    /// changes made through this instance move them with their elements.
    private(set) lazy var nestedViews = MixedNestingRegistry()

    init(core: DatabaseCore, table: TableAccess, info: ClassInfo) {
        self.core = core
        self.table = table
        self.session = core.session
        self.info = info
        self.columnOffsets = info.columnOffsets
        self.ownerOffsets = info.ownerOffsets
        self.hasReferenceProperties = !info.referenceProperties.isEmpty
        self.frozenLock = core.frozenLock
    }

    /// The public face of the instance.
    var database: Database { Database(core: core) }

    /// Stops on an error the store reported while reading or writing a property, which only
    /// a damaged file or a failed disk causes; damage is recorded first, so that the next
    /// open throws instead (`DatabaseCore.stop`).
    func fail(_ error: any Error) -> Never {
        core.stop(error, "Strata could not access '\(table.schema.name)' in \(core.configuration.path)")
    }

    /// A managed object for `key`, as `type`: the context's class (`info.type`) is the class
    /// the context was made for, `type` itself or (when the caller passed a subclass's
    /// metatype as `type`) a subclass of it.
    func materialize<T: Object>(_ type: T.Type, key: ObjectKey, cluster: ClusterView? = nil, row: Int = 0) -> T {
        unsafeDowncast(materialize(dynamicKey: key, cluster: cluster, row: row), to: T.self)
    }

    /// A managed object of the context's class (`info.type`) for `key`, with the cluster view
    /// and row holding it when the caller found them.
    func materialize(dynamicKey key: ObjectKey, cluster: ClusterView? = nil, row: Int = 0) -> Object {
        // Results made before `invalidate()` keep this context; what they yield now belongs to
        // the instance's current one.
        if isReleased { return successor.materialize(dynamicKey: key, cluster: cluster, row: row) }
        let object = info.type.init()
        object._becomeManaged(self, key: key.rawValue)
        if let cluster { place(object, cluster: cluster, row: row) }
        return object
    }
}

extension TableContext {
    /// The instance's current context for this context's class (or dynamic type), for a
    /// context `invalidate()` released.
    var successor: TableContext {
        do {
            if info.type == DynamicObject.self { return try core.dynamicContext(named: table.schema.name) }
            return try core.context(for: info.type)
        } catch {
            fatalError("\(error)")
        }
    }

    /// Stops with RealmSwift's message when an object read before `invalidate()` is used
    /// (reading or writing its properties).
    func requireCurrent() {
        if isReleased {
            fatalError("Object of type '\(table.schema.name)' has been deleted or invalidated; check isInvalidated before using it.")
        }
    }

    /// The stored form of a primary-key argument (an `Int`, a `String`, an `ObjectId`, an
    /// enum's raw value, nil for an optional key, …). Stops with a message when the type has no
    /// primary key or `key` does not fit it.
    func primaryKeyValue<Key>(_ key: Key, _ operation: @autoclosure () -> String) -> StoreValue {
        guard let pk = info.primaryKeyIndex else {
            fatalError("'\(table.schema.name)' has no primary key; \(operation()) needs one.")
        }
        // One reference to the table for the whole conversion (each `self.table` at a call
        // was retained and released around it).
        let table = self.table
        if Key.self == Int.self, table.primaryKeyKind == .int {
            // The common case without a dynamic cast (the caller's generic function is not
            // specialised for its key type): the metadata comparison proves the cast.
            return .int(Int64(unsafeBitCast(key, to: Int.self)))
        }
        let property = table.schema.properties[pk]
        guard let converted = StoreValue.primaryKey(key, kind: property.kind, optional: property.isOptional) else {
            fatalError("\(type(of: key)) is not the type of '\(table.schema.name)'s primary key (\(property.typeDescription)).")
        }
        return converted
    }

    /// The object whose primary key is `value`, and where it is, or nil.
    func locate(primaryKey value: StoreValue) -> (key: ObjectKey, cluster: ClusterView, row: Int)? {
        do {
            guard let (key, cluster, row) = try table.locate(primaryKey: value) else { return nil }
            return (key, cluster, row)
        } catch {
            fail(error)
        }
    }
}
