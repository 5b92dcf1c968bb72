// List, set and map properties: reading them, replacing them whole, and changing them in
// place; a transaction's copies live in `dirtyLists` until the commit stores them.

import StrataStorage

extension TableAccess {

    /// The elements of a list property (a copy).
    package func list(_ key: ObjectKey, property index: Int) throws(StoreError) -> [StoreValue] {
        if let values = dirtyLists[ListID(property: index, key: key.rawValue)] { return values }
        let view = try listChunk(key, property: index)
        let kind = schema.properties[index].kind
        return (0..<view.count).map { view.value($0, kind: kind) }
    }

    /// The number of elements of a list property.
    package func listCount(_ key: ObjectKey, property index: Int) throws(StoreError) -> Int {
        if let values = dirtyLists[ListID(property: index, key: key.rawValue)] { return values.count }
        return try listChunk(key, property: index).count
    }

    /// One element of a list property.
    package func listElement(_ key: ObjectKey, property index: Int, at position: Int) throws(StoreError) -> StoreValue {
        if let values = dirtyLists[ListID(property: index, key: key.rawValue)] { return values[position] }
        let view = try listChunk(key, property: index)
        require(position >= 0 && position < view.count, "List index \(position) out of bounds (count \(view.count))")
        return view.value(position, kind: schema.properties[index].kind)
    }

    // MARK: Maps

    /// The keys of a map property, in ascending order of their UTF-8 bytes; its values are
    /// `list(key, property:)`, in the same order.
    package func mapKeys(_ key: ObjectKey, property index: Int) throws(StoreError) -> [String] {
        require(schema.properties[index].isMap, "mapKeys(_:property:) is for map properties")
        let stored: [StoreValue]
        if let values = dirtyLists[ListID(property: index, key: key.rawValue, isMapKeys: true)] {
            stored = values
        } else {
            guard let tree = try session.tree(listTreeName) else { return [] }
            let view = try chunk(in: tree, key: TreeKey.list(column: TreeKey.mapKeysColumn(columnIDs[index]), key), expectedCount: nil,
                                 expectedWidth: PropertyKind.string.width)
            stored = (0..<view.count).map { view.value($0, kind: .string) }
        }
        return try stored.map { value throws(StoreError) in
            guard case .string(let text) = value else {
                throw .corrupted("a key of the map '\(schema.properties[index].name)' of object \(key.rawValue) in '\(schema.name)' is not a string")
            }
            return text
        }
    }

    /// A map property's keys (in order) and the value of each; throws `corrupted` when the
    /// file's keys and values do not pair up.
    package func mapEntries(_ key: ObjectKey, property index: Int) throws(StoreError) -> (keys: [String], values: [StoreValue]) {
        let keys = try mapKeys(key, property: index)
        let values = try list(key, property: index)
        guard keys.count == values.count else {
            throw .corrupted("the map '\(schema.properties[index].name)' of object \(key.rawValue) in '\(schema.name)' has \(keys.count) keys and \(values.count) values")
        }
        return (keys, values)
    }

    /// Replaces the entries of a map property: `keys` in ascending order of their UTF-8 bytes,
    /// each once, and the value of each key at the same position.
    package func setMap(keys: [String], values: [StoreValue], for key: ObjectKey, property index: Int) throws(StoreError) {
        try checkNestedElements(values, property: index)
        let property = schema.properties[index]
        guard property.isMap else {
            throw .invalidValue(type: schema.name, property: property.name, reason: "the property is not a map")
        }
        guard keys.count == values.count else {
            throw .invalidValue(type: schema.name, property: property.name, reason: "a map needs one value per key (\(keys.count) keys, \(values.count) values)")
        }
        for position in keys.indices.dropFirst() where !MapKeyOrder.precedes(keys[position - 1], keys[position]) {
            throw .invalidValue(type: schema.name, property: property.name,
                                reason: "a map's keys must be distinct and in ascending order; \"\(keys[position - 1])\" comes before \"\(keys[position])\"")
        }
        try setList(values, for: key, property: index)
        dirtyLists[ListID(property: index, key: key.rawValue, isMapKeys: true)] = keys.map(StoreValue.string)
    }

    /// The keys of the objects whose list of links `index` holds `target`, in key order, read
    /// from the stored lists alone (one pass over the property's list entries, no object
    /// located); nil while this transaction has changes to the table that are not stored yet.
    package func keys(withList index: Int, holding target: ObjectKey) throws(StoreError) -> [ObjectKey]? {
        var keys: [ObjectKey] = []
        let complete = try forEachStoredList(index) { owner, chunk in
            for row in 0..<chunk.count where !chunk.isNull(row) && chunk.int(row) == target.rawValue {
                keys.append(owner)
                break
            }
        }
        return complete ? keys : nil
    }

