// Direct access to the `@Persisted` wrappers inside an object, through their byte offsets:
// `TypedFieldAccess` (the `FieldAccess` of one property) and `persistedWrapper(in:at:_:)`, the
// one place that turns an object and an offset into a pointer to a wrapper (InsertPlan reads
// through it too).
//
// Invariants they rely on:
// - The offset is that of a stored property of the object's exact class, taken from the
//   runtime's field list when the class was registered (`ClassInfo`), and that property's type
//   was checked then to be `Persisted<Value>`.
// - The caller holds the object for the duration of the access (the pointer is not retained
//   and must not outlive the call).

import StrataStore

/// The `Persisted<Value>` wrapper at byte `offset` in `object`. See the invariants above.
@inline(__always)
func persistedWrapper<Value: _Persistable>(in object: Object, at offset: Int, _: Value.Type) -> UnsafeMutablePointer<Persisted<Value>> {
    (UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + offset)
        .assumingMemoryBound(to: Persisted<Value>.self)
}

/// The `FieldAccess` of one `@Persisted` property whose value type is `Value`.
struct TypedFieldAccess<Value: _Persistable>: FieldAccess {
    let offset: Int

    @inline(__always)
    private func wrapper(_ object: Object) -> UnsafeMutablePointer<Persisted<Value>> {
        persistedWrapper(in: object, at: offset, Value.self)
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
