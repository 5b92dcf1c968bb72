// Inserting, updating and deleting objects inside a write transaction: the writer's copies
// of the clusters they change (`DirtyCluster`), and the index entries and change records
// that go with each write.

import StrataStorage

extension TableAccess {

    /// The writer's complete copy of the cluster that starts at `first`, to append rows to:
    /// as it is even when a chained write's point holds it (`saveWriteState`), since a return to
    /// the point drops rows appended after it.
    @inline(__always)
    private func appendable(_ first: Int64) -> DirtyCluster? {
        guard let cluster = dirty[first], cluster.complete else { return nil }
        return cluster
    }

    /// The dirty cluster `first`, copied first if a chained write's point holds it.
    private func mutableDirty(_ first: Int64) -> DirtyCluster? {
        guard let cluster = dirty[first] else { return nil }
        guard cluster.frozen else { return cluster }
        let copy = cluster.copy()
        dirty[first] = copy
        // New objects go on into the copy.
        if caches.lastNewCluster === cluster { caches.lastNewCluster = copy }
        session.invalidateViews()
        return copy
    }

    /// The writer's copy of the cluster that starts at `first`, with the columns `properties`
    /// (nil: all) loaded.
    private func dirtyCluster(_ first: Int64, loading properties: [Int]?) throws(StoreError) -> DirtyCluster {
        let cluster: DirtyCluster
        if let existing = mutableDirty(first) {
            cluster = existing
        } else if let carriedCluster = takeCarriedCluster(first) {
            cluster = carriedCluster
        } else {
            guard let tree = try clusters() else { throw .corrupted("a cluster of '\(schema.name)' vanished") }
            let keys = try chunk(in: tree, key: TreeKey.cluster(first, column: Cluster.keyColumn), expectedCount: nil, expectedWidth: 8)
            try Cluster.checkCount(keys.count, table: schema.name)
            cluster = DirtyCluster(firstKey: first, columnCount: schema.properties.count, existsInSnapshot: true)
            cluster.keys.load(keys, count: keys.count)
            dirty[first] = cluster
            session.invalidateViews()
        }
        for index in properties ?? Array(schema.properties.indices) where cluster.columns[index] == nil && !schema.properties[index].isList {
            let property = schema.properties[index]
            let buffer = ColumnBuffer(kind: property.kind, optional: property.isOptional, capacity: Cluster.capacity)
            let source = cluster.existsInSnapshot
                ? try snapshotChunk(firstKey: first, column: index, expectedCount: cluster.keys.count) : .absent
            buffer.load(source, count: cluster.keys.count)
            if source.values == nil && property.kind == .link {
                for row in 0..<cluster.keys.count { buffer.setFixed(Int64(-1), at: row) }
            }
            cluster.columns[index] = buffer
            session.invalidateViews()
        }
        if properties == nil { cluster.complete = true }
        return cluster
    }

    /// The last cluster the previous commit carried over, if it starts at `first` and this
    /// transaction starts from that commit's version: it becomes this transaction's copy
    /// (complete, as the snapshot holds it). Taken once.
    private func takeCarriedCluster(_ first: Int64) -> DirtyCluster? {
        guard let cluster = carriedForThisWrite?.lastCluster, cluster.firstKey == first else { return nil }
        carried?.lastCluster = nil
        carriedClustersTaken &+= 1
        dirty[first] = cluster
        session.invalidateViews()
        return cluster
    }

    private func checkValue(_ value: StoreValue, for index: Int) throws(StoreError) {
        let property = schema.properties[index]
        if value.isNull {
            guard property.isOptional || property.kind == .link else {
                throw .invalidValue(type: schema.name, property: property.name, reason: "nil is not allowed for a non-optional \(property.typeDescription)")
            }
            return
        }
        guard let kind = value.kind, property.kind.stores(kind) else {
            throw .invalidValue(type: schema.name, property: property.name,
                                reason: "a \(value.kind.map(\.description) ?? "nil") value cannot be stored in a \(property.typeDescription) property")
        }
        if value.isNestedCollection {
            try Self.checkNested(value, depth: 1, type: schema.name, property: property.name)
        }
    }

    /// Checks a list or dictionary nested in a mixed value: within the nesting limit, and
    /// holding no plain (untyped) links.
    static func checkNested(_ value: StoreValue, depth: Int, type: String, property: String) throws(StoreError) {
        let children: [StoreValue]
        switch value {
        case .mixedList(let elements): children = elements
        case .mixedDictionary(let entries): children = Array(entries.values)
        case .link: throw .invalidValue(type: type, property: property, reason: "a nested collection in a mixed value holds objects as links that name their table")
        default: return
        }
        guard depth <= MixedEncoding.maximumNestingDepth else {
            throw .invalidValue(type: type, property: property,
                                reason: "collections in a mixed value may nest at most \(MixedEncoding.maximumNestingDepth) levels deep")
        }
        for child in children { try checkNested(child, depth: depth + 1, type: type, property: property) }
    }

