// The object slot's unsafe accessors: how a managed object finds its property's column with
// one load, and how it becomes managed.
//
// Invariants they rely on:
// - `_becomeManaged` writes into the object's `@Persisted` wrappers through byte offsets. The
//   offsets are those of this exact class's fields (`ClassInfo`, from the runtime's field
//   list), whose types were checked to be `Persisted` values with an `Int32` column and an
//   optional raw pointer owner at the recorded places. For a class with reference-typed
//   properties (`_ReferenceProperty`), `ClassInfo.wrapperColumns` gives each wrapper's column,
//   and each such property is bound through `ReferenceFieldAccess` (see its invariants).
// - `_chunk`'s fast path reads `_slot.columns` only while the session's generation (read
//   through `_slot.sessionGeneration`) is the one the location was found in: any change to the
//   session's trees moves the generation on, so the views are those of a cluster still held by
//   `_slot.cluster`. Otherwise `_relocate` finds the object again. Frozen objects never take the
//   fast path: their slots carry no session generation, and `_frozenLocation` reads under the
//   frozen instance's lock.
// - The instance outlives the object's use of it (see ObjectSlot.swift), so `coreReference`
//   is used without retaining.

import StrataStore

extension Object {
    /// Makes this new or unmanaged object the managed accessor of object `key` in `context`'s
    /// table: the slot, and each wrapper's column (written through its offset, so the
    /// accessors find their column with one load) and owner (for `Persisted.encode(to:)`).
    @inline(__always)
    final func _becomeManaged(_ context: TableContext, key: Int64) {
        _slot.table = context
        _slot.core = context.core
        _slot.key = key
        // The offsets are those of this exact class's fields (`ClassInfo`), whose wrappers
        // are Persisted values with an Int32 column and an optional raw pointer owner at the
        // recorded places.
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        if context.hasReferenceProperties {
            _becomeManagedWithReferences(context, key: key, base: base)
            return
        }
        let offsets = context.columnOffsets
        let owners = context.ownerOffsets
        var index = 0
        while index < offsets.count {
            base.storeBytes(of: Int32(truncatingIfNeeded: index), toByteOffset: offsets[index], as: Int32.self)
            base.storeBytes(of: Optional(UnsafeRawPointer(base)), toByteOffset: owners[index], as: UnsafeRawPointer?.self)
            index &+= 1
        }
    }

    /// `_becomeManaged` for a class with reference-typed properties (`_ReferenceProperty`):
    /// the wrappers' columns come from `ClassInfo.wrapperColumns` (the reference-typed
    /// properties have columns but no wrapper), and each reference-typed property is bound.
    @inline(never)
    final func _becomeManagedWithReferences(_ context: TableContext, key: Int64, base: UnsafeMutableRawPointer) {
        let offsets = context.columnOffsets
        let owners = context.ownerOffsets
        let columns = context.info.wrapperColumns
        for index in 0..<offsets.count {
            base.storeBytes(of: Int32(truncatingIfNeeded: columns[index]), toByteOffset: offsets[index], as: Int32.self)
            base.storeBytes(of: Optional(UnsafeRawPointer(base)), toByteOffset: owners[index], as: UnsafeRawPointer?.self)
        }
        for reference in context.info.referenceProperties {
            reference.access.bind(self, context: context, key: key, column: reference.column)
        }
    }

    /// The chunk and row holding this object's property `column` in the current version.
    @inline(__always)
    final func _chunk(_ column: Int) -> (ChunkView, Int) {
        if let current = _slot.sessionGeneration, current.pointee == _slot.generation {
            // The cached location skips `_relocate`, so the context is checked here too: a
            // read from another thread must stop, not race the owner's next write.
            _slot.coreReference.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.verifyRead() }
            return (_slot.columns.unsafelyUnwrapped[column], _slot.row)
        }
        return _relocate(column)
    }

    @inline(never)
    final func _relocate(_ column: Int) -> (ChunkView, Int) {
        guard let table = _slot.table else {
            fatalError("internal error: a managed accessor on an unmanaged object")
        }
        if table.core.isFrozen { return _frozenLocation(column, table) }
        table.database.verify("reading an object's property")
        do {
            guard !_slot.invalidated, !table.isReleased, let (cluster, row) = try table.table.locate(ObjectKey(_slot.key)) else {
                fatalError("Object of type '\(table.table.schema.name)' has been deleted or invalidated; check isInvalidated before using it.")
            }
            _slot.cluster = cluster
            _slot.row = row
            _slot.generation = cluster.generation
            _slot.sessionGeneration = UnsafePointer(table.session.generationPointer)
            _slot.columns = UnsafePointer(cluster.columns)
            return (try cluster.column(column), row)
        } catch {
            table.fail(error)
        }
    }

    /// The location of property `column` of a frozen object, found (once) under the frozen
    /// instance's lock.
    final func _frozenLocation(_ column: Int, _ table: TableContext) -> (ChunkView, Int) {
        table.core.withReadLock {
            if let cluster = _slot.cluster, _slot.generation == table.session.generation {
                do { return (try cluster.column(column), _slot.row) } catch { table.fail(error) }
            }
            do {
                guard let (cluster, row) = try table.table.locate(ObjectKey(_slot.key)) else {
                    fatalError("Object of type '\(table.table.schema.name)' does not exist in this frozen version.")
                }
                _slot.cluster = cluster
                _slot.row = row
                _slot.generation = cluster.generation
                _slot.columns = UnsafePointer(cluster.columns)
                return (try cluster.column(column), row)
            } catch {
                table.fail(error)
            }
        }
    }
}
