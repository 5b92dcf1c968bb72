// A file's schema knows each property only by its persisted name. When a store was opened
// without a model class (dynamically) and the class is used later, its table still has those
// names; adopting the class's declared names lets queries, key paths and key-value access use
// the Swift names (the persisted ones keep working: `ObjectSchema.propertyIndex(named:)`).
// Names live only in memory, so nothing is written.

extension StoreSession {
    /// Gives the table of `declared` the declared names of its properties, when the table
    /// stores the same properties (the same persisted names, in the same order) under other
    /// names. The store's schema learns them too, so sessions started later have them.
    package func adoptDeclaredNames(_ declared: ObjectSchema) {
        guard let table = table(named: declared.name) else { return }
        let current = table.schema.properties
        guard current.map(\.persistedName) == declared.properties.map(\.persistedName),
              current.map(\.name) != declared.properties.map(\.name) else { return }
        table.schema = Self.renamed(table.schema, like: declared)
        store.schemaState.withLock { schema in
            guard let index = schema.index(of: declared.name),
                  schema.objectSchemas[index].properties.map(\.persistedName) == declared.properties.map(\.persistedName) else { return }
            schema.objectSchemas[index] = Self.renamed(schema.objectSchemas[index], like: declared)
        }
    }

    private static func renamed(_ schema: ObjectSchema, like declared: ObjectSchema) -> ObjectSchema {
        var result = schema
        for index in result.properties.indices { result.properties[index].name = declared.properties[index].name }
        return result
    }
}
