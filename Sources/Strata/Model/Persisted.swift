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
    /// The property's column in the table of the managed object holding this wrapper; -1
    /// while the object is unmanaged. Written once, through the field's offset, when the
    /// object becomes managed (`Object._becomeManaged`), and read by the accessors, where the
    /// storage key path is a literal the compiler folds into a plain load.
    @usableFromInline var column: Int32 = -1
    /// The managed object holding this wrapper (nil while it is unmanaged), written beside
    /// `column` by `Object._becomeManaged`. Read only by `encode(to:)`, which the object's own
    /// `encode(to:)` calls while the object is alive: the compiler's `Encodable` code hands
    /// the wrapper alone to the encoder, and a managed wrapper holds no value.
    var owner: UnsafeRawPointer?

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
        // A managed object's wrapper holds its column. Every access below goes through the
        // storage key path and nothing else: the compiler folds a literal key path applied to
        // a stored property into a plain load or store, and since the key path then never
        // escapes, the whole-module optimizer can also drop the dynamic exclusivity checks on
        // the wrapper's field. Each access is a single load or store with no call inside it.
        @inline(__always) get {
            let column = observed[keyPath: storageKeyPath].column
            if column >= 0 { return Value._strataGet(observed, Int(truncatingIfNeeded: column)) }
            if let recorder = observed._slot.recorder {
                observed[keyPath: storageKeyPath].storage = .recording
                return _recordingValue(recorder)
            }
            if case .unmanaged(let value) = observed[keyPath: storageKeyPath].storage { return value }
            let value = Value._strataDefault()
            observed[keyPath: storageKeyPath].storage = .unmanaged(value)
            return value
        }
        @inline(__always) set {
            let column = observed[keyPath: storageKeyPath].column
            if column >= 0 {
                Value._strataSet(observed, Int(truncatingIfNeeded: column), newValue)
                return
            }
            observed[keyPath: storageKeyPath].storage = .unmanaged(newValue)
        }
    }

    /// What a key-path recorder's probe returns for this property.
    @usableFromInline @inline(never)
    static func _recordingValue(_ recorder: KeyPathRecorder) -> Value {
        Value._strataRecordingValue(recorder.child())
    }
}

/// What schema discovery and object management need from a wrapper, whatever its value type.
protocol PersistedProtocol {
    var isPrimaryKey: Bool { get }
    var isIndexed: Bool { get }
    static var valueShape: _PropertyShape { get }
    static func fieldAccess(offset: Int) -> any FieldAccess
    /// The byte offset of `column` inside the wrapper (nil never happens for a stored
    /// property of a struct; discovery reports it as an error rather than trusting that).
    static var columnOffset: Int? { get }
    /// The byte offset of `owner` inside the wrapper (nil as for `columnOffset`).
    static var ownerOffset: Int? { get }
}

extension Persisted: PersistedProtocol {
    static var valueShape: _PropertyShape { Value._strataShape }
    static func fieldAccess(offset: Int) -> any FieldAccess { TypedFieldAccess<Value>(offset: offset) }
    static var columnOffset: Int? { MemoryLayout<Persisted<Value>>.offset(of: \Persisted<Value>.column) }
    static var ownerOffset: Int? { MemoryLayout<Persisted<Value>>.offset(of: \Persisted<Value>.owner) }
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
