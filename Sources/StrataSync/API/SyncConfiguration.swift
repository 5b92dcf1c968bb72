public import Strata

/// The sync settings a synced file's `Database.Configuration` carries (made by
/// ``User/flexibleSyncConfiguration(initialSubscriptions:rerunOnOpen:)``; read back with
/// `configuration.syncConfiguration`). Opening such a configuration starts the file's
/// ``SyncSession``, or reuses it: one session per file per process.
public final class SyncConfiguration: Sendable, DatabaseAttachment {
    /// Whose data the file holds.
    public let user: User
    /// Sets the subscriptions of a file that has none (or on every first open in a process,
    /// with `rerunOnOpen`).
    public let initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)?
    /// Whether `initialSubscriptions` runs on the first open in each process, not only for a
    /// file without subscriptions.
    public let rerunOnOpen: Bool

    init(user: User, initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)?, rerunOnOpen: Bool) {
        self.user = user
        self.initialSubscriptions = initialSubscriptions
        self.rerunOnOpen = rerunOnOpen
    }

    package func databaseWillOpen(_ configuration: Database.Configuration) throws {
        // The ledger's own opens of the file, while it attaches, need no session.
        guard !SessionRegistry.shared.isAttaching(configuration) else { return }
        _ = try SessionRegistry.shared.session(for: configuration, sync: self)
    }
}

extension Database.Configuration {
    /// The sync settings, nil for a database that does not sync.
    public var syncConfiguration: SyncConfiguration? { attachment as? SyncConfiguration }
}
