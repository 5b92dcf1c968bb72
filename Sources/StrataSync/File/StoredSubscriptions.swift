package import StrataSyncProtocol

/// The subscriptions stored in a file: the newest set the app asked for, and the newest
/// version the server completed (its snapshot was applied).
package struct StoredSubscriptions: Sendable, Hashable {
    /// Increases with every change of `specs` (0: never set).
    package var version: UInt64
    /// The subscriptions of `version`.
    package var specs: [SubscriptionSpec]
    /// The newest version whose data arrived (0: none).
    package var completedVersion: UInt64

    /// A stored subscription state.
    package init(version: UInt64, specs: [SubscriptionSpec], completedVersion: UInt64) {
        self.version = version
        self.specs = specs
        self.completedVersion = completedVersion
    }
}