    /// Calls `body` with each object's stored list of links `index` (its owner and its chunk),
    /// in key order, in one pass over the property's list entries. Returns false, having read
    /// nothing, while this transaction has changes to the table that are not stored yet.
    func forEachStoredList(_ index: Int, _ body: (ObjectKey, ChunkView) throws -> Void) throws(StoreError) -> Bool {
        guard dirtyLists.isEmpty, dirty.isEmpty, newClusters.isEmpty else { return false }
        try forEachStoredListEntry(index, body)
        return true
    }

    /// Calls `body` with each stored list of property `index` (its owner and its chunk) in key
    /// order, as the file holds them, whatever this transaction changed: the caller overlays
    /// `dirtyLists` (an owner deleted in this transaction has an empty entry there).
    func forEachStoredListEntry(_ index: Int, _ body: (ObjectKey, ChunkView) throws -> Void) throws(StoreError) {
        if isDropped { return }
        guard let tree = try session.tree(listTreeName) else { return }
        let column = columnIDs[index]
        let start: [UInt8] = [UInt8(column >> 8), UInt8(column & 0xFF)]
        let end = start + [UInt8](repeating: 0xFF, count: 8)
        do {
            try reading.forEach(in: tree, from: start, to: end) { key, value in
                guard key.count == 10 else { throw StoreError.corrupted("a list entry of '\(schema.name)' has a key of \(key.count) bytes") }
                let owner = ObjectKey(Int64(bitPattern: TreeKey.readU64(key, at: 2)))
                try body(owner, try ChunkView(encoded: value, expectedCount: nil, expectedWidth: schema.properties[index].kind.width))
                return true
            }
        } catch {
            throw StoreError.wrap(error)
        }
    }

    /// The first value of the mixed list `index` of object `key` whose stored bytes are not a
    /// valid mixed value, described; nil when all are (for verification).
    func mixedListProblem(_ key: ObjectKey, property index: Int) throws(StoreError) -> String? {
        let chunk = try listChunk(key, property: index)
        for row in 0..<chunk.count where !chunk.isNull(row) {
            if let problem = MixedEncoding.problem(chunk.variableBytes(row)) { return problem }
        }
        return nil
    }

    /// Another table of this table's session, by name (a link's target).
    package func sessionTable(named name: String) -> TableAccess? { session.table(named: name) }

    /// Another table of this table's session, by id (a mixed value's link names it so).
    package func sessionTable(id: UInt32) -> TableAccess? { session.table(id: id) }

    private func listChunk(_ key: ObjectKey, property index: Int) throws(StoreError) -> ChunkView {
        if isDropped { return .absent }
        guard let tree = try session.tree(listTreeName) else { return .absent }
        return try chunk(in: tree, key: TreeKey.list(column: columnIDs[index], key), expectedCount: nil,
                         expectedWidth: schema.properties[index].kind.width)
    }

    /// Replaces the elements of a list property.
    package func setList(_ values: [StoreValue], for key: ObjectKey, property index: Int, recordChange: Bool = true) throws(StoreError) {
        try checkNestedElements(values, property: index)
        if recordChange, let embedded = embeddedTarget(of: index) {
            // New children must have no parent and appear once; children that leave the list
            // are deleted.
            let old = Set(try list(key, property: index).compactMap { if case .link(let k) = $0 { k } else { nil } })
            var new: Set<ObjectKey> = []
            for case .link(let child) in values {
                guard new.insert(child).inserted else {
                    throw .invalidValue(type: schema.name, property: schema.properties[index].name,
                                        reason: "an embedded object can be in its parent's list only once")
                }
                if !old.contains(child) { try session.adoptEmbedded(child, in: embedded, by: self, property: index) }
            }
            try writeList(values, for: key, property: index, recordChange: recordChange)
            let removed = old.subtracting(new)
            if !removed.isEmpty { try session.delete(removed.sorted(), from: embedded) }
            return
        }
        try writeList(values, for: key, property: index, recordChange: recordChange)
    }

