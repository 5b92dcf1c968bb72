// A migration that makes a type embedded leaves each of its objects with exactly one parent,
// as RealmSwift's migrations do: an object nothing links to is deleted, and an object that
// several links or list entries hold is copied for every holder after the first (deeply: the
// embedded objects it holds are copied with it), so that each holds its own.

extension StoreMigration {
    /// Gives every object of each type this migration makes embedded one parent. Runs after
    /// the migration block (which may link objects to their parents first) and before the
    /// migration's tables are written.
    func embedConvertedTypes() throws(StoreError) {
        for schema in newSchema.objectSchemas where schema.isEmbedded && oldSchema[schema.name]?.isEmbedded == false {
            guard let table = newTable(schema.name) else { continue }
            do {
                let existing = try table.allKeys()
                var held: Set<ObjectKey> = []
                for owner in session.tables {
                    for (index, property) in owner.schema.properties.enumerated()
                    where property.kind == .link && property.objectType == schema.name {
                        try giveOneParent(through: owner, property: index, in: table, held: &held)
                    }
                }
                let orphans = existing.filter { !held.contains($0) }
                if !orphans.isEmpty { try session.delete(orphans, from: table) }
            } catch {
                throw StoreError.wrap(error)
            }
        }
    }

    /// Walks property `index` of every object of `owner` (a link or list of links to the
    /// embedded `table`): the first holder of each object keeps it, later ones get copies.
    private func giveOneParent(through owner: TableAccess, property index: Int, in table: TableAccess,
                               held: inout Set<ObjectKey>) throws {
        for key in try owner.allKeys() {
            if owner.schema.properties[index].isList {
                var values = try owner.list(key, property: index)
                var copies: [ObjectKey] = []
                for (position, value) in values.enumerated() {
                    guard case .link(let child) = value else { continue }
                    if !held.insert(child).inserted {
                        let copy = try copyEmbedded(child, in: table, copying: [])
                        values[position] = .link(copy)
                        copies.append(copy)
                    }
                }
                guard !copies.isEmpty else { continue }
                // Written without the one-parent bookkeeping, which would delete the objects
                // the list no longer holds (their other holder keeps them).
                try owner.writeList(values, for: key, property: index, recordChange: true)
                for copy in copies { try session.adoptEmbedded(copy, in: table, by: owner, property: index) }
            } else if case .link(let child) = try owner.value(key, property: index), !held.insert(child).inserted {
                let copy = try copyEmbedded(child, in: table, copying: [])
                guard let location = try owner.locate(key) else { continue }
                try owner.write(.link(copy), for: key, property: index, at: (location.cluster, location.row))
                try session.adoptEmbedded(copy, in: table, by: owner, property: index)
            }
        }
    }

    /// A new object of the embedded `table` with `key`'s values; the embedded objects it holds
    /// are copied too (`copying`: the objects being copied further up, to refuse cycles).
    private func copyEmbedded(_ key: ObjectKey, in table: TableAccess, copying: Set<CopyingObject>) throws -> ObjectKey {
        let this = CopyingObject(table: table.tableID, key: key)
        guard !copying.contains(this) else {
            throw StoreError.invalidSchema(type: table.schema.name, property: nil,
                                           reason: "the migration makes '\(table.schema.name)' embedded, but its objects link to each other in a cycle, so a copy for a second parent would never end; break the cycle in the migration block")
        }
        let properties = table.schema.properties
        var values: [StoreValue] = []
        var embeddedLinks: [(Int, TableAccess, ObjectKey)] = []
        for (index, property) in properties.enumerated() {
            if property.isList {
                values.append(.null)
            } else {
                let value = try table.value(key, property: index)
                if case .link(let child) = value, let embedded = table.embeddedTarget(of: index) {
                    embeddedLinks.append((index, embedded, child))
                    values.append(.null)
                } else {
                    values.append(value)
                }
            }
        }
        let copy = try table.insert(values)
        let inside = copying.union([this])
        for (index, embedded, child) in embeddedLinks {
            try table.set(.link(try copyEmbedded(child, in: embedded, copying: inside)), for: copy, property: index)
        }
        for (index, property) in properties.enumerated() where property.isList {
            var elements = try table.list(key, property: index)
            if let embedded = table.embeddedTarget(of: index) {
                elements = try elements.map { element in
                    guard case .link(let child) = element else { return element }
                    return .link(try copyEmbedded(child, in: embedded, copying: inside))
                }
            }
            if property.isMap {
                if !elements.isEmpty { try table.setMap(keys: try table.mapKeys(key, property: index), values: elements, for: copy, property: index) }
            } else if !elements.isEmpty {
                try table.setList(elements, for: copy, property: index)
            }
        }
        return copy
    }
}

/// An object being copied, for `copyEmbedded`'s cycle check.
struct CopyingObject: Hashable {
    let table: UInt32
    let key: ObjectKey
}
