import Synchronization

/// An asynchronous sequence of a repository's items, or of a query's, each time a commit
/// changes them: `for try await change in repository.changes(where: "done == false") { … }`.
///
/// The first element is the initial state; each later one is a ``RepositoryChange`` with the
/// new items and the change set. Commits made through any repository or database instance of
/// the file, in this process or another, arrive: the repository's instance follows the file
/// on its own (auto-refresh), and its collection notifications decide whether the query's
/// items changed. A commit that leaves them as they were produces no element.
///
/// Nothing is registered until the first `next()`. The repository applies each change to its
/// copy of the items as its instance delivers it (decoding only inserted and modified rows) and
/// signals the consumer, which takes what changed since its last element when it asks for the
/// next one. A consumer that falls behind therefore gets one element covering several commits,
/// never a backlog.
///
/// Errors (the file cannot be opened, the predicate is malformed, a stored row cannot be
/// decoded as `T`) are thrown by `next()` as ``RepositoryError``, and end the sequence.
/// Cancelling the iterating task, or dropping the iterator, ends the observation and releases
/// its registration. Each iteration of the sequence is an observation of its own, starting
/// from the state at its first `next()`.
public struct RepositoryChanges<T: Codable & Identifiable & Sendable>: AsyncSequence, Sendable where T.ID: RepositoryIdentifier {
    /// The items after each change.
    public typealias Element = RepositoryChange<T>
    /// What can end the sequence with an error.
    public typealias Failure = RepositoryError

    /// The repository to observe, ready for it (a `LocalRepository` imports its JSON file
    /// first); called on the iterator's first `next()`.
    let source: @Sendable () async throws(RepositoryError) -> Repository<T>
    let query: RepositoryQuery

    /// The changes of `query` over `repository`.
    init(repository: Repository<T>, query: RepositoryQuery) {
        self.init(query: query) { () async throws(RepositoryError) in repository }
    }

    /// The changes of `query` over the repository `source` gives when iteration starts.
    init(query: RepositoryQuery, source: @escaping @Sendable () async throws(RepositoryError) -> Repository<T>) {
        self.source = source
        self.query = query
    }

    /// An iterator that starts the observation on its first `next()`.
    public func makeAsyncIterator() -> Iterator {
        Iterator(source: source, query: query)
    }

    /// Iterates the changes; the observation runs on the repository's actor, and each
    /// element is handed to the caller's isolation.
    public struct Iterator: AsyncIteratorProtocol {
        let source: @Sendable () async throws(RepositoryError) -> Repository<T>
        let query: RepositoryQuery
        var subscription: RepositorySubscription<T>?
        var ticks: AsyncStream<Void>.Iterator?
        var finished = false

        init(source: @escaping @Sendable () async throws(RepositoryError) -> Repository<T>, query: RepositoryQuery) {
            self.source = source
            self.query = query
        }

        /// The next change, or nil once the task is cancelled.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(RepositoryError) -> RepositoryChange<T>? {
            if finished { return nil }
            guard let subscription, ticks != nil else {
                guard !Task.isCancelled else {
                    finished = true
                    return nil
                }
                do {
                    let repository = try await source()
                    let started = try await repository.startObservation(query)
                    self.subscription = RepositorySubscription(repository: repository, id: started.id)
                    ticks = started.ticks.makeAsyncIterator()
                    return started.initial
                } catch {
                    finished = true
                    throw error
                }
            }
            while true {
                guard await ticks?.next(isolation: actor) != nil, !Task.isCancelled else {
                    finished = true
                    await subscription.end()
                    return nil
                }
                do {
                    if let change = try await subscription.repository.pullChange(subscription.id) { return change }
                } catch {
                    finished = true
                    await subscription.end()
                    throw error
                }
            }
        }

        /// The next change (`for try await` calls `next(isolation:)` with the caller's isolation).
        public mutating func next() async throws(RepositoryError) -> RepositoryChange<T>? {
            try await next(isolation: nil)
        }
    }
}

/// What a ``RepositoryChanges`` sequence observes: an optional predicate with its arguments,
/// and an optional sort.
struct RepositoryQuery: Sendable {
    var predicate: String?
    var arguments: [any Sendable]
    var sortKey: String?
    var ascending: Bool

    /// Every item, in the order they were first saved.
    static var all: RepositoryQuery { RepositoryQuery(predicate: nil, arguments: [], sortKey: nil, ascending: true) }
}

/// An iterator's registration on the repository's actor. Ending it is idempotent; an
/// iterator dropped without ending it ends it from `deinit` (on the actor, shortly after).
final class RepositorySubscription<T: Codable & Identifiable & Sendable>: Sendable where T.ID: RepositoryIdentifier {
    let repository: Repository<T>
    let id: Int
    private let ended = Atomic<Bool>(false)

    init(repository: Repository<T>, id: Int) {
        self.repository = repository
        self.id = id
    }

    /// Removes the registration now.
    func end() async {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        await repository.endObservation(id)
    }

    deinit {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let repository = repository
        let id = id
        Task { await repository.endObservation(id) }
    }
}
