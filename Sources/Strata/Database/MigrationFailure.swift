import Foundation

/// The first store error a migration block ran into.
///
/// A migration block cannot throw (its shape is RealmSwift's), yet its reads and writes go
/// to the file and can fail: a damaged page, a full disk. Stopping the process there would
/// stop it again at every launch, since the next open runs the same migration on the same
/// file. So the migration records the error here instead; from then on the block's store
/// operations do nothing (reads give nil, enumerations end), and when the block returns the
/// open throws the error and the migration's write transaction rolls back, leaving the file
/// as it was.
///
/// Damage is also recorded beside the file at once (``DamageMarker``): a block whose own code
/// stops on a nil it did not expect stops the process before the open can throw, and the
/// marker makes the next open check the file and throw `.invalidDatabase` instead of
/// running the migration into the same page again.
final class MigrationFailure {
    /// The first error recorded, as the store reported it (the open maps it to
    /// `Database.Error`).
    private(set) var error: (any Error)?
    /// The database's path, for the damage marker; nil for an in-memory database.
    private let databasePath: String?

    init(databasePath: String?) {
        self.databasePath = databasePath
    }

    /// Whether an error was recorded: the block's store operations are skipped from then on.
    var hasFailed: Bool { error != nil }

    /// Records `error`, met while doing `step` (for the log), unless one was recorded before.
    func record(_ error: any Error, while step: String) {
        guard self.error == nil else { return }
        self.error = error
        DatabaseLogger.report(.error, "The migration stopped while \(step) (\(error)); the open throws this error and leaves the file unchanged.")
        if let databasePath, DamageMarker.isDamage(error) {
            DamageMarker.record(error, databasePath: databasePath)
        }
    }
}
