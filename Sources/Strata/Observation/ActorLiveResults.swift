public import Observation

/// A query over `Object` models kept current on the actor that creates it: the
/// ``LiveResults`` model for code that runs on an actor of its own instead of the main actor.
///
/// ```swift
/// actor DogIndexer {
///     var database: Database?
///     var adults: ActorLiveResults<Dog>?
///     func start(configuration: Database.Configuration) async throws {
///         let database = try await Database(configuration: configuration, actor: self)
///         self.database = database
///         adults = ActorLiveResults(database.objects(Dog.self).where { $0.age >= 2 })  // isolated to this actor
///         withObservationTracking { _ = adults?.count } onChange: { … }
///     }
/// }
/// ```
///
/// It behaves as ``LiveResults`` does (the same properties, the same rule that observers are
/// told only what changed, the same end on release), on the actor passed as `isolation` — by
/// default the caller's own (`#isolation`). The results must belong to a database instance
/// isolated to that actor (`Database(configuration:actor:)`), which moves to every new
/// version of the file on its own and delivers the results' notifications on the actor; so
/// ``results`` follows commits from any instance, in this process or another.
///
/// The type is not `Sendable`: Swift's region checking keeps it on the actor that created it
/// (the notification callback that updates it is registered there and captures it), so every
/// read and every update happen on that actor.
@Observable
public final class ActorLiveResults<Element: Object> {
    /// The live results: read them (or iterate them) after each invalidation.
    public private(set) var results: Results<Element>
    /// How many objects the query matches.
    public private(set) var count: Int
    /// Whether the query matches no objects.
    public private(set) var isEmpty: Bool

    /// Keeps the observation; invalidated when the live results are released.
    @ObservationIgnored private var token: NotificationToken?

    /// Follows `results` on `isolation` (the caller's actor unless given); with `keyPaths`
    /// (`["name", "owner.name"]`), changes to other properties of the matching objects do not
    /// count as changes.
    ///
    /// `results` must belong to a database instance isolated to `isolation` (a precondition,
    /// as observing outside an instance's context is); as for `Results.observe`, not inside a
    /// write transaction and not on a read-only instance.
    public init(_ results: Results<Element>, keyPaths: [String]? = nil, isolation: isolated (any Actor) = #isolation) {
        let confined = results.database.core.confinement.actor
        precondition(confined.map { $0 === isolation } ?? false, """
            ActorLiveResults follows results of a database instance isolated to the actor it runs on \
            (\(type(of: isolation))); these results belong to \(results.database.core.confinement.description). \
            Open the database with Database(configuration:actor:) on that actor and make the results from it.
            """)
        self.results = results
        count = results.count
        isEmpty = results.isEmpty
        // The instance is isolated to `isolation`, so it delivers there.
        token = results.observe(keyPaths: keyPaths) { [weak self] change in
            self?.apply(change)
        }
    }

    /// Follows `results` on `isolation`, counting only changes to the properties `keyPaths`
    /// name (`\.name`).
    public convenience init(_ results: Results<Element>, keyPaths: [PartialKeyPath<Element>], isolation: isolated (any Actor) = #isolation) {
        self.init(results, keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0).joined(separator: ".") }, isolation: isolation)
    }

    deinit {
        token?.invalidate()
    }

    /// Takes one notification, setting each property only when it changes.
    func apply(_ change: CollectionChange<Results<Element>>) {
        switch change {
        case .initial(let current):
            if count != current.count { count = current.count }
            if isEmpty != current.isEmpty { isEmpty = current.isEmpty }
        case .update(let current, let deletions, let insertions, let modifications):
            guard !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else { return }
            // Invalidated even though the value is the same live `Results`, which shows the
            // new version now (assigning an equal value would tell no observer).
            withMutation(keyPath: \.results) { _results = current }
            if count != current.count { count = current.count }
            if isEmpty != current.isEmpty { isEmpty = current.isEmpty }
        case .error:
            break
        }
    }
}
