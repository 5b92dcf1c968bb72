/// What the ledger refuses or finds wrong.
package enum SyncLedgerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A synced class has no primary key (every synced object needs one for its identity).
    case missingPrimaryKey(className: String)
    /// A synced class is not in the file's schema.
    case unknownClass(String)
    /// An operation (downloaded, or in a snapshot) names a property the class does not have,
    /// or carries a value that does not fit it.
    case invalidOperation(String)
    /// A record in the `strata.sync.*` trees does not decode.
    case damagedMetadata(String)
    /// The file was configured read-only: sync writes to it.
    case readOnly

    /// A sentence saying what went wrong.
    package var description: String {
        switch self {
        case .missingPrimaryKey(let name): "The synced class '\(name)' has no primary key; synced classes need one."
        case .unknownClass(let name): "The class '\(name)' is not part of the synced schema."
        case .invalidOperation(let reason): "A sync operation does not fit the local schema: \(reason)."
        case .damagedMetadata(let reason): "The file's sync metadata is damaged: \(reason)."
        case .readOnly: "A synced database cannot be opened read-only."
        }
    }
}