    /// Creates an object with these property values (one per property; list properties take
    /// `.null` here and are filled with `setList`). Returns its key.
    @discardableResult
    package func insert(_ values: [StoreValue]) throws(StoreError) -> ObjectKey {
        require(values.count == schema.properties.count, "insert needs one value per property")
        try session.requireWrite()
        try loadMeta()
        for index in scalarProperties {
            let value = values[index]
            if value.isNull ? !optionals[index] : (value.kind != kinds[index] || value.isNestedCollection) { try checkValue(value, for: index) }
        }
        let key = nextKey
        // First, so that a duplicate throws before anything changed.
        if let pk = primaryKeyIndex { try insertPrimaryKeyEntry(values[pk], property: pk, key: key) }
        nextKey += 1
        let target = try insertionCluster(for: key)
        let row = target.keys.count
        target.keys.insertRow(at: row)
        target.keys.setFixed(key, at: row)
        // Through buffer pointers: no copy of each value and fewer retains of each column.
        target.columns.withUnsafeBufferPointer { columns in
            values.withUnsafeBufferPointer { values in
                for index in scalarProperties {
                    columns[index].unsafelyUnwrapped.append(values[index])  // complete: every scalar column is loaded
                }
            }
        }
        return try finishInsert(key, in: target, row: row, session: session)
    }

    /// Creates an object whose property values `write` stores straight into the new row's
    /// column buffers (typed, without a `StoreValue` per property): the object layer's `add`.
    /// `primaryKey` is the primary key's value (ignored without a primary key); its index entry
    /// goes in first, so that a duplicate throws before anything changed. Every scalar column
    /// starts as null in the row (zero in a non-optional column, "no object" in a link column);
    /// `write` sets the properties with the setters of their kinds (`InsertRow`), and must not
    /// call back into the store. Returns the key.
    package func insert(primaryKey: StoreValue, writing write: (InsertRow) -> Void) throws(StoreError) -> ObjectKey {
        // One strong reference for the whole insert, rather than a retain and release at
        // each use of the unowned(unsafe) `session`.
        let session = self.session
        try session.requireWrite()
        try loadMeta()
        let key = nextKey
        if let pk = primaryKeyIndex {
            if primaryKey.isNull ? !optionals[pk] : primaryKey.kind != kinds[pk] { try checkValue(primaryKey, for: pk) }
            try insertPrimaryKeyEntry(primaryKey, property: pk, key: key)
        }
        nextKey += 1
        let target = try insertionCluster(for: key)
        let row = target.appendRow(key: key, scalarColumns: scalarProperties, linkColumns: linkProperties)
        target.withUnmanagedColumns { columns in write(InsertRow(columns: columns, row: row, table: self)) }
        return try finishInsert(key, in: target, row: row, session: session)
    }

    /// The key the next insert into this table in this transaction gives its object. Each
    /// insert takes the next key up (and commits keep the count), so a writer that inserts n
    /// objects in a row knows their keys before writing them: an importer writes links to
    /// objects it has not inserted yet with the objects that point at them. Only in a write
    /// transaction (like every write, a programmer error otherwise).
    package func nextInsertKey() throws(StoreError) -> ObjectKey {
        try session.requireWrite()
        try loadMeta()
        return ObjectKey(nextKey)
    }

    /// The cluster a new object with `key` goes into: the last cluster while it has room,
    /// otherwise a new one. Its scalar columns are all loaded.
    @inline(__always)
    private func insertionCluster(for key: Int64) throws(StoreError) -> DirtyCluster {
        // The common case: the cluster this transaction started last has room (it is complete;
        // a chained write's point may hold it, and appending is the change that needs no copy).
        if let last = caches.lastNewCluster, last.keys.count < Cluster.capacity { return last }
        var cluster: DirtyCluster?
        if let last = newClusters.last {
            if caches.lastNewCluster == nil { caches.lastNewCluster = appendable(last) ?? mutableDirty(last) }
            cluster = caches.lastNewCluster
        } else if let first = caches.snapshotLastCluster {
            if let existing = appendable(first) { cluster = existing } else { cluster = try dirtyCluster(first, loading: nil) }
        } else if let carriedCluster = carriedForThisWrite?.lastCluster {
            // The last commit's last cluster is the snapshot's last: no descent, no decoding.
            caches.snapshotLastCluster = carriedCluster.firstKey
            cluster = try dirtyCluster(carriedCluster.firstKey, loading: nil)
        } else if let tree = try clusters() {
            do {
                let cursor = try reading.makeCursor(on: tree)
                if try cursor.last() {
                    let first = Int64(bitPattern: TreeKey.readU64(cursor.key))
                    caches.snapshotLastCluster = first
                    cluster = try dirtyCluster(first, loading: nil)
                }
            } catch {
                throw StoreError.wrap(error)
            }
        }
        if let candidate = cluster {
            // Keys ascend: a new key at or below the last one (damaged counters) would
            // overwrite an object, or start a cluster over an existing one.
            let count = candidate.keys.count
            if count > 0, case let last = candidate.keys.view.int(count - 1), key <= last {
                throw .corrupted("'\(schema.name)' would give a new object the key \(key), but its last object has \(last): the table's counters are damaged")
            }
            if count >= Cluster.capacity { cluster = nil }
        }
        if let cluster {
            if !cluster.complete { _ = try dirtyCluster(cluster.firstKey, loading: nil) }
            return cluster
        }
        let target = DirtyCluster(firstKey: key, columnCount: schema.properties.count, existsInSnapshot: false)
        for index in scalarProperties {
            target.columns[index] = ColumnBuffer(kind: kinds[index], optional: schema.properties[index].isOptional, capacity: Cluster.capacity)
        }
        target.complete = true
        dirty[key] = target
        newClusters.append(key)
        caches.lastNewCluster = target
        return target
    }

