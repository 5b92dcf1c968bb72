// A schema migration in progress: the write transaction in which the file moves from its old
// schema to the new one. Old values stay readable (the old columns are dropped only at the
// end), new values are written through the new schema, and indexes the new schema adds are
// built from the final data.

import StrataStorage

/// Access to a file's data during a schema migration.
public final class StoreMigration {
    /// The file's schema before the migration.
    public let oldSchema: Schema
    /// The schema after it.
    public let newSchema: Schema
    /// The file's schema version before the migration.
    public let oldVersion: UInt64
    package let session: StoreSession
    private var oldTables: [String: TableAccess] = [:]
    private var deletedTypes: Set<String> = []
    /// The types the migration changes, when it changes only some (`StoreSession.evolveTables`):
    /// `prepare` and `finish` leave the others, and their indexes, alone. Nil: every type.
    private let scope: Set<String>?

    init(session: StoreSession, oldSchema: Schema, newSchema: Schema, oldVersion: UInt64, scope: Set<String>? = nil) {
        self.session = session
        self.oldSchema = oldSchema
        self.newSchema = newSchema
        self.oldVersion = oldVersion
        self.scope = scope
    }

    /// Whether `prepare` and `finish` work on `type`.
    private func isInScope(_ type: String) -> Bool { scope?.contains(type) ?? true }

    /// The table of `type` under the new schema (for reading and writing new values).
    package func newTable(_ type: String) -> TableAccess? { session.table(named: type) }

    /// The table of `type` under the old schema: reads give the values from before the
    /// migration, whatever the migration has written since.
    package func oldTable(_ type: String) -> TableAccess? {
        if let table = oldTables[type] { return table }
        guard let schema = oldSchema[type] else { return nil }
        let table = TableAccess(session: session, position: -1, schema: schema)
        oldTables[type] = table
        return table
    }

    /// Keys of the objects of `type` that existed before the migration.
    package func oldKeys(_ type: String) throws -> [ObjectKey] {
        guard !deletedTypes.contains(type), let table = oldTable(type) else { return [] }
        return try table.allKeys()
    }

    /// Moves a property's values to its new name (the property must exist in the old schema
    /// under `oldName` and in the new one under `newName`, with the same storage).
    package func renameProperty(onType type: String, from oldName: String, to newName: String) throws(StoreError) {
        guard let old = oldSchema[type], let oldIndex = old.propertyIndex(named: oldName) else {
            throw .invalidSchema(type: type, property: oldName, reason: "renameProperty: the old schema has no such property")
        }
        guard let new = newSchema[type], let newIndex = new.propertyIndex(named: newName) else {
            throw .invalidSchema(type: type, property: newName, reason: "renameProperty: the new schema has no such property")
        }
        let sameOptionality = old.properties[oldIndex].isOptional == new.properties[newIndex].isOptional
        guard (old.properties[oldIndex].holdsValuesLike(new.properties[newIndex]) && sameOptionality) || (!old.properties[oldIndex].isOptional && new.properties[newIndex].isOptional && old.properties[oldIndex].kind == new.properties[newIndex].kind) else {
            throw .invalidSchema(type: type, property: newName, reason: "renameProperty: '\(oldName)' was \(old.properties[oldIndex].typeDescription) and '\(newName)' is \(new.properties[newIndex].typeDescription)")
        }
        guard let oldTable = oldTable(type), let newTable = newTable(type) else { return }
        do {
            for key in try oldTable.allKeys() where try newTable.contains(key) {
                if new.properties[newIndex].isMap {
                    let (keys, values) = try oldTable.mapEntries(key, property: oldIndex)
                    try newTable.setMap(keys: keys, values: values, for: key, property: newIndex)
                } else if new.properties[newIndex].isList {
                    try newTable.setList(try oldTable.list(key, property: oldIndex), for: key, property: newIndex)
                } else {
                    try newTable.set(try oldTable.value(key, property: oldIndex), for: key, property: newIndex)
                }
            }
        } catch {
            throw StoreError.wrap(error)
        }
    }

    /// Deletes every object of `type`; returns whether the type existed.
    package func deleteData(forType type: String) throws(StoreError) -> Bool {
        deletedTypes.insert(type)
        guard let table = newTable(type) else { return oldSchema[type] != nil }
        try session.deleteAll(in: table)
        return true
    }

