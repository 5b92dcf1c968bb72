public import Strata
import StrataSyncProtocol

/// A subscription to add to a ``SyncSubscriptionSet``: every object of `T` (query
/// subscriptions over a class's fields are not in this version of the protocol).
///
/// ```swift
/// try await db.subscriptions.update {
///     db.subscriptions.append(QuerySubscription<Todo>(name: "all_todos"))
/// }
/// ```
public struct QuerySubscription<T: Object>: Sendable {
    /// The subscription's name; adding one with the name of another replaces that one.
    public let name: String?

    /// A subscription to every object of `T`, optionally named.
    public init(name: String? = nil) {
        self.name = name
    }

    var spec: SubscriptionSpec { SubscriptionSpec(name: name, className: T.className()) }
}

/// One subscription of a ``SyncSubscriptionSet``, as stored.
public struct SyncSubscription: Sendable, Hashable {
    /// Its name, nil if unnamed.
    public let name: String?
    /// The class whose objects it selects.
    public let objectClassName: String

    init(_ spec: SubscriptionSpec) {
        name = spec.name
        objectClassName = spec.className
    }
}