    /// What follows writing a new object's row: secondary index entries, counts, the change
    /// record.
    @inline(__always)
    private func finishInsert(_ key: Int64, in target: DirtyCluster, row: Int, session: StoreSession) throws(StoreError) -> ObjectKey {
        session.invalidateViews()
        let objectKey = ObjectKey(key)
        for index in indexedProperties {
            let value = target.columns[index].unsafelyUnwrapped.view.value(row, kind: kinds[index])
            try addIndexEntry(value, key: objectKey, property: index)
        }
        storedCount += 1
        changes.insert(key)
        noteChange()
        if schema.isEmbedded { session.noteNewEmbedded(objectKey, in: self) }
        return objectKey
    }

    /// Sets one property of an existing object.
    package func set(_ value: StoreValue, for key: ObjectKey, property index: Int) throws(StoreError) {
        try session.requireWrite()
        try checkValue(value, for: index)
        guard let (view, row) = try locate(key) else { throw .objectNotFound(type: schema.name) }
        if let embedded = embeddedTarget(of: index) {
            // The new child must have no parent; the old one is deleted with the link.
            let old = try view.column(index).value(row, kind: .link)
            guard old != value else { return try write(value, for: key, property: index, at: (view, row)) }
            if case .link(let child) = value { try session.adoptEmbedded(child, in: embedded, by: self, property: index) }
            try write(value, for: key, property: index, at: (view, row))
            if case .link(let previous) = old { try session.delete([previous], from: embedded) }
            return
        }
        try write(value, for: key, property: index, at: (view, row))
    }

    /// `set`'s write, at the object's location.
    func write(_ value: StoreValue, for key: ObjectKey, property index: Int, at location: (view: ClusterView, row: Int)) throws(StoreError) {
        let (view, row) = location
        let indexed = index == primaryKeyIndex || indexTreeNames[index] != nil
        if indexed {
            let old = try view.column(index).value(row, kind: schema.properties[index].kind)
            if index == primaryKeyIndex, old != value, try find(primaryKey: value) != nil {
                throw .duplicatePrimaryKey(type: schema.name, value: "\(value)")
            }
            try removeIndexEntry(old, key: key, property: index)
            try addIndexEntry(value, key: key, property: index)
        }
        let cluster = try dirtyCluster(view.firstKey, loading: [index])
        if cluster.columns[index]!.set(value, at: row) { session.invalidateViews() }
        changes.modify(key.rawValue, property: index)
        noteChange(property: index)
    }

    /// A fixed-width column buffer to write `property` of the object at `key` in place, for
    /// the typed fast path. Marks the object modified.
    package func writableColumn(for key: ObjectKey, property index: Int) throws(StoreError) -> (buffer: ColumnBufferHandle, row: Int) {
        try session.requireWrite()
        guard let (view, row) = try locate(key) else { throw .objectNotFound(type: schema.name) }
        let cluster = try dirtyCluster(view.firstKey, loading: [index])
        changes.modify(key.rawValue, property: index)
        noteChange(property: index)
        return (ColumnBufferHandle(buffer: cluster.columns[index]!), row)
    }

    /// Deletes objects. Links to them from other objects are cleared by the session.
    package func delete(_ keys: [ObjectKey]) throws(StoreError) {
        try session.requireWrite()
        try loadMeta()
        for key in keys {
            guard let (view, row) = try locate(key) else { continue }
            if let pk = primaryKeyIndex {
                try removeIndexEntry(try view.column(pk).value(row, kind: schema.properties[pk].kind), key: key, property: pk)
            }
            for index in indexedProperties {
                try removeIndexEntry(try view.column(index).value(row, kind: schema.properties[index].kind), key: key, property: index)
            }
            for (index, property) in schema.properties.enumerated() where property.isList {
                try setList([], for: key, property: index, recordChange: false)
                if property.isMap { dirtyLists[ListID(property: index, key: key.rawValue, isMapKeys: true)] = [] }
            }
            let cluster = try dirtyCluster(view.firstKey, loading: nil)
            cluster.keys.removeRow(at: row)
            for buffer in cluster.columns { buffer?.removeRow(at: row) }
            session.invalidateViews()
            storedCount -= 1
            changes.delete(key.rawValue)
            // The link holders stay valid: a deleted holder is skipped where they are used.
            session.noteContentChange()
        }
    }
}
