// `repository.changes` following commits made by another process: the StrataCommitChild
// executable saves a `Question` through its own `Repository` on the same file. Waiting is on
// the child's exit and on the sequence's next element, never on a timer.

import Foundation
import StrataTestWorkloads
import Testing
@testable import Strata

@Suite("repository.changes across processes", .timeLimit(.minutes(10)))
struct RepositoryChangesAcrossProcessesTests {
    @Test("an item another process saves arrives as the next element, with its insertion")
    func anotherProcessesSaveArrives() async throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration()
        let repository = try Repository(Question.self, in: configuration)
        try await repository.save(question("a", owner: "Ann", created: 1))
        var changes = repository.changes.makeAsyncIterator()
        let initial = try await changes.next()
        #expect(initial?.isInitial == true)
        #expect(initial?.items.map(\.id) == ["a"])

        guard let child = try await saveQuestionInChild(path: try #require(configuration.fileURL).path, id: "from-child", owner: "Child") else { return }
        // Without the child's commit the next element would never come: stop here instead.
        try #require(child.status == 0 && child.output.contains("committed"), "the child did not commit: \(child.output)")

        let change = try await changes.next()
        #expect(change?.isInitial == false)
        #expect(change?.items.map(\.id) == ["a", "from-child"])
        #expect(change?.insertions == [1])
        #expect(change?.items.last?.owner == "Child")
        #expect(change?.items.last?.title == "Title from-child")
        #expect(try await repository.find(by: "from-child")?.owner == "Child")
    }

    @Test("another process's commit outside the query yields nothing; the next one inside it does")
    func anotherProcessesUnrelatedSaveYieldsNothing() async throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration()
        let path = try #require(configuration.fileURL).path
        let repository = try Repository(Question.self, in: configuration)
        var changes = repository.changes(where: "owner == %@", "Child").makeAsyncIterator()
        let initial = try await changes.next()
        #expect(initial?.isInitial == true && initial?.items.isEmpty == true)

        guard let unrelated = try await saveQuestionInChild(path: path, id: "bob-1", owner: "Bob") else { return }
        try #require(unrelated.status == 0, "the child did not commit: \(unrelated.output)")
        guard let related = try await saveQuestionInChild(path: path, id: "child-1", owner: "Child") else { return }
        try #require(related.status == 0, "the child did not commit: \(related.output)")

        // Had the unrelated commit yielded an element, it would come first and hold no items.
        let change = try await changes.next()
        #expect(change?.items.map(\.id) == ["child-1"])
        #expect(change?.insertions == [0])
    }
}
