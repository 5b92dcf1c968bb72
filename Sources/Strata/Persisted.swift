import StrataStore

/// Declares a stored property of an `Object` subclass:
///
/// ```swift
/// class Todo: Object {
///     @Persisted(primaryKey: true) var _id: ObjectId
///     @Persisted var name: String
///     @Persisted(indexed: true) var owner = ""
/// }
/// ```
///
/// Until the object is added to a database, the wrapper holds the value like a plain stored
/// property. Once the object is managed, reads and writes go straight to the database
/// instance's current version.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    @usableFromInline
    enum Storage {
        case unmanaged(Value)
        case lazyDefault
        case managed(Int)
        case recording
    }

    @usableFromInline var storage: Storage
    @usableFromInline let isPrimaryKey: Bool
    @usableFromInline let isIndexed: Bool

    /// A property without an initial value: nil, zero, false, "", empty data, the first case
    /// of an enum, or a new `ObjectId`/`UUID`.
    public init() {
        storage = .lazyDefault
        isPrimaryKey = false
        isIndexed = false
    }

    /// A property with an initial value.
    public init(wrappedValue: Value) {
        storage = .unmanaged(wrappedValue)
        isPrimaryKey = false
        isIndexed = false
    }

    /// The type's primary key (Int, String, ObjectId, UUID or Bool, or an optional of one).
    /// It can be set only until the object is added to a database.
    public init(primaryKey: Bool) {
        storage = .lazyDefault
        isPrimaryKey = primaryKey
        isIndexed = false
    }

    /// The type's primary key, with an initial value.
    public init(wrappedValue: Value, primaryKey: Bool) {
        storage = .unmanaged(wrappedValue)
        isPrimaryKey = primaryKey
        isIndexed = false
    }

    /// A property with a secondary index (Int, String, Bool, Date, ObjectId or UUID, or an
    /// optional of one), which makes equality queries on it fast.
    public init(indexed: Bool) {
        storage = .lazyDefault
        isPrimaryKey = false
        isIndexed = indexed
    }

    /// An indexed property with an initial value.
    public init(wrappedValue: Value, indexed: Bool) {
        storage = .unmanaged(wrappedValue)
        isPrimaryKey = false
        isIndexed = indexed
    }

    @available(*, unavailable, message: "@Persisted can only be used as a property of an Object subclass")
    public var wrappedValue: Value {
        get { fatalError("@Persisted can only be used as a property of an Object subclass") }
        // swiftlint:disable:next unused_setter_value
        set { fatalError("@Persisted can only be used as a property of an Object subclass") }
    }

    @inlinable
    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance observed: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        @inline(__always) get {
            if case .managed(let column) = observed[keyPath: storageKeyPath].storage {
                return Value._strataGet(observed, column)
            }
            return _slowGet(observed, storageKeyPath)
        }
        @inline(__always) set {
            if case .managed(let column) = observed[keyPath: storageKeyPath].storage {
                Value._strataSet(observed, column, newValue)
                return
            }
            _slowSet(observed, storageKeyPath, newValue)
        }
    }

    /// The first access to a property of a managed object finds its column and remembers it in
    /// the wrapper; unmanaged objects read the wrapper's own value.
    @inlinable
    static func _slowGet<EnclosingSelf: Object>(_ object: EnclosingSelf, _ storage: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>) -> Value {
        let column = object._managedColumn(storage) { probe in
            if let probe = probe as? EnclosingSelf { probe[keyPath: storage].storage = .recording }
        }
        // The column is not written back into the wrapper: writing through the key path costs
        // more than finding the column again in the table's short list.
        if column >= 0 { return Value._strataGet(object, column) }
        return _unmanagedGet(object, storage)
    }

    @inlinable
    static func _slowSet<EnclosingSelf: Object>(_ object: EnclosingSelf, _ storage: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>, _ value: Value) {
        let column = object._managedColumn(storage) { probe in
            if let probe = probe as? EnclosingSelf { probe[keyPath: storage].storage = .recording }
        }
        if column >= 0 {
            Value._strataSet(object, column, value)
            return
        }
        _unmanagedSet(object, storage, value)
    }

    @usableFromInline
    static func _unmanagedGet<EnclosingSelf: Object>(_ object: EnclosingSelf, _ storage: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>) -> Value {
        if let recorder = object._slot.pointee.recorder {
            object[keyPath: storage].storage = .recording
            return Value._strataRecordingValue(recorder.child())
        }
        switch object[keyPath: storage].storage {
        case .unmanaged(let value):
            return value
        case .lazyDefault, .recording:
            let value = Value._strataDefault()
            object[keyPath: storage].storage = .unmanaged(value)
            return value
        case .managed(let column):
            return Value._strataGet(object, column)
        }
    }

    @usableFromInline
    static func _unmanagedSet<EnclosingSelf: Object>(_ object: EnclosingSelf, _ storage: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>, _ value: Value) {
        object[keyPath: storage].storage = .unmanaged(value)
    }
}