    /// Ends the migration's own work: gives the objects of types it makes embedded one parent
    /// each (StoreMigration+Embedding.swift), writes the tables' changes, drops the columns and
    /// indexes the new schema no longer has, and builds the indexes it adds.
    func finish() throws {
        try embedConvertedTypes()
        try session.flushTables()
        let write = try session.writer()
        for old in oldSchema.objectSchemas where isInScope(old.name) {
            guard let new = newSchema[old.name] else { continue }
            let kept = Set(new.properties.map(\.columnID))
            for property in old.properties where !kept.contains(property.columnID) {
                try Store.dropColumn(property, of: old, in: write)
            }
        }
        for new in newSchema.objectSchemas where isInScope(new.name) {
            let old = oldSchema[new.name]
            for (index, property) in new.properties.enumerated() where property.isIndexed || property.isPrimaryKey {
                let oldProperty = old?.properties.first { $0.columnID == property.columnID }
                let hadIndex = oldProperty.map { $0.isIndexed == property.isIndexed && $0.isPrimaryKey == property.isPrimaryKey } ?? false
                // Values of an existing index may have changed in the migration: rebuild
                // every index of a migrated type.
                _ = hadIndex
                try rebuildIndex(of: new, property: index, in: write)
            }
            for property in old?.properties ?? [] where property.isIndexed && !property.isPrimaryKey {
                if !(new.properties.first { $0.columnID == property.columnID }?.isIndexed ?? false) {
                    _ = try write.dropTree(named: "t\(new.tableID).i\(property.columnID)")
                }
            }
            // A type that no longer has a primary key keeps the column that was one: drop
            // its index.
            if old?.primaryKeyIndex != nil && new.primaryKeyIndex == nil {
                _ = try write.dropTree(named: "t\(new.tableID).pk")
            }
        }
        session.invalidateViews()
    }

    /// Before the migration's block: gives the properties the migration made required
    /// (optional before, in the same column) their type's default where they hold null, as
    /// Realm does (values, list elements and map values), and a required date it adds the
    /// epoch (an added column reads as zero, which for a date is the reference date), so the
    /// block sees the values the properties will have unless it writes others.
    func prepare() throws {
        for new in newSchema.objectSchemas where isInScope(new.name) {
            guard let old = oldSchema[new.name], let table = session.table(named: new.name) else { continue }
            for (index, property) in new.properties.enumerated() where !property.isOptional {
                let previous = old.properties.first { $0.columnID == property.columnID }
                guard previous?.isOptional == true || (previous == nil && property.kind == .date) else { continue }
                let zero = StoreValue.initialValue(of: property.kind)
                if !property.isList {
                    // The nulls first: a write to one object's row makes the others in its
                    // cluster read as zero, no longer as null.
                    let nulls = try table.allKeys().filter { try table.value($0, property: index).isNull }
                    for key in nulls { try table.set(zero, for: key, property: index) }
                    continue
                }
                for key in try table.allKeys() {
                    if property.isMap {
                        let (keys, values) = try table.mapEntries(key, property: index)
                        if values.contains(where: \.isNull) {
                            try table.setMap(keys: keys, values: values.map { $0.isNull ? zero : $0 }, for: key, property: index)
                        }
                    } else {
                        let values = try table.list(key, property: index)
                        if values.contains(where: \.isNull) {
                            let defaulted = values.map { $0.isNull ? zero : $0 }
                            // (The default may be a member of a set already.)
                            try table.setList(property.isSet ? defaulted.distinctMembers() : defaulted, for: key, property: index)
                        }
                    }
                }
            }
        }
    }

    private func rebuildIndex(of schema: ObjectSchema, property index: Int, in write: WriteTransaction) throws {
        let property = schema.properties[index]
        let name = property.isPrimaryKey ? "t\(schema.tableID).pk" : "t\(schema.tableID).i\(property.columnID)"
        _ = try write.dropTree(named: name)
        guard let table = session.table(named: schema.name) else { return }
        table.reset()
        var entries: [[UInt8]] = []
        var primaryKeys: [[UInt8]: [UInt8]] = [:]
        // By identity: strings by their bytes, as the index compares keys.
        var seen: Set<StoreValueIdentity> = []
        try table.forEachCluster { cluster in
            let chunk = try cluster.column(index)
            for row in 0..<cluster.count {
                let value = chunk.value(row, kind: property.kind)
                if property.isPrimaryKey {
                    guard seen.insert(value.identity).inserted else { throw StoreError.duplicatePrimaryKey(type: schema.name, value: "\(value)") }
                    primaryKeys[IndexKey.encode(value).bytes, default: []] += TreeKey.u64(UInt64(bitPattern: cluster.key(at: row).rawValue))
                } else {
                    entries.append(IndexKey.entry(table.indexedForm(value, property: index), cluster.key(at: row)))
                }
            }
            return true
        }
        let tree = try write.createTree(named: name)
        for entry in entries { try write.put([], forKey: entry, in: tree) }
        for (key, value) in primaryKeys { try write.put(value, forKey: key, in: tree) }
        session.forgetTrees()
    }
}