    /// `setList`'s write.
    func writeList(_ values: [StoreValue], for key: ObjectKey, property index: Int, recordChange: Bool) throws(StoreError) {
        try session.requireWrite()
        if isDropped { throw .objectNotFound(type: schema.name) }
        for value in values { try checkElement(value, property: index) }
        let id = ListID(property: index, key: key.rawValue)
        dirtyLists[id] = values
        caches.setMembers[id] = nil
        if recordChange {
            changes.modify(key.rawValue, property: index)
            noteChange(property: index)
        } else {
            session.noteContentChange()  // the list of an object being deleted: see `delete`
        }
    }

    /// Throws unless `value` can be an element of the list (or a value of the map) `index`.
    private func checkElement(_ value: StoreValue, property index: Int) throws(StoreError) {
        let property = schema.properties[index]
        if value.isNull {
            // A map's links may be nil (RealmSwift's `Map<String, Object?>`); a list's may not.
            guard property.isOptional && (property.kind != .link || property.isMap) else {
                throw .invalidValue(type: schema.name, property: property.name, reason: "a list of \(property.kind) cannot hold nil")
            }
        } else if let kind = value.kind, !property.kind.stores(kind) {
            throw .invalidValue(type: schema.name, property: property.name, reason: "a \(value.kind!) value cannot be stored in a \(property.typeDescription)")
        } else if value.isNestedCollection {
            try Self.checkNested(value, depth: 1, type: schema.name, property: property.name)
        }
    }

    /// Checks the lists and dictionaries nested in the elements of a mixed list or map.
    private func checkNestedElements(_ values: [StoreValue], property index: Int) throws(StoreError) {
        guard schema.properties[index].kind == .mixed else { return }
        for value in values where value.isNestedCollection {
            try Self.checkNested(value, depth: 1, type: schema.name, property: schema.properties[index].name)
        }
    }

    // MARK: Changing lists and maps in place

    /// Whether `changeList`, `setMapValue`, `removeMapValue` and `insertIntoSet` apply to
    /// property `index`: lists and maps (of embedded objects too, whose one-parent bookkeeping
    /// the changes keep), and sets of values and top-level objects.
    package func changesInPlace(property index: Int) -> Bool {
        schema.properties[index].isList && !(schema.properties[index].isSet && embeddedTarget(of: index) != nil)
    }

    /// Makes sure the transaction's copy of a list (or a map's keys) is in `dirtyLists`, so
    /// that it can be changed in place.
    private func loadDirty(_ id: ListID) throws(StoreError) {
        guard dirtyLists[id] == nil else { return }
        let key = ObjectKey(id.key)
        dirtyLists[id] = id.isMapKeys ? try mapKeys(key, property: id.property).map(StoreValue.string) : try list(key, property: id.property)
    }

    /// Checks that a change in place to property `index` of object `key` may go ahead: a write
    /// transaction, a property of the shape `operation` is for (`shape`), and the object.
    private func beginChangeInPlace(_ key: ObjectKey, property index: Int, _ operation: String,
                                    _ shape: (PropertySchema) -> Bool) throws(StoreError) {
        try session.requireWrite()
        if isDropped { throw .objectNotFound(type: schema.name) }
        require(changesInPlace(property: index) && shape(schema.properties[index]), "\(operation) does not apply to '\(schema.name).\(schema.properties[index].name)'")
        guard try contains(key) else { throw .objectNotFound(type: schema.name) }
    }

    /// Ends a change made in place.
    private func changedInPlace(_ key: ObjectKey, property index: Int) {
        changes.modify(key.rawValue, property: index)
        noteChange(property: index)
    }

    /// Changes the list `index` of object `key` in place through `change`, which may add only
    /// `added` (checked here) and otherwise insert, remove, move or replace elements: a loop of
    /// changes in one transaction costs each change its own work, not a copy of the list
    /// (`changesInPlace(property:)` must hold).
    ///
    /// `change` returns the elements it removed (replaced ones included). In a list of
    /// embedded objects, the objects added must be new and without a parent (they are adopted
    /// here) and the ones removed are deleted, as `setList` does for a whole list.
    package func changeList(_ key: ObjectKey, property index: Int, adding added: [StoreValue],
                            _ change: (inout [StoreValue]) -> [StoreValue]) throws(StoreError) {
        try beginChangeInPlace(key, property: index, "changeList") { !$0.isMap }
        for value in added { try checkElement(value, property: index) }
        let id = ListID(property: index, key: key.rawValue)
        try loadDirty(id)
        let removed = change(&dirtyLists[id]!)
        caches.setMembers[id] = nil
        changedInPlace(key, property: index)
        if let embedded = embeddedTarget(of: index) {
            try exchangeEmbedded(in: embedded, adding: added, removing: removed, property: index)
        }
    }

