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
        case recording
    }

    @usableFromInline var storage: Storage
    @usableFromInline let isPrimaryKey: Bool
    @usableFromInline let isIndexed: Bool

    /// A property without an initial value: nil, zero, false, "", empty data, the first case
    /// of an enum, or a new `ObjectId`/`UUID`.
    @inlinable
    public init() {
        storage = .lazyDefault
        isPrimaryKey = false
        isIndexed = false
    }

    /// A property with an initial value.
    @inlinable
    public init(wrappedValue: Value) {
        storage = .unmanaged(wrappedValue)
        isPrimaryKey = false
        isIndexed = false
    }

    /// The type's primary key (Int, String, ObjectId, UUID or Bool, or an optional of one).
    /// It can be set only until the object is added to a database.
    @inlinable
    public init(primaryKey: Bool) {
        storage = .lazyDefault
        isPrimaryKey = primaryKey
        isIndexed = false
    }

    /// The type's primary key, with an initial value.
    @inlinable
    public init(wrappedValue: Value, primaryKey: Bool) {
        storage = .unmanaged(wrappedValue)
        isPrimaryKey = primaryKey
        isIndexed = false
    }

    /// A property with a secondary index (Int, String, Bool, Date, ObjectId or UUID, or an
    /// optional of one), which makes equality queries on it fast.
    @inlinable
    public init(indexed: Bool) {
        storage = .lazyDefault
        isPrimaryKey = false
        isIndexed = indexed
    }

    /// An indexed property with an initial value.
    @inlinable
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
        // A managed object's property is found by the identity of its storage key path (a short
        // per-table list); the wrapper itself only holds unmanaged values. Writing the column
        // back into the wrapper through the key path was measured to cost more than the lookup.
        @inline(__always) get {
            let column = _column(observed, storageKeyPath)
            if column >= 0 { return Value._strataGet(observed, column) }
            return _unmanagedGet(observed, storageKeyPath)
        }
        @inline(__always) set {
            let column = _column(observed, storageKeyPath)
            if column >= 0 {
                Value._strataSet(observed, column, newValue)
                return
            }
            _unmanagedSet(observed, storageKeyPath, newValue)
        }
    }

    /// The column of the property for a managed object, -1 for an unmanaged one.
    @inlinable @inline(__always)
    static func _column<EnclosingSelf: Object>(_ object: EnclosingSelf, _ storage: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>) -> Int {
        object._managedColumn(storage) { probe in
            if let probe = probe as? EnclosingSelf { probe[keyPath: storage].storage = .recording }
        }
    }

    /// An unmanaged object's value. Inlined into the client, where `Value` is concrete, so the
    /// common case (a value is set and no key path is being recorded) runs without generic
    /// metadata lookups.
    @inlinable @inline(__always)
    static func _unmanagedGet<EnclosingSelf: Object>(_ object: EnclosingSelf, _ storage: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>) -> Value {
        if object._slot.recorder == nil, case .unmanaged(let value) = object[keyPath: storage].storage { return value }
        return _unmanagedGetSlow(object, storage)
    }

    @usableFromInline @inline(never)
    static func _unmanagedGetSlow<EnclosingSelf: Object>(_ object: EnclosingSelf, _ storage: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>) -> Value {
        if let recorder = object._slot.recorder {
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
        }
    }

    @inlinable @inline(__always)
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
        case .lazyDefault, .recording:
            let value = Value._strataDefault()
            pointer.pointee.storage = .unmanaged(value)
            return value
        }
    }

    func stored(_ object: Object, _ database: Database?) -> _StoredProperty {
        // The caller holds `object` for the duration of the call. The value's own conformance
        // reads the wrapper: there `Value` is concrete (specialised code, no metadata lookups
        // for `Persisted<Value>` and its storage on every call, as this generic context needs).
        Value._strataUnmanagedStored(at: UnsafeMutableRawPointer(wrapper(object)), database)
    }

    func setUnmanaged(_ object: Object, any: Any, _ database: Database?) -> Bool {
        guard let value = Value._strataFrom(any: any, database) else { return false }
        withExtendedLifetime(object) { wrapper(object).pointee.storage = .unmanaged(value) }
        return true
    }

    func unmanagedAny(_ object: Object) -> Any { unmanagedValue(object)._strataAny }

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
