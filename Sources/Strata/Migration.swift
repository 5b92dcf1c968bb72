public import StrataStore

/// Passed to a configuration's migration block when a file's schema version is lower than the
/// configuration's.
public final class Migration {
    /// The schema the file had.
    public let oldSchema: Schema
    /// The schema it has now.
    public let newSchema: Schema

    init(oldSchema: Schema, newSchema: Schema) {
        self.oldSchema = oldSchema
        self.newSchema = newSchema
    }

    static func run(_ block: MigrationBlock, store: Store, upgrade: SchemaUpgrade, configuration: Database.Configuration) throws {
        let migration = Migration(oldSchema: upgrade.oldSchema, newSchema: store.schema)
        block(migration, upgrade.oldVersion)
    }
}
