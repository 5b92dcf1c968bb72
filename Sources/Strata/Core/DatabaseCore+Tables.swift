// An instance's table contexts: one per model class (and per dynamic type name), made on first
// use, with the checks that the class agrees with the file's table.

import StrataStore

extension DatabaseCore {
    /// The table context of a model class, adding the class's table to the file if needed.
    func context(for type: Object.Type) throws(Database.Error) -> TableContext {
        if let context = cachedContext(for: type) { return context }
        let info = try ClassInfo.of(type)
        if session.table(named: info.schema.name) == nil {
            if let types = configuration.objectTypes, !types.contains(where: { $0 == type }) {
                throw Database.Error(.invalidInput, "Object type '\(info.schema.name)' is not in this database's configuration.objectTypes; add it there.")
            }
            try addTables(for: [type])
        }
        guard let table = session.table(named: info.schema.name) else {
            throw Database.Error(.invalidInput, "Object type '\(info.schema.name)' is not managed by this database.")
        }
        if table.schema.properties.map(\.persistedName) != info.schema.properties.map(\.persistedName) {
            throw Database.Error(.schemaMismatch, "The file's '\(info.schema.name)' has properties \(table.schema.properties.map(\.persistedName)) but the class declares \(info.schema.properties.map(\.persistedName)); raise schemaVersion to migrate.")
        }
        if table.schema.isEmbedded != info.schema.isEmbedded {
            throw Database.Error(.schemaMismatch, "The file's '\(info.schema.name)' is \(table.schema.isEmbedded ? "an embedded" : "a top-level") type but the class is \(info.schema.isEmbedded ? "an EmbeddedObject" : "an Object"); raise schemaVersion to migrate.")
        }
        for (stored, declared) in zip(table.schema.properties, info.schema.properties) where !stored.hasSameStorage(as: declared) {
            throw Database.Error(.schemaMismatch, "The file's '\(info.schema.name).\(stored.name)' is \(stored.description) but the class declares \(declared.description); raise schemaVersion to migrate.")
        }
        session.adoptDeclaredNames(info.schema)
        try declareInverses(from: type)
        let context = TableContext(core: self, table: table, info: info)
        if let replaced = contexts.updateValue(context, forKey: ObjectIdentifier(type)) { retiredContexts.append(replaced) }
        return context
    }

    /// Tells the store about the `LinkingObjects` properties of `type` and of every class it
    /// reaches, so that queries on `type` can go through them (`$0.owners.name == "Ann"`).
    private func declareInverses(from type: Object.Type) throws(Database.Error) {
        for info in try ClassInfo.closure(of: [type]) {
            for linking in info.linkingProperties where linking.linksHere {
                session.store.declareInverse(linking.name, of: info.schema.name,
                                             InverseProperty(originType: linking.originType.className(), originProperty: linking.originProperty))
            }
        }
    }

    /// Checks each of `types` (and the types they link to) whose table the file has against
    /// that table, so that a class that disagrees with the file is an error at open. Opening a
    /// file this process has open already shares its store, whose own check ran when it was
    /// first opened, possibly for other classes.
    func checkExistingTables(_ types: [Object.Type]) throws(Database.Error) {
        for info in try ClassInfo.closure(of: types) where session.table(named: info.schema.name) != nil {
            _ = try context(for: info.type)
        }
    }

    /// Whether the file has a table for this class (without creating one).
    func existingContext(for type: Object.Type) throws(Database.Error) -> TableContext? {
        if let context = cachedContext(for: type) { return context }
        let info = try ClassInfo.of(type)
        guard session.table(named: info.schema.name) != nil else { return nil }
        return try context(for: type)
    }

    /// The context of `DynamicObject`s of the stored type `name` (made on first use, kept
    /// while the session has the table). Throws `invalidInput` when the file has no such type.
    func dynamicContext(named name: String) throws(Database.Error) -> TableContext {
        if let context = dynamicContexts[name], !context.table.isDropped { return context }
        guard let table = session.table(named: name) else {
            throw Database.Error(.invalidInput, "The database has no type named '\(name)'.", path: configuration.path)
        }
        let context = TableContext(core: self, table: table, info: ClassInfo.dynamic(table.schema))
        if let replaced = dynamicContexts.updateValue(context, forKey: name) { retiredContexts.append(replaced) }
        return context
    }

    /// The context here for objects of `type` stored as `typeName`: for `DynamicObject`, the
    /// dynamic context of that name; for a model class, its context (nil while the file has no
    /// table for it). For the paths that carry objects and results between instances (freeze,
    /// thaw, hand-over), where a `DynamicObject`'s class does not say its type.
    func existingContext(for type: Object.Type, typeName: String?) -> TableContext? {
        if type == DynamicObject.self { return typeName.flatMap { try? dynamicContext(named: $0) } }
        return (try? existingContext(for: type)) ?? nil
    }

    /// The model class for a table's name: one this instance has used, else one of
    /// `configuration.objectTypes`, else any class of that name the process has seen (a mixed
    /// value's link names only the table).
    func modelClass(named name: String) -> Object.Type? {
        if let context = contexts.values.first(where: { $0.info.schema.name == name && !$0.table.isDropped }) { return context.info.type }
        if let type = configuration.objectTypes?.first(where: { (try? ClassInfo.of($0).schema.name) == name }) { return type }
        return ClassInfo.type(named: name)
    }

    /// The cached context of a class, if its table is still the session's. Rolling back the
    /// write that added a type's table drops that table from the session; a context made in
    /// that write would otherwise keep writing to the dropped table, whose changes no commit
    /// flushes (they were lost, and the file was left with index trees but no schema).
    private func cachedContext(for type: Object.Type) -> TableContext? {
        let id = ObjectIdentifier(type)
        if let last = lastContext, last.type == id {
            return last.context.table.isDropped ? nil : last.context
        }
        guard let context = contexts[id] else { return nil }
        lastContext = (id, context)
        return context.table.isDropped ? nil : context
    }

    private func addTables(for types: [Object.Type]) throws(Database.Error) {
        let infos = try ClassInfo.closure(of: types).filter { session.table(named: $0.schema.name) == nil }
        guard !infos.isEmpty else { return }
        guard !configuration.readOnly else {
            throw Database.Error(.fileAccess, "The read-only database has no '\(infos[0].schema.name)' objects and cannot add the type.")
        }
        do {
            try session.addTables(infos.map(\.schema))
        } catch {
            throw Database.Error.wrap(error, path: configuration.path)
        }
    }
}
