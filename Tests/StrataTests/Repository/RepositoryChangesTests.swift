import Foundation
import StrataTestWorkloads
import Testing
@testable import Strata

@Suite("repository.changes", .timeLimit(.minutes(10)))
struct RepositoryChangesTests {
    @Test("the first element is the initial state; each commit then yields its insertions, modifications and deletions")
    func initialThenEachCommit() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(question("a", owner: "Ann", created: 1))
        var changes = repository.changes.makeAsyncIterator()

        let initial = try #require(try await changes.next())
        #expect(initial.isInitial)
        #expect(initial.items.map(\.id) == ["a"])
        #expect(initial.deletions.isEmpty && initial.insertions.isEmpty && initial.modifications.isEmpty)

        try await repository.save(question("b", owner: "Bob", created: 2))
        let inserted = try #require(try await changes.next())
        #expect(!inserted.isInitial)
        #expect(inserted.items.map(\.id) == ["a", "b"])
        #expect(inserted.insertions == [1] && inserted.deletions.isEmpty && inserted.modifications.isEmpty)

        var edited = question("a", owner: "Ann", created: 1)
        edited.title = "Edited"
        try await repository.save(edited)
        let modified = try #require(try await changes.next())
        #expect(modified.modifications == [0] && modified.insertions.isEmpty && modified.deletions.isEmpty)
        #expect(modified.items.first == edited)

