// Clearing the links that point at deleted objects: to-one links, lists, sets, maps and
// mixed values that hold one.

import StrataStorage

extension TableAccess {

    /// Clears links to `deleted` objects of table `target` held by this table's objects, and
    /// removes them from lists.
    func clearLinks(to target: String, table targetID: UInt32, deleted: Set<Int64>) throws {
        // One object deleted (a loop of single deletes): a comparison, not a hash, per value.
        let only = deleted.count == 1 ? deleted.first : nil
        @inline(__always) func isDeleted(_ key: Int64) -> Bool { only.map { $0 == key } ?? deleted.contains(key) }
        let mixed = schema.properties.indices.filter { schema.properties[$0].kind == .mixed }
        if !mixed.isEmpty {
            try clearValues(of: mixed, storedHolds: { chunk, row in
                MixedEncoding.link(in: chunk.variableBytes(row)).map { $0.table == targetID && isDeleted($0.key) } ?? false
            }, holds: { value in
                if case .typedLink(let table, let key) = value { table == targetID && isDeleted(key.rawValue) } else { false }
            })
        }
        let linkProperties = schema.properties.indices.filter {
            schema.properties[$0].kind == .link && schema.properties[$0].objectType == target
        }
        guard !linkProperties.isEmpty else { return }
        // Through the holders, found by one scan for the whole loop.
        if let only, try clearLinksThroughHolders(to: only, linkProperties) { return }
        try clearValues(of: linkProperties, storedHolds: { chunk, row in isDeleted(chunk.int(row)) }, holds: { value in
            if case .link(let key) = value { isDeleted(key.rawValue) } else { false }
        })
    }

    /// Clears the values of `properties` (links or mixed values) that hold a deleted object:
    /// `storedHolds` tests a stored row without decoding it, `holds` a decoded value. A to-one
    /// link or a mixed property becomes nil; a map keeps the key with nil (as in RealmSwift); a
    /// list of links or a set drops the element; a list of mixed values keeps it as nil.
    private func clearValues(of properties: [Int], storedHolds: (ChunkView, Int) -> Bool, holds: (StoreValue) -> Bool) throws {
        var clears: [(ObjectKey, Int)] = []
        var lists: [(ObjectKey, Int, [StoreValue])] = []
        let columns = properties.filter { !schema.properties[$0].isList }
        if !columns.isEmpty {
            try forEachCluster { view in
                for index in columns {
                    let chunk = try view.column(index)
                    for row in 0..<min(view.count, chunk.count) where !chunk.isNull(row) && storedHolds(chunk, row) {
                        clears.append((view.key(at: row), index))
                    }
                }
                return true
            }
        }
        // Lists and maps: the transaction's own copies, then in one pass over the list tree
        // the stored ones it has not replaced (not a lookup and a decoded copy per object: a
        // loop of single deletes pays this once per delete).
        for index in properties where schema.properties[index].isList {
            let property = schema.properties[index]
            let drops = !property.isMap && (property.isSet || property.kind == .link)
            func cleared(_ values: [StoreValue]) -> [StoreValue]? {
                guard values.contains(where: holds) else { return nil }
                return drops ? values.filter { !holds($0) } : values.map { holds($0) ? .null : $0 }
            }
            for (id, values) in dirtyLists where id.property == index && !id.isMapKeys {
                if let kept = cleared(values) { lists.append((ObjectKey(id.key), index, kept)) }
            }
            try forEachStoredListEntry(index) { owner, chunk in
                guard (0..<chunk.count).contains(where: { !chunk.isNull($0) && storedHolds(chunk, $0) }),
                      dirtyLists[ListID(property: index, key: owner.rawValue)] == nil else { return }
                if let kept = cleared((0..<chunk.count).map { chunk.value($0, kind: property.kind) }) { lists.append((owner, index, kept)) }
            }
        }
        for (key, index) in clears { try set(.null, for: key, property: index) }
        for (key, index, kept) in lists { try setList(kept, for: key, property: index) }
    }

    /// Clears the links to the one deleted object `target` held by link `properties` (to-one,
    /// lists or maps) through `linkHolders`, scanning each property once per run of single
    /// deletes instead of once per delete. Returns false, having done nothing, when a
    /// property's target type is embedded: writing those links deletes objects, which the
    /// holders would not follow.
    private func clearLinksThroughHolders(to target: Int64, _ properties: [Int]) throws -> Bool {
        guard properties.allSatisfy({ embeddedTarget(of: $0) == nil }) else { return false }
        if caches.linkHoldersSerial != caches.tableSerial {
            if caches.linkHolderBuilds >= 2 && caches.linkHolderUses < caches.linkHolderBuilds { return false }
            caches.linkHolders.removeAll()
        }
        var built = false
        var work: [(index: Int, holders: [ObjectKey])] = []
        for index in properties {
            if caches.linkHolders[index] == nil {
                let holders = try scanLinkHolders(index)
                caches.linkHolders[index] = holders
                built = true
            }
            if let holders = caches.linkHolders[index]?[target] { work.append((index, holders)) }
        }
        let link = StoreValue.link(ObjectKey(target))
        for (index, holders) in work {
            let property = schema.properties[index]
            // Holders deleted since the index was built (deletes leave it valid) are skipped.
            for owner in holders where try contains(owner) {
                if property.isList {
                    let values = try list(owner, property: index)
                    // A map keeps the key; its value becomes nil, as in RealmSwift. A list drops it.
                    try setList(property.isMap ? values.map { $0 == link ? .null : $0 } : values.filter { $0 != link },
                                for: owner, property: index)
                } else {
                    try set(.null, for: owner, property: index)
                }
            }
            caches.linkHolders[index]?[target] = nil
        }
        if built { caches.linkHolderBuilds += 1 } else { caches.linkHolderUses += 1 }
        // These writes changed only what the holders now say.
        caches.linkHoldersSerial = caches.tableSerial
        return true
    }

    /// The objects holding each target key in link property `index`: its column, or its lists
    /// (the transaction's own, then the stored ones it has not replaced), each holder once.
    private func scanLinkHolders(_ index: Int) throws -> [Int64: [ObjectKey]] {
        var holders: [Int64: [ObjectKey]] = [:]
        if schema.properties[index].isList {
            for (id, values) in dirtyLists where id.property == index && !id.isMapKeys {
                let owner = ObjectKey(id.key)
                for case .link(let target) in values where holders[target.rawValue]?.last != owner {
                    holders[target.rawValue, default: []].append(owner)
                }
            }
            try forEachStoredListEntry(index) { owner, chunk in
                guard dirtyLists[ListID(property: index, key: owner.rawValue)] == nil else { return }
                for row in 0..<chunk.count where !chunk.isNull(row) {
                    let target = chunk.int(row)
                    if target >= 0, holders[target]?.last != owner { holders[target, default: []].append(owner) }
                }
            }
        } else {
            try forEachCluster { view in
                let chunk = try view.column(index)
                for row in 0..<min(view.count, chunk.count) where !chunk.isNull(row) {
                    let target = chunk.int(row)
                    if target >= 0 { holders[target, default: []].append(view.key(at: row)) }
                }
                return true
            }
        }
        return holders
    }
}
