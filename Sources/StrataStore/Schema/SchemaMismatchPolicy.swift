/// What to do when the file's schema differs from the one the code declares.
public enum SchemaMismatchPolicy: Sendable {
    /// Throw `StoreError.schemaMismatch`.
    case error
    /// Delete the file's data and start over with the new schema.
    case deleteData
    /// Apply the new schema (add and drop columns and tables, carrying renamed properties
    /// over); the caller then runs its migration block.
    case migrate(renames: [String: [String: String]])
}
