// `repository.changes`: the repository's side of a `RepositoryChanges` sequence.
//
// Each iteration registers a `RepositoryObservation` on the repository's actor: the query's
// live `Results` over the actor's database instance, observed with an ordinary collection
// observation. The instance delivers it at every version it moves to (its own commits, and
// auto-refresh after other instances' and processes'), while it still pins the version it
// leaves, so the change log reaches back and each change is exact. The observation applies
// each change to its copy of the items at once, decoding only inserted and modified rows, and
// signals the consumer.
//
// The consumer pulls: it waits for the signal in its own isolation, then asks the actor for
// what changed since the items it last received. One update since then is passed on with the
// notification's own indices; several are combined into one by diffing the ids (items updated
// in between count as modified). So a consumer that falls behind gets one element, never a
// backlog, and memory stays at two arrays of items per observation.

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

    /// Registers an observation of `query`: its id, the signal that its items changed, and the
    /// initial state.
    func startObservation(_ query: RepositoryQuery) async throws(RepositoryError) -> (id: Int, ticks: AsyncStream<Void>, initial: RepositoryChange<T>) {
        guard !configuration.readOnly else {
            throw .database(reason: "a read-only file never changes, so '\(typeName)' items cannot be observed: open it with readOnly = false to observe it")
        }
        let database = try await openForReading()
        let results = try self.query(database, query.predicate, query.arguments, sortedBy: query.sortKey, ascending: query.ascending)
        let items = try decodeAll(results)
        let id = observations.nextID
        observations.nextID += 1
        let (ticks, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let observation = RepositoryObservation(items: items, signal: signal)
        observations.running[id] = observation
        // Delivered on this actor (the instance's context); `.initial` at once, ignored: the
        // items above are the same version's.
        observation.token = results.observe(keyPaths: nil) { [weak observation, table] change in
            guard case .update(let results, let deletions, let insertions, let modifications) = change else { return }
            observation?.take(deletions: deletions, insertions: insertions, modifications: modifications, from: results, table: table)
        }
        return (id, ticks, RepositoryChange(items: items, isInitial: true))
    }

    /// What changed since the observation's consumer last received its items, or nil when
    /// nothing did (or the observation has ended). A row that could not be decoded is thrown.
    func pullChange(_ id: Int) throws(RepositoryError) -> RepositoryChange<T>? {
        guard let observation = observations.running[id] else { return nil }
        return try observation.pull()
    }

    /// Ends an observation and unregisters its observer; nothing happens for an ended one.
    func endObservation(_ id: Int) {
        guard let observation = observations.running.removeValue(forKey: id) else { return }
        observation.token?.invalidate()
        observation.signal.finish()
    }

    /// How many `changes` observations are registered (for tests).
    var runningObservationCount: Int { observations.running.count }

    /// Whether the repository's database instance has an active observer (for tests). An
    /// ended observation's token is invalidated at once; the instance drops the observer it
    /// shared in its next delivery pass.
    var hasActiveObservers: Bool {
        get async throws(RepositoryError) { try await openForReading().core.observers.hasObservers }
    }

    private func decodeAll(_ results: Results<DynamicObject>) throws(RepositoryError) -> [T] {
        var items: [T] = []
        items.reserveCapacity(results.count)
        for object in results { items.append(try table.item(T.self, from: object)) }
        return items
    }
}

/// The running observations of one repository, on its actor.
struct RepositoryObservations<T: Codable & Identifiable & Sendable> where T.ID: RepositoryIdentifier {
    var nextID = 0
    var running: [Int: RepositoryObservation<T>] = [:]
}

/// One running observation, on the repository's actor: the items as of the instance's
/// version, the items its consumer last received, and what happened in between.
final class RepositoryObservation<T: Codable & Identifiable & Sendable> where T.ID: RepositoryIdentifier {
    /// The items at the instance's version.
    private(set) var items: [T]
    /// The items the consumer last received.
    private var delivered: [T]
    /// Updates taken since the consumer last received the items: the last one's indices
    /// (exact when it is the only one), and the ids inserted or modified by any of them.
    private var pending: (count: Int, deletions: [Int], insertions: [Int], modifications: [Int]) = (0, [], [], [])
    private var touched: Set<T.ID> = []
    /// A row that failed to decode, thrown at the next pull.
    private var failure: RepositoryError?
    let signal: AsyncStream<Void>.Continuation
    var token: NotificationToken?

    init(items: [T], signal: AsyncStream<Void>.Continuation) {
        self.items = items
        self.delivered = items
        self.signal = signal
    }

    /// Applies one notification to ``items`` (decoding only the inserted and modified rows)
    /// and signals the consumer.
    func take(deletions: [Int], insertions: [Int], modifications: [Int], from results: Results<DynamicObject>, table: CodableTable) {
        guard failure == nil, !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else { return }
        do {
            items = try Self.applying(deletions: deletions, insertions: insertions, modifications: modifications, to: items,
                                      from: results, table: table)
        } catch {
            failure = error
            signal.yield()
            return
        }
        pending = (pending.count + 1, deletions, insertions, modifications)
        for index in insertions { touched.insert(items[index].id) }
        for index in modifications { touched.insert(items[index].id) }
        signal.yield()
    }

    /// The change from the delivered items to the current ones, or nil when there is none.
    func pull() throws(RepositoryError) -> RepositoryChange<T>? {
        if let failure { throw failure }
        guard pending.count > 0 else { return nil }
        defer {
            delivered = items
            pending = (0, [], [], [])
            touched = []
        }
        if pending.count == 1 {
            return RepositoryChange(items: items, deletions: pending.deletions, insertions: pending.insertions, modifications: pending.modifications)
        }
        let diff = CollectionDiff.between(delivered.map(\.id), items.map(\.id), modified: touched)
        guard !diff.isEmpty else { return nil }
        return RepositoryChange(items: items, deletions: diff.deletions, insertions: diff.insertions, modifications: diff.modifications)
    }

    /// `old` with a change applied: rows decoded only for insertions and modifications. The
    /// indices come from the results observer; should they not fit, every row is decoded.
    private static func applying(deletions: [Int], insertions: [Int], modifications: [Int], to old: [T],
                                 from results: Results<DynamicObject>, table: CodableTable) throws(RepositoryError) -> [T] {
        let count = results.count
        guard old.count - deletions.count + insertions.count == count,
              deletions.allSatisfy({ $0 >= 0 && $0 < old.count }),
              insertions.allSatisfy({ $0 >= 0 && $0 < count }),
              modifications.allSatisfy({ $0 >= 0 && $0 < count }) else {
            var items: [T] = []
            items.reserveCapacity(count)
            for object in results { items.append(try table.item(T.self, from: object)) }
            return items
        }
        var items = old
        for index in deletions.reversed() { items.remove(at: index) }
        for index in insertions { items.insert(try table.item(T.self, from: results[index]), at: index) }
        for index in modifications { items[index] = try table.item(T.self, from: results[index]) }
        return items
    }
}
