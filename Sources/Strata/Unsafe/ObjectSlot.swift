// The per-object state of a model object, stored inline in the object.
//
// Unsafe parts and the invariants they rely on:
// - `tableReference` and `coreReference` are unretained. `core` (retained, `coreOwner`) keeps
//   the instance alive for as long as the object is, and the instance keeps every table
//   context it made until it is deallocated (`DatabaseCore.retiredContexts`), so both stay
//   valid while the object lives. They are set only together, by `Object._becomeManaged`.
// - `sessionGeneration` points at the session's generation counter, and `columns` at the
//   column views of `cluster`. The session lives as long as the instance (kept by `core`) and
//   the views as long as `cluster` (held here); `columns` is read only while the generation
//   it was found in is the session's (see Object+SlotAccess.swift).
// - The slot is read and written only in the instance's context (a frozen object's under its
//   instance's lock), field by field, which is why `Object._slot` is exempt from dynamic
//   exclusivity checks.

import StrataStore

/// Per-object state, stored inline in the object (no allocation of its own); the property is
/// exempt from dynamic exclusivity checks so that the accessors read it with plain loads.
public struct _ObjectSlot {
    /// The table of a managed object; nil while unmanaged. Not retained (one reference count
    /// less per materialised object): it is set only together with `core`, to a context of
    /// that instance, and an instance keeps every table context it made until it is
    /// deallocated (`DatabaseCore.retiredContexts`); `core` keeps the instance alive.
    var table: TableContext? {
        get { tableReference?.takeUnretainedValue() }
        set { tableReference = newValue.map { Unmanaged.passUnretained($0) } }
    }
    /// The same table, as stored.
    var tableReference: Unmanaged<TableContext>?
    /// Keeps the database instance alive while the object is. A setter rather than a
    /// `didSet`, which would read the new value back and retain it a second time on every
    /// materialised object.
    var core: DatabaseCore? {
        get { coreOwner }
        set {
            coreReference = newValue.map { Unmanaged.passUnretained($0) }
            coreOwner = newValue
        }
    }
    private var coreOwner: DatabaseCore?
    /// The same instance without reference counting, for the property-read fast path.
    var coreReference: Unmanaged<DatabaseCore>?
    var key: Int64 = -1
    /// The cluster and row the object was last found in, valid while `generation` matches the
    /// session's generation (read through `sessionGeneration`).
    var cluster: ClusterView?
    var row = 0
    var generation: UInt64 = 0
    var sessionGeneration: UnsafePointer<UInt64>?
    /// The cluster's column views (owned by `cluster`).
    var columns: UnsafePointer<ChunkView>?
    /// Set on the prototypes that record key paths.
    @usableFromInline var recorder: KeyPathRecorder?
    /// Set when the object was deleted through this instance or its transaction rolled back.
    var invalidated = false

    init() {}
}
