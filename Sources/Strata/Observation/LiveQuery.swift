public import Observation

/// The items of a repository query, kept current on the main actor: an `Observable` model
/// for views and view models, with no `load()` (an ``ActorLiveQuery`` on the main actor, whose
/// observable properties its own read).
///
/// ```swift
/// @Observable @MainActor
/// final class QuestionListViewModel {
///     let open: LiveQuery<Question>
///     init(repository: Repository<Question>) {
///         open = LiveQuery(repository, where: "done == false", sortedBy: "created")
///     }
/// }
/// // In a view: ForEach(model.open.items) { … }, or model.open.count
/// ```
///
/// The query starts at once and runs until the live query is released. Its initial items
/// arrive shortly after (``isLoaded`` turns true; until then ``items`` is empty); then it
/// follows every commit that changes the query's items, from any repository or database
/// instance of the file, in this process or another (it iterates
/// ``Repository/changes(where:_:sortedBy:ascending:)``).
///
/// Observers are told only what changed: a commit that leaves the query's items as they were
/// tells no one (for an `Equatable` `T`, saving an item again with the same values included);
/// ``items`` is set once per delivered change; ``count`` and ``isEmpty`` are set
/// only when their value changes, so a view that shows only the count is not re-rendered when
/// an item is edited. Several commits that arrive while the main actor is busy are applied as
/// one change. An error (the file cannot be opened, the predicate is malformed, a row does not
/// decode) ends the query and is kept in ``error``; the items keep their last value.
@MainActor
public final class LiveQuery<T: Codable & Identifiable & Sendable>: Observable where T.ID: RepositoryIdentifier {
    /// The model doing the work, on the main actor: the properties below read its (observable)
    /// properties, so observing them observes it.
    private let query: ActorLiveQuery<T>

    /// The items the query matches, in its order.
    public var items: [T] { query.items }
    /// How many items the query matches.
    public var count: Int { query.count }
    /// Whether the query matches no items.
    public var isEmpty: Bool { query.isEmpty }
    /// Whether the initial items have arrived (before that, ``items`` is empty).
    public var isLoaded: Bool { query.isLoaded }
    /// The error that ended the query, if one did.
    public var error: RepositoryError? { query.error }

    /// Every item of `repository`, in the order they were first saved.
    public convenience init(_ repository: Repository<T>) {
        self.init(changes: repository.changes)
    }

    /// The items of `repository` matching a string predicate (see
    /// ``Repository/items(where:_:sortedBy:ascending:)``), optionally sorted by one property.
    public convenience init(_ repository: Repository<T>, where predicate: String, _ arguments: any Sendable...,
                            sortedBy sortKey: String? = nil, ascending: Bool = true) {
        self.init(changes: RepositoryChanges(repository: repository, query: RepositoryQuery(
            predicate: predicate, arguments: arguments, sortKey: sortKey, ascending: ascending)))
    }

    /// Every item of `repository`, sorted by one property.
    public convenience init(_ repository: Repository<T>, sortedBy sortKey: String, ascending: Bool = true) {
        self.init(changes: repository.changes(sortedBy: sortKey, ascending: ascending))
    }

    /// A live query that follows `changes`.
    public init(changes: RepositoryChanges<T>) {
        query = ActorLiveQuery(changes: changes)
    }

    /// Takes one change (see ``ActorLiveQuery``).
    func apply(_ change: RepositoryChange<T>) {
        query.apply(change)
    }
}

extension RepositoryChange {
    /// Whether a live query holding `old` must set its items to this change's: an initial
    /// state unless both are empty; a later change unless it is empty or only reports items
    /// saved again with the values they had (which the database counts as modifications;
    /// decided when `T` is `Equatable`, from the modified items alone).
    func altersItems(over old: [T]) -> Bool {
        if isInitial { return !(items.isEmpty && old.isEmpty) }
        if deletions.isEmpty && insertions.isEmpty && modifications.isEmpty { return false }
        guard deletions.isEmpty, insertions.isEmpty, old.count == items.count,
              modifications.allSatisfy({ $0 >= 0 && $0 < old.count }) else { return true }
        return !modifications.allSatisfy { equalIfEquatable(old[$0], items[$0]) }
    }
}

/// Whether two values are equal, for a type that is `Equatable`; false for any other type.
private func equalIfEquatable<V>(_ first: V, _ second: V) -> Bool {
    guard let first = first as? any Equatable else { return false }
    return isEqual(first, second)
}

private func isEqual<E: Equatable>(_ first: E, _ second: Any) -> Bool {
    guard let second = second as? E else { return false }
    return first == second
}