    /// The one-parent bookkeeping of a change in place to a list or map of embedded objects:
    /// adopts the children `added` and deletes the children `removed`, except a child that is
    /// both (put back where it was).
    private func exchangeEmbedded(in embedded: TableAccess, adding added: [StoreValue], removing removed: [StoreValue],
                                  property index: Int) throws(StoreError) {
        for case .link(let child) in added where !removed.contains(.link(child)) {
            try session.adoptEmbedded(child, in: embedded, by: self, property: index)
        }
        let gone = removed.compactMap { value -> ObjectKey? in
            if case .link(let child) = value, !added.contains(value) { child } else { nil }
        }
        if !gone.isEmpty { try session.delete(gone, from: embedded) }
    }

    /// Appends `value` to the set (an `isSet` list) `index` of object `key` unless the set
    /// holds the same value already (strings by their bytes, `StoreValue.identity`); returns
    /// whether it did. Membership is tested by hash
    /// against the members kept beside the transaction's copy, so a loop of inserts in one
    /// transaction is linear (`changesInPlace(property:)` must hold).
    package func insertIntoSet(_ value: StoreValue, for key: ObjectKey, property index: Int) throws(StoreError) -> Bool {
        try beginChangeInPlace(key, property: index, "insertIntoSet") { $0.isSet }
        try checkElement(value, property: index)
        let id = ListID(property: index, key: key.rawValue)
        try loadDirty(id)
        if caches.setMembers[id] == nil { caches.setMembers[id] = Set(dirtyLists[id]!.lazy.map(\.identity)) }
        guard caches.setMembers[id]!.insert(value.identity).inserted else { return false }
        dirtyLists[id]!.append(value)
        changedInPlace(key, property: index)
        return true
    }

    /// Sets the map `index` of object `key` to hold `value` for `mapKey`, in place, keeping the
    /// keys in order (`changesInPlace(property:)` must hold).
    package func setMapValue(_ value: StoreValue, forKey mapKey: String, of key: ObjectKey, property index: Int) throws(StoreError) {
        try beginChangeInPlace(key, property: index, "setMapValue") { $0.isMap }
        try checkElement(value, property: index)
        let (keysID, valuesID) = (ListID(property: index, key: key.rawValue, isMapKeys: true), ListID(property: index, key: key.rawValue))
        try loadDirty(keysID)
        try loadDirty(valuesID)
        let (position, found) = Self.position(of: mapKey, in: dirtyLists[keysID]!)
        var replaced: [StoreValue] = []
        if found {
            replaced = [dirtyLists[valuesID]![position]]
            dirtyLists[valuesID]![position] = value
        } else {
            dirtyLists[keysID]!.insert(.string(mapKey), at: position)
            dirtyLists[valuesID]!.insert(value, at: position)
        }
        changedInPlace(key, property: index)
        if let embedded = embeddedTarget(of: index) {
            try exchangeEmbedded(in: embedded, adding: [value], removing: replaced, property: index)
        }
    }

    /// Removes `mapKey` from the map `index` of object `key`, in place; false when the map
    /// has no such key (`changesInPlace(property:)` must hold).
    @discardableResult
    package func removeMapValue(forKey mapKey: String, of key: ObjectKey, property index: Int) throws(StoreError) -> Bool {
        try beginChangeInPlace(key, property: index, "removeMapValue") { $0.isMap }
        let (keysID, valuesID) = (ListID(property: index, key: key.rawValue, isMapKeys: true), ListID(property: index, key: key.rawValue))
        try loadDirty(keysID)
        let (position, found) = Self.position(of: mapKey, in: dirtyLists[keysID]!)
        guard found else { return false }
        try loadDirty(valuesID)
        dirtyLists[keysID]!.remove(at: position)
        let removed = dirtyLists[valuesID]!.remove(at: position)
        changedInPlace(key, property: index)
        if let embedded = embeddedTarget(of: index) {
            try exchangeEmbedded(in: embedded, adding: [], removing: [removed], property: index)
        }
        return true
    }

    /// Where `mapKey` is among a map's stored keys (`MapKeyOrder`), and whether it is there.
    private static func position(of mapKey: String, in keys: [StoreValue]) -> (Int, Bool) {
        MapKeyOrder.position(of: mapKey, in: keys) { if case .string(let text) = $0 { text } else { "" } }
    }
}
