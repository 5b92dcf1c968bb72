public import StrataStorage

/// Errors from the object store. Each names what went wrong and, where there is one, the
/// object type and property involved.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The storage engine failed (I/O, corruption, a full disk, …).
    case storage(StorageError)
    /// A model breaks a schema rule (two primary keys, an unsupported type, …).
    case invalidSchema(type: String, property: String?, reason: String)
    /// The file's schema differs from the code's and no migration was allowed.
    case schemaMismatch(type: String, property: String?, reason: String)
    /// The configuration's schema version is older than the file's.
    case schemaVersionTooOld(fileVersion: UInt64, requestedVersion: UInt64)
    /// A file that is not a Strata object database (it has trees the store does not know).
    case notAnObjectDatabase(reason: String)
    /// A value was rejected: wrong type, nil for a required property, and the like.
    case invalidValue(type: String, property: String, reason: String)
    /// Adding an object whose primary key is already taken.
    case duplicatePrimaryKey(type: String, value: String)
    /// The object was deleted (or never existed in this version).
    case objectNotFound(type: String)
    /// The stored data contradicts itself (a damaged file).
    case corrupted(String)
    /// The database is open read-only.
    case readOnly
    /// The transaction has already ended.
    case transactionEnded
    /// The file's commit participant (sync's outbox) refused the commit; the write was rolled
    /// back. The reason is the participant's error.
    case commitRefused(reason: String)

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .storage(let error): "\(error)"
        case .invalidSchema(let type, let property, let reason):
            "Invalid model '\(type)\(property.map { ".\($0)" } ?? "")': \(reason)."
        case .schemaMismatch(let type, let property, let reason):
            "The file's schema does not match the code for '\(type)\(property.map { ".\($0)" } ?? "")': \(reason). Raise the configuration's schemaVersion (and handle the change in a migration block), or set deleteIfMigrationNeeded."
        case .schemaVersionTooOld(let file, let requested):
            "The file has schema version \(file), newer than the configuration's \(requested). Schema versions can only go up."
        case .notAnObjectDatabase(let reason): "Not a Strata object database: \(reason)."
        case .invalidValue(let type, let property, let reason): "Invalid value for '\(type).\(property)': \(reason)."
        case .duplicatePrimaryKey(let type, let value):
            "An object of type '\(type)' with primary key \(value) already exists. Use update: .modified or .all to update it."
        case .objectNotFound(let type): "The '\(type)' object was deleted or does not exist in this version."
        case .corrupted(let reason): "The database is damaged: \(reason)."
        case .readOnly: "The database is open read-only."
        case .transactionEnded: "The transaction has already ended."
        case .commitRefused(let reason): "The commit was refused and rolled back: \(reason)."
        }
    }
}

extension StoreError {
    @inline(never)
    static func wrap(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? StorageError { return .storage(error) }
        return .corrupted("\(error)")
    }
}

/// Stops with `message` when `condition` is false. Unlike `precondition`, the message is printed
/// in optimized builds too: misuse must say what happened and what to do in a release app.
/// Shared by the modules of this package (Strata's API checks use it too).
@inlinable @inline(__always)
package func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fatalError(message(), file: file, line: line) }
}
