import StrataStore

/// A stored property held in a reference-typed field of an `Object` subclass
/// (`let age = _ReferenceProperty<Int?>()`): the storage behind RealmSwift's legacy
/// `RealmProperty<T?>` and `RealmOptional<T>`, which `StrataRealmCompat` names. Strata's own
/// models declare `@Persisted var age: Int?` instead.
///
/// Until its object is managed, the property holds its value itself. When the object becomes
/// managed (added, or read from a database), the property is bound to that object's table,
/// key and column, and ``value`` reads and writes the database: through the object while it
/// is alive, and through a new accessor of the same object when the property outlived it (as
/// in `realm.objects(Person.self).first?.age.value`, where the object is a temporary). The
/// property holds the database instance, never a pointer to its object, so reading it is safe
/// whatever the object's lifetime; it is confined to the object's thread, queue or actor like
/// the object.
///
/// Declare it with `let`: schema discovery finds the instance the object was made with and
/// binds that one.
public final class _ReferenceProperty<Value: _Persistable> {
    /// Where a managed property's value lives.
    struct Binding {
        /// The object the property belongs to, while it is alive.
        weak var owner: Object?
        /// The object's table in its instance; the instance keeps it (see `ObjectSlot`).
        let context: TableContext
        /// Keeps the instance, and so `context`, alive.
        let core: DatabaseCore
        let key: Int64
        let column: Int

        /// An accessor of the object: its own, or a new one when it is gone.
        func accessor() -> Object {
            if let owner { return owner }
            return context.materialize(dynamicKey: ObjectKey(key))
        }
    }

    /// The value while unmanaged (nil: not set yet, the type's default).
    private var unmanagedValue: Value?
    private var binding: Binding?
    /// Whether the property belongs to a key-path recorder's probe (see `KeyPathRecorder`).
    private var isRecording = false
    /// Whether a key path read the probe's property since the recorder last asked.
    private var wasRead = false

    /// A property holding the type's default value: nil for an optional.
    public init() {}

    /// A property holding `value` until it is changed.
    public init(_ value: Value) {
        unmanagedValue = value
    }

    /// The property's value: the stored one when its object is managed (writing it then
    /// needs a write transaction, as for any managed property), else the one it holds.
    public var value: Value {
        get {
            if let binding {
                let object = binding.accessor()
                return Value._strataGet(object, binding.column)
            }
            if isRecording { wasRead = true }
            return unmanaged
        }
        set {
            if let binding {
                let object = binding.accessor()
                Value._strataSet(object, binding.column, newValue)
                return
            }
            unmanagedValue = newValue
        }
    }

    /// The value while unmanaged, the type's default until one is set.
    var unmanaged: Value {
        if let unmanagedValue { return unmanagedValue }
        let value = Value._strataDefault()
        unmanagedValue = value
        return value
    }

    /// Sets the value of an unmanaged property.
    func setUnmanaged(_ value: Value) {
        unmanagedValue = value
    }

    /// Makes a key-path recorder's probe note reads of the property.
    func startRecording() { isRecording = true }

    /// Notes that a key path read the property, when it belongs to a probe.
    func markRecordingRead() {
        if isRecording { wasRead = true }
    }

    /// Whether a key path read the property since the last call (and clears that).
    func takeRecordingMark() -> Bool {
        defer { wasRead = false }
        return wasRead
    }

    /// Makes the property read and write column `column` of `owner`, which just became the
    /// managed accessor of object `key` in `context`.
    func bind(owner: Object, context: TableContext, key: Int64, column: Int) {
        binding = Binding(owner: owner, context: context, core: context.core, key: key, column: column)
        unmanagedValue = nil
    }
}

/// What schema discovery needs from a `_ReferenceProperty`, whatever its value type.
protocol ReferencePropertyProtocol: AnyObject {
    static var valueShape: _PropertyShape { get }
    static func fieldAccess(offset: Int) -> any ReferenceFieldBinding
    /// Notes that a key path read the property, when it belongs to a recorder's probe.
    func markRecordingRead()
}

extension _ReferenceProperty: ReferencePropertyProtocol {
    static var valueShape: _PropertyShape { Value._strataShape }
    static func fieldAccess(offset: Int) -> any ReferenceFieldBinding { ReferenceFieldAccess<Value>(offset: offset) }
}

/// The `FieldAccess` of a reference-typed property, which also binds the property when its
/// object becomes managed.
protocol ReferenceFieldBinding: FieldAccess {
    func bind(_ object: Object, context: TableContext, key: Int64, column: Int)
    /// Makes the property of `object`, a key-path recorder's probe, note reads.
    func startRecording(_ object: Object)
}
