/// How a file's schema changed when it was opened.
public struct SchemaUpgrade: Sendable {
    /// The schema version the file had.
    public var oldVersion: UInt64
    /// The schema the file had (empty for a new file).
    public var oldSchema: Schema
    /// Whether anything in the schema changed.
    public var changed: Bool
}