        try await repository.delete("a")
        let deleted = try #require(try await changes.next())
        #expect(deleted.deletions == [0] && deleted.insertions.isEmpty && deleted.modifications.isEmpty)
        #expect(deleted.items.map(\.id) == ["b"])
    }

    @Test("a query's sequence yields only the commits that change its items")
    func queryIgnoresUnrelatedCommits() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(question("a", owner: "Ann", created: 5))
        var changes = repository.changes(where: "owner == %@ AND done == false", "Ann", sortedBy: "created").makeAsyncIterator()
        #expect(try await changes.next()?.items.map(\.id) == ["a"])

        try await repository.save(question("x", owner: "Bob", created: 1))
        try await repository.save(question("y", owner: "Ann", done: true, created: 2))
        try await repository.save(question("b", owner: "Ann", created: 3))
        let change = try #require(try await changes.next())
        #expect(change.items.map(\.id) == ["b", "a"], "sorted by created")
        #expect(change.insertions == [0] && change.deletions.isEmpty && change.modifications.isEmpty)
    }

    @Test("a commit leaving the query's items as they were produces nothing (pulled directly, after each commit)")
    func unrelatedCommitsProduceNoChange() async throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration()
        let repository = try Repository(Question.self, in: configuration)
        let tags = try Repository(Tag.self, in: configuration)
        try await repository.save(question("a", owner: "Ann", created: 1))
        let started = try await repository.startObservation(RepositoryQuery(predicate: "owner == %@", arguments: ["Ann"], sortKey: nil, ascending: true))
        var ticks = started.ticks.makeAsyncIterator()

        // Commits through the same instance are delivered when the write returns.
        try await repository.save(question("x", owner: "Bob", created: 2))
        #expect(try await repository.pullChange(started.id) == nil, "a row outside the query")
        try await repository.save(question("x", owner: "Bob", done: true, created: 2))
        #expect(try await repository.pullChange(started.id) == nil, "a property of a row outside the query")
        try await repository.delete("x")
        #expect(try await repository.pullChange(started.id) == nil, "deleting a row outside the query")
        // Another type, from another instance: delivered once this instance has moved on,
        // which reading through the repository makes it do.
        try await tags.save(Tag(id: 1, name: "swift"))
        #expect(try await repository.count == 1)
        #expect(try await repository.pullChange(started.id) == nil, "another type")

        try await repository.save(question("b", owner: "Ann", created: 3))
        #expect(await ticks.next() != nil)
        let change = try #require(try await repository.pullChange(started.id))
        #expect(change.items.map(\.id) == ["a", "b"])
        #expect(change.insertions == [1] && change.deletions.isEmpty && change.modifications.isEmpty)
        await repository.endObservation(started.id)
        #expect(await ticks.next() == nil, "ending the observation finishes its signal")
    }

    @Test("commits made through another repository instance on the same file arrive")
    func commitsFromAnotherInstanceArrive() async throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration()
        let watching = try Repository(Question.self, in: configuration)
        let writing = try Repository(Question.self, in: configuration)
        var changes = watching.changes(sortedBy: "created").makeAsyncIterator()
        #expect(try await changes.next()?.items.isEmpty == true)

        try await writing.save(question("a", owner: "Ann", created: 1))
        let change = try #require(try await changes.next())
        #expect(change.items.map(\.id) == ["a"])
        #expect(change.insertions == [0])
    }

    @Test("a consumer that falls behind gets one element covering every commit since its last")
    func commitsWhileBusyArriveAsOneChange() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        var changes = repository.changes(sortedBy: "created").makeAsyncIterator()
        _ = try await changes.next()
        try await repository.save(question("a", owner: "Ann", created: 1))
        try await repository.save(question("b", owner: "Ann", created: 2))
        try await repository.save(question("c", owner: "Ann", created: 3))
        try await repository.delete("b")
        let change = try #require(try await changes.next())
        #expect(change.items.map(\.id) == ["a", "c"])
        #expect(change.insertions == [0, 1] && change.deletions.isEmpty)
    }

    @Test("a combined element reports items edited in between as modified, and nothing for a row that came and went")
    func combinedElementReportsModifications() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(contentsOf: [question("a", owner: "Ann", created: 1), question("b", owner: "Ann", created: 2)])
        var changes = repository.changes(sortedBy: "created").makeAsyncIterator()
        _ = try await changes.next()
        try await repository.save(question("b", owner: "Ann", done: true, created: 2))
        try await repository.save(question("c", owner: "Ann", created: 3))
        try await repository.save(question("t", owner: "Ann", created: 0))
        try await repository.delete("t")
        try await repository.delete("a")
        let change = try #require(try await changes.next())
        #expect(change.items.map(\.id) == ["b", "c"])
        #expect(change.deletions == [0] && change.insertions == [1] && change.modifications == [0])
        #expect(change.items.first?.done == true)
    }

    @Test("cancelling the iterating task ends the observation and releases its observer")
    func cancellationReleasesTheObserver() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        let (received, receivedContinuation) = AsyncStream.makeStream(of: Int.self)
        let consumer = Task {
            var count = 0
            for try await change in repository.changes {
                count += 1
                receivedContinuation.yield(change.items.count)
            }
            return count
        }
        var receivedIterator = received.makeAsyncIterator()
        #expect(await receivedIterator.next() == 0)
        #expect(await repository.runningObservationCount == 1)
        #expect(try await repository.hasActiveObservers)

        consumer.cancel()
        #expect(try await consumer.value == 1)
        #expect(await repository.runningObservationCount == 0)
        // The token is invalidated at once; the instance drops the shared observer in its next
        // delivery pass, as the first commit makes one. The repository keeps working.
        try await repository.save(question("a", owner: "Ann", created: 1))
        #expect(try await !repository.hasActiveObservers)
        // A new observation starts from the current state.
        var again = repository.changes.makeAsyncIterator()
        #expect(try await again.next()?.items.map(\.id) == ["a"])
    }

    @Test("leaving a for-await loop releases the observation")
    func droppingTheIteratorReleasesTheObserver() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        for try await change in repository.changes {
            #expect(change.isInitial)
            break
        }
        // The dropped iterator ends its registration from a task on the repository's actor.
        while await repository.runningObservationCount > 0 { await Task.yield() }
        try await repository.save(question("a", owner: "Ann", created: 1))
        #expect(try await !repository.hasActiveObservers)
    }

    @Test("a malformed predicate or an unknown sort property is thrown by next() as a typed error, and ends the sequence")
    func badQueriesThrow() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        var malformed = repository.changes(where: "owner ==").makeAsyncIterator()
        await #expect(throws: RepositoryError.self) { _ = try await malformed.next() }
        #expect(try await malformed.next() == nil)
        var badSort = repository.changes(sortedBy: "nope").makeAsyncIterator()
        do {
            _ = try await badSort.next()
            Issue.record("sorting by an unknown property did not throw")
        } catch {
            guard case .invalidQuery(let type, let reason) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(type == "Question")
            #expect(reason.contains("nope"))
        }
        #expect(await repository.runningObservationCount == 0)
    }

    @Test("observing a read-only file is a typed error, not a trap")
    func readOnlyFileCannotBeObserved() async throws {
        let folder = TemporaryFolder()
        var configuration = folder.configuration()
        try await Repository(Question.self, in: configuration).save(question("a", owner: "Ann", created: 1))
        configuration.readOnly = true
        let reader = try Repository(Question.self, in: configuration)
        #expect(try await reader.loadAll().map(\.id) == ["a"])
        var changes = reader.changes.makeAsyncIterator()
        do {
            _ = try await changes.next()
            Issue.record("observing a read-only file did not throw")
        } catch {
            guard case .database(let reason) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(reason.contains("read-only"))
        }
    }

    @Test("random saves and deletes: every element's items equal the query's, and its indices turn the previous items into them")
    func randomizedAgainstTheQuery() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        var random = SplitMix64(seed: 0x5EED_0032)
        var changes = repository.changes(where: "done == false", sortedBy: "created").makeAsyncIterator()
        var last = try #require(try await changes.next()).items
        let owners = ["Ann", "Bob"]
        for step in 0..<150 {
            let number = Int.random(in: 0..<12, using: &random)
            if Int.random(in: 0..<4, using: &random) == 0 {
                try await repository.delete("q\(number)")
            } else {
                // Distinct `created` values, so the order has no ties.
                let created = Double(Int.random(in: 0..<20, using: &random) * 100 + number)
                try await repository.save(question("q\(number)", owner: owners[Int.random(in: 0..<2, using: &random)],
                                                   done: Int.random(in: 0..<3, using: &random) == 0, created: created))
            }
            let expected = try await repository.items(where: "done == false", sortedBy: "created")
            // A commit that leaves the query's items as they were yields nothing of its own;
            // the next element covers it.
            guard expected != last else { continue }
            let change = try #require(try await changes.next())
            #expect(change.items == expected, "step \(step)")
            var ids = last.map(\.id)
            for index in change.deletions.reversed() { ids.remove(at: index) }
            for index in change.insertions { ids.insert(change.items[index].id, at: index) }
            #expect(ids == expected.map(\.id), "step \(step): the indices do not lead from the previous items to the new ones")
            for index in change.items.indices where !change.insertions.contains(index) {
                if let before = last.first(where: { $0.id == change.items[index].id }), before != change.items[index] {
                    #expect(change.modifications.contains(index), "step \(step): a changed item is not reported as modified")
                }
            }
            last = change.items
        }
    }
}
