import Foundation
import Observation
import Testing
@testable import Strata

@Suite("LiveQuery: an observable repository query", .timeLimit(.minutes(10))) @MainActor
struct LiveQueryTests {
    let folder = TemporaryFolder()

    /// Waits until the live query has its initial items.
    func loaded(_ query: LiveQuery<Question>) async {
        let loading = Invalidations { _ = query.isLoaded }
        if !query.isLoaded { await loading.wait(for: 1) }
    }

    @Test("the initial items arrive without a load() call, and each commit's items follow")
    func followsCommits() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(question("a", owner: "Ann", created: 1))
        let query = LiveQuery(repository, where: "done == false", sortedBy: "created")
        await loaded(query)
        #expect(query.items.map(\.id) == ["a"])
        #expect(query.count == 1 && !query.isEmpty && query.error == nil)

        let items = Invalidations { _ = query.items }
        try await repository.save(question("b", owner: "Bob", created: 2))
        await items.wait(for: 1)
        #expect(query.items.map(\.id) == ["a", "b"])
        #expect(query.count == 2)

        try await repository.save(question("a", owner: "Ann", done: true, created: 1))
        await items.wait(for: 2)
        #expect(query.items.map(\.id) == ["b"])
    }

    @Test("one commit invalidates items exactly once; count and isEmpty only when they change")
    func oneCommitOneInvalidation() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        let query = LiveQuery(repository, where: "owner == %@", "Ann", sortedBy: "created")
        await loaded(query)
        let items = Invalidations { _ = query.items }
        let count = Invalidations { _ = query.count }
        let isEmpty = Invalidations { _ = query.isEmpty }

        try await repository.save(contentsOf: [question("a", owner: "Ann", created: 1), question("b", owner: "Ann", created: 2)])
        await items.wait(for: 1)
        #expect((items.count, count.count, isEmpty.count) == (1, 1, 1))

        // An edit: the items change, their number does not.
        try await repository.save(question("a", owner: "Ann", done: true, created: 1))
        await items.wait(for: 2)
        #expect((items.count, count.count, isEmpty.count) == (2, 1, 1))
        #expect(query.items.first?.done == true)
    }

    @Test("commits to rows outside the query and to other types invalidate nothing")
    func unrelatedCommitsInvalidateNothing() async throws {
        let configuration = folder.configuration()
        let repository = try Repository(Question.self, in: configuration)
        let tags = try Repository(Tag.self, in: configuration)
        try await repository.save(question("a", owner: "Ann", created: 1))
        let query = LiveQuery(repository, where: "owner == %@", "Ann")
        await loaded(query)
        let everything = Invalidations { _ = (query.items, query.count, query.isEmpty, query.isLoaded, query.error) }

        try await repository.save(question("x", owner: "Bob", created: 2))
        try await repository.save(question("x", owner: "Bob", done: true, created: 2))
        try await repository.delete("x")
        try await tags.save(Tag(id: 1, name: "swift"))
        // A commit that does change the query, after all of them: the first invalidation must be its.
        try await repository.save(question("b", owner: "Ann", created: 3))
        await everything.wait(for: 1)
        #expect(query.items.map(\.id) == ["a", "b"], "the first invalidation came before the related commit")
        #expect(everything.count == 2, "items and count, once each")
    }

    @Test("saving an item again with the same values invalidates nothing (an Equatable type)")
    func equalRewriteInvalidatesNothing() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        let a = question("a", owner: "Ann", created: 1)
        try await repository.save(a)
        let query = LiveQuery(repository)
        await loaded(query)
        let everything = Invalidations { _ = (query.items, query.count, query.isEmpty) }

        try await repository.save(a)
        var edited = a
        edited.title = "Edited"
        try await repository.save(edited)
        await everything.wait(for: 1)
        #expect(query.items == [edited], "the first invalidation came before the edit")
        #expect(everything.count == 1)
    }

    @Test("applying changes sets only the properties whose values change")
    func applySetsOnlyWhatChanged() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        // A query that matches nothing and sees no commits: apply() is driven by hand.
        let query = LiveQuery(changes: repository.changes(where: "owner == %@", "nobody-iterates-this"))
        await loaded(query)
        let items = Invalidations { _ = query.items }
        let count = Invalidations { _ = query.count }
        let isEmpty = Invalidations { _ = query.isEmpty }
        let isLoaded = Invalidations { _ = query.isLoaded }
        let a = question("a", owner: "Ann", created: 1)
        var edited = a
        edited.title = "Edited"
        let b = question("b", owner: "Ann", created: 2)

        query.apply(RepositoryChange(items: [], isInitial: true))
        #expect((items.count, count.count, isEmpty.count, isLoaded.count) == (0, 0, 0, 0))
        query.apply(RepositoryChange(items: [a], insertions: [0]))
        #expect((items.count, count.count, isEmpty.count) == (1, 1, 1))
        query.apply(RepositoryChange(items: [edited], modifications: [0]))
        #expect((items.count, count.count, isEmpty.count) == (2, 1, 1))
        query.apply(RepositoryChange(items: [edited], modifications: [0]))
        #expect((items.count, count.count, isEmpty.count) == (2, 1, 1), "the same values again")
        query.apply(RepositoryChange(items: [edited, b], insertions: [1]))
        #expect((items.count, count.count, isEmpty.count) == (3, 2, 1))
        query.apply(RepositoryChange(items: [], deletions: [0, 1]))
        #expect((items.count, count.count, isEmpty.count) == (4, 3, 2))
        #expect(isLoaded.count == 0)
    }

    @Test("a malformed predicate ends the query with the typed error")
    func errorIsKept() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        let query = LiveQuery(repository, where: "owner ==")
        await loaded(query)
        guard case .invalidQuery? = query.error else {
            Issue.record("expected an invalidQuery error, got \(String(describing: query.error))")
            return
        }
        #expect(query.items.isEmpty)
    }

    @Test("releasing the live query ends its observation")
    func releasingEndsTheObservation() async throws {
        let repository = try Repository(Question.self, in: folder.configuration())
        var query: LiveQuery<Question>? = LiveQuery(repository)
        await loaded(query!)
        #expect(await repository.runningObservationCount == 1)
        query = nil
        // The iterating task is cancelled by deinit and ends the registration on the actor.
        while await repository.runningObservationCount > 0 { await Task.yield() }
        // The next delivery pass drops the engine's observer.
        try await repository.save(question("a", owner: "Ann", created: 1))
        #expect(try await !repository.hasActiveObservers)
    }
}
