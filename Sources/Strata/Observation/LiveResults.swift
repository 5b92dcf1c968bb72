public import Observation

/// A query over `Object` models kept current on the main actor: an `Observable` holder of a
/// `Results` (an ``ActorLiveResults`` on the main actor, whose observable properties its own
/// read), for views and view models (the role of SwiftData's `@Query` and RealmSwift's
/// `@ObservedResults`).
///
/// ```swift
/// @Observable @MainActor
/// final class DogListModel {
///     let dogs: LiveResults<Dog>
///     init(database: Database) {
///         dogs = LiveResults(database.objects(Dog.self).where { $0.age >= 2 }.sorted(by: \.name))
///     }
/// }
/// // In a view: ForEach(model.dogs.results) { … }, or Text("\(model.dogs.count) dogs")
/// ```
///
/// The results must belong to a main-actor instance (opened on the main actor or the main
/// thread), which moves to every new version of the file on its own; so ``results`` follows
/// commits from any instance, in this process or another, without a `load()` or `refresh()`.
///
/// Observers are told only what changed: ``results`` is invalidated once per commit that
/// changes the query's objects (with `keyPaths`, only changes to those properties count),
/// never for commits that leave them as they were; ``count`` and ``isEmpty`` only when their
/// value changes, so a view showing only the count is not re-rendered when an object is
/// edited. The observation ends when the live results are released.
@MainActor
public final class LiveResults<Element: Object>: Observable {
    /// The model doing the work, on the main actor: the properties below read its (observable)
    /// properties, so observing them observes it.
    private let live: ActorLiveResults<Element>

    /// The live results: read them in a view (or iterate them) after each invalidation.
    public var results: Results<Element> { live.results }
    /// How many objects the query matches.
    public var count: Int { live.count }
    /// Whether the query matches no objects.
    public var isEmpty: Bool { live.isEmpty }

    /// Follows `results`; with `keyPaths` (`["name", "owner.name"]`), changes to other
    /// properties of the matching objects do not count as changes.
    ///
    /// `results` must belong to a main-actor instance (a precondition, as observing outside
    /// an instance's context is); as for `Results.observe`, not inside a write transaction
    /// and not on a read-only instance.
    public init(_ results: Results<Element>, keyPaths: [String]? = nil) {
        guard case .mainActor = results.database.core.confinement else {
            preconditionFailure("LiveResults follows results of a main-actor database instance: open the database on the main actor (try await Database(configuration:) in @MainActor code) and make the results from it.")
        }
        live = ActorLiveResults(results, keyPaths: keyPaths)
    }

    /// Follows `results`, counting only changes to the properties `keyPaths` name (`\.name`).
    public convenience init(_ results: Results<Element>, keyPaths: [PartialKeyPath<Element>]) {
        self.init(results, keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0).joined(separator: ".") })
    }
}
