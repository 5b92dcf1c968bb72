// `repository.changes`: the repository's side of a `RepositoryChanges` sequence.
//
// Each iteration registers a `RepositoryObservation` on the repository's actor: the query's
// live `Results` over the actor's database instance, the pulling `ChangeStream.Source` that
// watches them (its signal observer ticks after each version the instance moves to, and its
// results observer computes the change on demand), and the items the consumer last received.
// The iterator waits for a tick in its own isolation, then asks the actor for the change; the
// actor computes it from the consumer's last version to the newest one and applies it to the
// last items, decoding only inserted and modified rows. Ending the observation drops the
// source, whose token unregisters both observers.

import StrataStore

extension Repository {
    /// Every item, each time a commit changes them (see ``RepositoryChanges``).
    ///
    /// ```swift
    /// for try await change in questions.changes {
    ///     show(change.items)
    /// }
    /// ```
    public nonisolated var changes: RepositoryChanges<T> {
        RepositoryChanges(repository: self, query: RepositoryQuery(predicate: nil, arguments: [], sortKey: nil, ascending: true))
    }

    /// The items matching a string predicate (as `items(where:_:sortedBy:ascending:)` takes it),
    /// optionally sorted by one property, each time a commit changes them.
    ///
    /// ```swift
    /// for try await change in questions.changes(where: "owner == %@ AND done == false", "Ann", sortedBy: "created") {
    ///     show(change.items, inserted: change.insertions)
    /// }
    /// ```
    public nonisolated func changes(where predicate: String, _ arguments: any Sendable..., sortedBy sortKey: String? = nil,
                                    ascending: Bool = true) -> RepositoryChanges<T> {
        RepositoryChanges(repository: self, query: RepositoryQuery(predicate: predicate, arguments: arguments, sortKey: sortKey, ascending: ascending))
    }

    /// Every item sorted by one property, each time a commit changes them.
    public nonisolated func changes(sortedBy sortKey: String, ascending: Bool = true) -> RepositoryChanges<T> {
        RepositoryChanges(repository: self, query: RepositoryQuery(predicate: nil, arguments: [], sortKey: sortKey, ascending: ascending))
    }

    /// Registers an observation of `query`: its id, the signal that the instance moved on, and
    /// the initial state (computed at the version the observers start from).
    func startObservation(_ query: RepositoryQuery) async throws(RepositoryError) -> (id: Int, ticks: AsyncStream<Void>, initial: RepositoryChange<T>) {
        let database = try await openForReading()
        let results = try self.query(database, query.predicate, query.arguments, sortedBy: query.sortKey, ascending: query.ascending)
        let items = try decodeAll(results)
        let source = ChangeStream<CollectionChange<Results<DynamicObject>>>.Source(core: database.core, initial: nil) { deliver in
            ResultsObserver(results: results, keyPaths: nil, callback: deliver)
        }
        let id = observations.nextID
        observations.nextID += 1
        observations.running[id] = RepositoryObservation(source: source, items: items)
        return (id, source.ticks, RepositoryChange(items: items, isInitial: true))
    }

    /// The observation's change since the items it last produced, or nil when the query's
    /// items did not change (or the observation has ended).
    func pullChange(_ id: Int) throws(RepositoryError) -> RepositoryChange<T>? {
        guard let observation = observations.running[id],
              case .update(let results, let deletions, let insertions, let modifications)? = observation.source.pull(),
              !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else { return nil }
        let items = try applying(deletions: deletions, insertions: insertions, modifications: modifications,
                                 to: observation.items, from: results)
        observation.items = items
        return RepositoryChange(items: items, deletions: deletions, insertions: insertions, modifications: modifications)
    }

    /// Ends an observation and unregisters its observers; nothing happens for an ended one.
    func endObservation(_ id: Int) {
        observations.running[id]?.source.token.invalidate()
        observations.running[id] = nil
    }

    /// How many `changes` observations are registered (for tests).
    var runningObservationCount: Int { observations.running.count }

    /// Whether the repository's database instance has an active observer (for tests).
    var hasActiveObservers: Bool {
        get async throws(RepositoryError) { try await openForReading().core.observers.hasObservers }
    }

    /// `old` with a change applied: rows decoded only for insertions and modifications. The
    /// indices come from the results observer; should they not fit, every row is decoded.
    private func applying(deletions: [Int], insertions: [Int], modifications: [Int], to old: [T],
                          from results: Results<DynamicObject>) throws(RepositoryError) -> [T] {
        let count = results.count
        guard old.count - deletions.count + insertions.count == count,
              deletions.allSatisfy({ $0 >= 0 && $0 < old.count }),
              insertions.allSatisfy({ $0 >= 0 && $0 < count }),
              modifications.allSatisfy({ $0 >= 0 && $0 < count }) else {
            return try decodeAll(results)
        }
        var items = old
        for index in deletions.reversed() { items.remove(at: index) }
        for index in insertions { items.insert(try table.item(T.self, from: results[index]), at: index) }
        for index in modifications { items[index] = try table.item(T.self, from: results[index]) }
        return items
    }

    private func decodeAll(_ results: Results<DynamicObject>) throws(RepositoryError) -> [T] {
        var items: [T] = []
        items.reserveCapacity(results.count)
        for object in results { items.append(try table.item(T.self, from: object)) }
        return items
    }
}

/// The running observations of one repository, on its actor.
struct RepositoryObservations<T> {
    var nextID = 0
    var running: [Int: RepositoryObservation<T>] = [:]
}

/// One running observation: what watches the query, and the items its consumer last received.
final class RepositoryObservation<T> {
    let source: ChangeStream<CollectionChange<Results<DynamicObject>>>.Source
    var items: [T]

    init(source: ChangeStream<CollectionChange<Results<DynamicObject>>>.Source, items: [T]) {
        self.source = source
        self.items = items
    }
}
