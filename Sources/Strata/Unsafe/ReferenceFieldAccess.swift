// Access to a `_ReferenceProperty` field inside an object, through the field's byte offset.
//
// Invariants it relies on:
// - The offset is that of a stored property of the object's exact class, taken from the
//   runtime's field list when the class was registered (`ClassInfo`), and that property's type
//   was checked then to be `_ReferenceProperty<Value>` (a strong class reference).
// - The caller holds the object for the duration of the access. The property is loaded as a
//   strong reference (retained), so it may outlive the call; the pointer to the field may not.

import StrataStore

/// The `FieldAccess` of one `_ReferenceProperty<Value>` property.
struct ReferenceFieldAccess<Value: _Persistable>: ReferenceFieldBinding {
    let offset: Int

    /// The property instance the object holds. See the invariants above.
    private func property(_ object: Object) -> _ReferenceProperty<Value> {
        withExtendedLifetime(object) {
            (UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + offset)
                .assumingMemoryBound(to: _ReferenceProperty<Value>.self).pointee
        }
    }

    func stored(_ object: Object, _ database: Database?) -> _StoredProperty {
        property(object).unmanaged._strataStored(database)
    }

    func setUnmanaged(_ object: Object, any: Any, _ database: Database?) -> Bool {
        guard let value = Value._strataFrom(any: any, database) else { return false }
        property(object).setUnmanaged(value)
        return true
    }

    func unmanagedAny(_ object: Object) -> Any { property(object).unmanaged._strataAny }

    func managedAny(_ object: Object, column: Int) -> Any { Value._strataGet(object, column)._strataAny }

    func setManaged(_ object: Object, column: Int, any: Any) -> Bool {
        guard let value = Value._strataFrom(any: any, object._database) else { return false }
        Value._strataSet(object, column, value)
        return true
    }

    /// Whether a key path read the property of `object`, a recorder's probe: through its
    /// `value`, or by ending at the property itself.
    func takeRecordingMark(_ object: Object) -> Bool { property(object).takeRecordingMark() }

    func startRecording(_ object: Object) { property(object).startRecording() }

    func bind(_ object: Object, context: TableContext, key: Int64, column: Int) {
        property(object).bind(owner: object, context: context, key: key, column: column)
    }
}
