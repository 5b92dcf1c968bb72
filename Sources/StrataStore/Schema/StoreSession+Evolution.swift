// Changing some object types' schemas in a file that is already open, without a schema
// version: the step the layers above use when the schema follows a type (a Codable
// repository's columns follow its Swift type). It reuses the migration machinery of `open`
// (StoreMigration): new ids through `Store.assignIDs`, nulls of properties made required
// defaulted, dropped columns and changed indexes handled by `finish` — all in one write
// transaction with the new schema, so the file holds the old schema and data or the new, never
// a mix.

import StrataStorage

extension StoreSession {
    /// Brings the file's definitions of `objects` (each type by name, with the properties it
    /// should have) to the given ones, carrying values over, in one write transaction.
    ///
    /// Types the file does not have are added; properties are matched by persisted name, or
    /// through `renames` (type → old name → new name), and keep their values when they hold
    /// values the same way (`PropertySchema.holdsValuesLike`); properties the file has that a
    /// type no longer lists are dropped with their values; other types are left as they are.
    /// `defaults` (type → property → value) gives existing objects a value for a property the
    /// migration adds, and for one it makes required where the object holds null; without one,
    /// such a property reads as its kind's zero, as after a Realm-style migration.
    ///
    /// `fill` runs in the same transaction once the new schema is in place (after `defaults`
    /// are written), with the keys of each type's objects that existed before: it writes what
    /// a plain value cannot give (a new embedded object's default, for one).
    ///
    /// `validate` runs first, in the write transaction, with the schema the file has then
    /// (another process may have changed it) and a way to count a type's objects; what it
    /// throws ends the step with the file untouched and is rethrown as it is. Any later
    /// failure rolls the transaction back, so the file keeps its old schema and values.
    ///
    /// Afterwards the session's tables (and the store's schema) follow the file's schema, also
    /// when there was nothing to change because another instance had changed it already.
    /// Returns whether this call changed the file. Must not be called inside a write
    /// transaction.
    public func evolveTables(_ objects: [ObjectSchema], renames: [String: [String: String]] = [:],
                             defaults: [String: [String: StoreValue]] = [:],
                             validate: (_ stored: Schema, _ objectCount: (String) throws -> Int) throws -> Void,
                             fill: (_ existingKeys: (String) throws -> [ObjectKey]) throws -> Void = { _ in }) throws -> Bool {
        require(write == nil, "evolveTables inside a write transaction")
        try beginWrite()
        do {
            let write = try writer()
            let (stored, version) = try Store.readSchema(write)
            let current = stored ?? Schema([])
            if let same = try Store.reconcile(stored: current, requested: Schema(objects), exactOnly: false),
               objects.allSatisfy({ current[$0.name] != nil }) {
                // Nothing to change in the file: follow what it has.
                rollbackAll()
                adoptSchema(same)
                return false
            }
            try validate(current) { type in
                guard let schema = current[type] else { return 0 }
                return try TableAccess(session: self, position: -1, schema: schema).count
            }
            // Only renames from a property the file still has: once carried over, a rename
            // must not make the new name look new again.
            var effectiveRenames: [String: [String: String]] = [:]
            for (type, pairs) in renames {
                guard let old = current[type] else { continue }
                effectiveRenames[type] = pairs.filter { old.propertyIndex(persistedAs: $0.key) != nil && old.propertyIndex(persistedAs: $0.value) == nil }
            }
            let assigned = Store.assignIDs(Schema(objects), basedOn: current, renames: effectiveRenames)
            // The file's types keep their order; new ones follow.
            let final = Schema(current.objectSchemas.compactMap { assigned[$0.name] }
                + assigned.objectSchemas.filter { current[$0.name] == nil })
            try final.validate()
            adoptSchema(final)
            let migration = StoreMigration(session: self, oldSchema: current, newSchema: final, oldVersion: version,
                                           scope: Set(objects.map(\.name)))
            try fillDefaults(defaults, in: migration)
            try fill { type in try migration.oldKeys(type) }
            try deleteEmbeddedOfDroppedLinks(in: migration)
            try migration.prepare()
            try migration.finish()
            try Store.writeSchema(final, version: version, in: write)
            try commit()
            store.schemaState.withLock { $0 = final }
            return true
        } catch {
            rollbackAll()
            adoptSchema(store.schema)
            throw error
        }
    }

    /// Makes the session's tables those of `schema`: tables whose type's definition is
    /// unchanged stay (with their caches and the objects that point at them); a table whose
    /// definition changed is replaced, and the old one marked dropped so that what still
    /// points at it finds nothing rather than reading columns by the wrong ids.
    func adoptSchema(_ schema: Schema) {
        var adopted: [TableAccess] = []
        for object in schema.objectSchemas {
            if let existing = table(named: object.name) {
                if existing.schema == object {
                    adopted.append(existing)
                    continue
                }
                existing.drop()
            }
            adopted.append(TableAccess(session: self, position: adopted.count, schema: object))
        }
        // Types only this session knows (added in a transaction not yet published) stay.
        for table in tables where schema[table.schema.name] == nil { adopted.append(table) }
        replaceTables(adopted)
    }

    /// Deletes the embedded objects held by the links and link lists the migration drops from
    /// the types it changes: dropping the column alone would leave them without a parent.
    private func deleteEmbeddedOfDroppedLinks(in migration: StoreMigration) throws {
        for new in migration.newSchema.objectSchemas {
            guard let old = migration.oldSchema[new.name], old != new, let oldTable = migration.oldTable(new.name) else { continue }
            let kept = Set(new.properties.map(\.columnID))
            for (index, property) in old.properties.enumerated() where !kept.contains(property.columnID) && property.kind == .link {
                guard let target = property.objectType, migration.newSchema[target]?.isEmbedded == true,
                      let embedded = table(named: target) else { continue }
                var children: [ObjectKey] = []
                for key in try migration.oldKeys(new.name) {
                    let values = property.isList ? try oldTable.list(key, property: index) : [try oldTable.value(key, property: index)]
                    for case .link(let child) in values { children.append(child) }
                }
                if !children.isEmpty { try delete(children, from: embedded) }
            }
        }
    }

    /// Writes `defaults` into the objects that existed before the migration, for properties
    /// the new schema adds and for those it makes required where they hold null. Lists and
    /// maps take no default (an added one starts empty).
    private func fillDefaults(_ defaults: [String: [String: StoreValue]], in migration: StoreMigration) throws {
        for (type, values) in defaults {
            guard let new = migration.newSchema[type], let table = table(named: type) else { continue }
            let old = migration.oldSchema[type]
            for (name, value) in values {
                guard let index = new.propertyIndex(named: name), !new.properties[index].isList, !value.isNull else { continue }
                let property = new.properties[index]
                let previous = old?.properties.first { $0.columnID == property.columnID }
                let keys: [ObjectKey]
                if previous == nil {
                    keys = try migration.oldKeys(type)
                } else if previous?.isOptional == true && !property.isOptional {
                    // The nulls first: a write to one object's row can make the others in its
                    // cluster read as zero rather than null.
                    keys = try migration.oldKeys(type).filter { try table.value($0, property: index).isNull }
                } else {
                    continue
                }
                for key in keys { try table.set(value, for: key, property: index) }
            }
        }
    }
}
