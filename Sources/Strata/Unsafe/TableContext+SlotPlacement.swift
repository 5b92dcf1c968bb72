// Where a table context records, in an object's slot, the location it found the object at:
// the cluster view and row, and the raw pointers the one-load read path uses (the session's
// generation counter, the view's column buffer).
//
// Invariants they rely on (see ObjectSlot.swift for the slot's):
// - `columns` is set only together with the `cluster` whose buffer it points into, so the
//   buffer lives as long as the slot holds that view.
// - `sessionGeneration` is set only for a live instance: a frozen object's slot carries none,
//   which keeps its reads on the locked path (`_relocate` → `_frozenLocation`).
// - `rebind` is used only on an object nothing else references (`SoleReference`), so no
//   other code observes the slot change.

import StrataStore

extension TableContext {
    /// Records where a new object was found.
    @inline(__always)
    func place(_ object: Object, cluster: ClusterView, row: Int) {
        object._slot.cluster = cluster
        object._slot.row = row
        object._slot.generation = cluster.generation
        // A frozen object's reads always take the locked path (`_relocate`), which the
        // missing session generation forces.
        if frozenLock == nil { object._slot.sessionGeneration = UnsafePointer(session.generationPointer) }
        object._slot.columns = UnsafePointer(cluster.columns)
    }

    /// Points `object`, a managed accessor made by this context that nothing else references,
    /// at object `key`, as `materialize` would have set up a new one.
    @inline(__always)
    func rebind(_ object: Object, key: ObjectKey, cluster: ClusterView?, row: Int) {
        object._slot.key = key.rawValue
        object._slot.invalidated = false
        if let cluster {
            // The columns buffer belongs to the view; while the slot holds the old view, a
            // different view cannot have the same buffer.
            let columns = UnsafePointer(cluster.columns)
            if object._slot.columns != columns || object._slot.sessionGeneration == nil {
                place(object, cluster: cluster, row: row)
            } else {
                object._slot.row = row
            }
        } else {
            object._slot.cluster = nil
            object._slot.columns = nil
            object._slot.sessionGeneration = nil
        }
    }
}
