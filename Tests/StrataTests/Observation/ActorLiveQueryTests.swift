import Foundation
import Observation
import Testing
@testable import Strata

/// An actor that owns an `ActorLiveQuery` and counts, on itself, the invalidations of the
/// query's properties. `onChange` checks with `assumeIsolated` that it runs on this actor (a
/// trap otherwise), which is where the query's updates must happen.
actor LiveQueryHost {
    enum Property: Hashable, Sendable { case items, count, isEmpty, isLoaded }

    private var query: ActorLiveQuery<Question>?
    private var counts: [Property: Int] = [:]
    private var waiters: [(property: Property, count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Creates the query here (its isolation is this actor, the default `#isolation`) and
    /// returns once its initial items have arrived.
    func start(_ repository: Repository<Question>, where predicate: String? = nil) async {
        let query = if let predicate {
            ActorLiveQuery(repository, where: predicate, sortedBy: "created")
        } else {
            ActorLiveQuery(repository, sortedBy: "created")
        }
        self.query = query
        if !query.isLoaded {
            track(.isLoaded)
            await wait(for: 1, of: .isLoaded)
        }
    }

    /// Counts every invalidation of `property` from now on.
    func track(_ property: Property) {
        guard let query else { return }
        withObservationTracking {
            switch property {
            case .items: _ = query.items
            case .count: _ = query.count
            case .isEmpty: _ = query.isEmpty
            case .isLoaded: _ = query.isLoaded
            }
        } onChange: { [weak self] in
            self?.assumeIsolated { $0.fired(property) }
        }
    }

    private func fired(_ property: Property) {
        counts[property, default: 0] += 1
        track(property)
        let count = counts[property, default: 0]
        let ready = waiters.filter { $0.property == property && $0.count <= count }
        waiters.removeAll { $0.property == property && $0.count <= count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `property` has been invalidated at least `expected` times.
    func wait(for expected: Int, of property: Property) async {
        guard counts[property, default: 0] < expected else { return }
        await withCheckedContinuation { waiters.append((property, expected, $0)) }
    }

    func invalidations(of property: Property) -> Int { counts[property, default: 0] }
    var ids: [String] { query?.items.map(\.id) ?? [] }
    var items: [Question] { query?.items ?? [] }
    var count: Int { query?.count ?? -1 }
    var isEmpty: Bool { query?.isEmpty ?? false }
    var error: RepositoryError? { query?.error }

    func release() { query = nil }
}

@Suite("ActorLiveQuery: an observable repository query on the caller's actor", .timeLimit(.minutes(10)))
struct ActorLiveQueryTests {
    let folder = TemporaryFolder()

    @Test("the initial items and each commit's items arrive on the actor that created the query")
    func followsCommitsOnItsActor() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(question("a", owner: "Ann", created: 1))
        let host = LiveQueryHost()
        await host.start(repository)
        #expect(await host.ids == ["a"])
        #expect(await host.count == 1)
        #expect(await host.error == nil)

        await host.track(.items)
        try await repository.save(question("b", owner: "Bob", created: 2))
        await host.wait(for: 1, of: .items)
        #expect(await host.ids == ["a", "b"])
        #expect(await host.count == 2)

        try await repository.delete("a")
        await host.wait(for: 2, of: .items)
        #expect(await host.ids == ["b"])
    }

    @Test("an edit invalidates items once and not count or isEmpty; commits outside the query invalidate nothing")
    func invalidatesOnlyWhatChanged() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(question("a", owner: "Ann", created: 1))
        let host = LiveQueryHost()
        await host.start(repository, where: "owner == 'Ann'")
        for property in [LiveQueryHost.Property.items, .count, .isEmpty] { await host.track(property) }

        try await repository.save(question("x", owner: "Bob", created: 2))
        try await repository.save(question("a", owner: "Ann", created: 1))  // the same values again
        try await repository.save(question("a", owner: "Ann", done: true, created: 1))
        await host.wait(for: 1, of: .items)
        #expect(await host.items.first?.done == true, "the first invalidation came before the edit")
        #expect(await host.invalidations(of: .items) == 1)
        #expect(await host.invalidations(of: .count) == 0)
        #expect(await host.invalidations(of: .isEmpty) == 0)

        try await repository.delete("a")
        await host.wait(for: 2, of: .items)
        #expect(await host.isEmpty)
        #expect(await host.invalidations(of: .count) == 1)
        #expect(await host.invalidations(of: .isEmpty) == 1)
    }

    @Test("a malformed predicate ends the query with the typed error")
    func errorIsKept() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        let host = LiveQueryHost()
        await host.start(repository, where: "owner ==")
        guard case .invalidQuery? = await host.error else {
            Issue.record("expected an invalidQuery error, got \(String(describing: await host.error))")
            return
        }
        #expect(await host.ids.isEmpty)
    }

    @Test("releasing the query on its actor ends its observation")
    func releasingEndsTheObservation() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        let host = LiveQueryHost()
        await host.start(repository)
        #expect(await repository.runningObservationCount == 1)
        await host.release()
        while await repository.runningObservationCount > 0 { await Task.yield() }
        try await repository.save(question("a", owner: "Ann", created: 1))
        #expect(try await !repository.hasActiveObservers)
    }

    @Test("created on the main actor, it is kept current on the main actor")
    @MainActor func defaultsToTheMainActorThere() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        let query = ActorLiveQuery(repository, sortedBy: "created")
        // Invalidations checks with MainActor.assumeIsolated that each change arrives there.
        let loading = Invalidations { _ = query.isLoaded }
        if !query.isLoaded { await loading.wait(for: 1) }
        let items = Invalidations { _ = query.items }
        try await repository.save(question("a", owner: "Ann", created: 1))
        await items.wait(for: 1)
        #expect(query.items.map(\.id) == ["a"])
    }
}
