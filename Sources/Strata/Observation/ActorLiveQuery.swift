public import Observation

/// The items of a repository query, kept current on the actor that creates it: the
/// ``LiveQuery`` model for code that runs on an actor of its own instead of the main actor.
///
/// ```swift
/// actor QuestionIndexer {
///     var open: ActorLiveQuery<Question>?
///     func start(_ repository: Repository<Question>) {
///         open = ActorLiveQuery(repository, where: "done == false")  // isolated to this actor
///         withObservationTracking { _ = open?.items } onChange: { … }
///     }
/// }
/// ```
///
/// It behaves as ``LiveQuery`` does (the same properties, the same rule that observers are
/// told only what changed, the same end on an error or on release), with one difference:
/// its properties are set on the actor passed as `isolation` — by default the caller's own
/// (`#isolation`), so creating one inside an actor method ties it to that actor, and on the
/// main actor it is what a ``LiveQuery`` runs. `withObservationTracking`'s `onChange`
/// therefore runs on that actor, before the new value is stored.
///
/// The type is not `Sendable`, and Swift's region checking keeps it on its actor: the task
/// that updates it captures it together with the actor, so it belongs to the actor's region
/// from its creation, and the compiler rejects passing it to other isolation or creating it
/// for an actor other than the caller's and returning it. Every read and every update
/// therefore happen on the one actor, which is what makes the unsynchronised properties safe.
@Observable
public final class ActorLiveQuery<T: Codable & Identifiable & Sendable> where T.ID: RepositoryIdentifier {
    /// The items the query matches, in its order.
    public private(set) var items: [T] = []
    /// How many items the query matches.
    public private(set) var count = 0
    /// Whether the query matches no items.
    public private(set) var isEmpty = true
    /// Whether the initial items have arrived (before that, ``items`` is empty).
    public private(set) var isLoaded = false
    /// The error that ended the query, if one did.
    public private(set) var error: RepositoryError?

    /// The iteration of the query's changes, on the query's actor; cancelled when the live
    /// query is released.
    @ObservationIgnored private var task: Task<Void, Never>?

    /// Every item of `repository`, in the order they were first saved, kept current on
    /// `isolation` (the caller's actor unless given).
    public convenience init(_ repository: Repository<T>, isolation: isolated (any Actor) = #isolation) {
        self.init(changes: repository.changes, isolation: isolation)
    }

    /// The items of `repository` matching a string predicate (see
    /// ``Repository/items(where:_:sortedBy:ascending:)``), optionally sorted by one property,
    /// kept current on `isolation` (the caller's actor unless given).
    public convenience init(_ repository: Repository<T>, where predicate: String, _ arguments: any Sendable...,
                            sortedBy sortKey: String? = nil, ascending: Bool = true,
                            isolation: isolated (any Actor) = #isolation) {
        self.init(changes: RepositoryChanges(repository: repository, query: RepositoryQuery(
            predicate: predicate, arguments: arguments, sortKey: sortKey, ascending: ascending)), isolation: isolation)
    }

    /// Every item of `repository`, sorted by one property, kept current on `isolation` (the
    /// caller's actor unless given).
    public convenience init(_ repository: Repository<T>, sortedBy sortKey: String, ascending: Bool = true,
                            isolation: isolated (any Actor) = #isolation) {
        self.init(changes: repository.changes(sortedBy: sortKey, ascending: ascending), isolation: isolation)
    }

    /// A live query that follows `changes` on `isolation` (the caller's actor unless given).
    public init(changes: RepositoryChanges<T>, isolation: isolated (any Actor) = #isolation) {
        // The closure uses `isolation`, so the task runs on that actor (SE-0420).
        task = Task { [weak self] in
            var iterator = changes.makeAsyncIterator()
            do throws(RepositoryError) {
                while let change = try await iterator.next(isolation: isolation) {
                    guard let self else { return }
                    self.apply(change)
                }
            } catch {
                self?.fail(error)
            }
        }
    }

    deinit {
        task?.cancel()
    }

    /// Takes one change, setting each property only when its value changes (as
    /// ``LiveQuery`` does).
    func apply(_ change: RepositoryChange<T>) {
        if change.altersItems(over: items) { items = change.items }
        if count != change.items.count { count = change.items.count }
        if isEmpty != change.items.isEmpty { isEmpty = change.items.isEmpty }
        if !isLoaded { isLoaded = true }
    }

    private func fail(_ error: RepositoryError) {
        self.error = error
        if !isLoaded { isLoaded = true }
    }
}