/// What schema discovery and object management need from a wrapper, whatever its value type.
protocol PersistedProtocol {
    var isPrimaryKey: Bool { get }
    var isIndexed: Bool { get }
    static var valueShape: _PropertyShape { get }
    static func fieldAccess(offset: Int) -> any FieldAccess
}

extension Persisted: PersistedProtocol {
    static var valueShape: _PropertyShape { Value._strataShape }
    static func fieldAccess(offset: Int) -> any FieldAccess { TypedFieldAccess<Value>(offset: offset) }
}

/// Direct access to one wrapper inside an object, through the field's byte offset.
protocol FieldAccess {
    /// The unmanaged value's stored form (linked unmanaged objects are added to `database`).
    func stored(_ object: Object, _ database: Database?) -> _StoredProperty
    /// Sets the unmanaged value from loose input; false when it does not fit.
    func setUnmanaged(_ object: Object, any: Any, _ database: Database?) -> Bool
    /// The unmanaged value as `Any`.
    func unmanagedAny(_ object: Object) -> Any
    /// Points the wrapper at a column of a managed object.
    func markManaged(_ object: Object, column: Int)
    /// Reads a managed value as `Any`.
    func managedAny(_ object: Object, column: Int) -> Any
    /// Writes a managed value from loose input; false when it does not fit.
    func setManaged(_ object: Object, column: Int, any: Any) -> Bool
    /// Whether a recorder marked this wrapper (and clears the mark).
    func takeRecordingMark(_ object: Object) -> Bool
}

struct TypedFieldAccess<Value: _Persistable>: FieldAccess {
    let offset: Int

    @inline(__always)
    private func wrapper(_ object: Object) -> UnsafeMutablePointer<Persisted<Value>> {
        // The offset comes from the runtime's field list for this exact class, and the field's
        // type was checked to be Persisted<Value> when the class was registered.
        (UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + offset)
            .assumingMemoryBound(to: Persisted<Value>.self)
    }

    private func unmanagedValue(_ object: Object) -> Value {
        let pointer = wrapper(object)
        switch pointer.pointee.storage {
        case .unmanaged(let value): return value
        case .managed(let column): return Value._strataGet(object, column)
        case .lazyDefault, .recording:
            let value = Value._strataDefault()
            pointer.pointee.storage = .unmanaged(value)
            return value
        }
    }

    func stored(_ object: Object, _ database: Database?) -> _StoredProperty {
        // The caller holds `object` for the duration of the call.
        unmanagedValue(object)._strataStored(database)
    }

    func setUnmanaged(_ object: Object, any: Any, _ database: Database?) -> Bool {
        guard let value = Value._strataFrom(any: any, database) else { return false }
        withExtendedLifetime(object) { wrapper(object).pointee.storage = .unmanaged(value) }
        return true
    }

    func unmanagedAny(_ object: Object) -> Any { unmanagedValue(object)._strataAny }

    func markManaged(_ object: Object, column: Int) {
        withExtendedLifetime(object) { wrapper(object).pointee.storage = .managed(column) }
    }

    func managedAny(_ object: Object, column: Int) -> Any { Value._strataGet(object, column)._strataAny }

    func setManaged(_ object: Object, column: Int, any: Any) -> Bool {
        guard let value = Value._strataFrom(any: any, object._database) else { return false }
        Value._strataSet(object, column, value)
        return true
    }

    func takeRecordingMark(_ object: Object) -> Bool {
        withExtendedLifetime(object) {
            let pointer = wrapper(object)
            if case .recording = pointer.pointee.storage {
                pointer.pointee.storage = .lazyDefault
                return true
            }
            return false
        }
    }
}
