import Foundation
import Testing
@testable import Strata

@Suite("LocalRepository.changes", .timeLimit(.minutes(10)))
struct LocalRepositoryChangesTests {
    @Test("the first element holds the imported JSON file's items; each save and delete follows")
    func followsImportAndSaves() async throws {
        let folder = TemporaryFolder()
        let existing = [question("a", owner: "Ann", created: 1), question("b", owner: "Bob", created: 2)]
        try JSONEncoder().encode(existing).write(to: folder.url.appendingPathComponent("data.json"), options: .atomic)
        let repository = LocalRepository<Question>(directory: folder.url)

        var iterator = repository.changes.makeAsyncIterator()
        let initial = try #require(try await iterator.next())
        #expect(initial.isInitial)
        #expect(initial.items == existing)

        try await repository.save(question("c", owner: "Cy", created: 3))
        let inserted = try #require(try await iterator.next())
        #expect(inserted.items.map(\.id) == ["a", "b", "c"])
        #expect(inserted.insertions == [2])

        try await repository.delete("a")
        let deleted = try #require(try await iterator.next())
        #expect(deleted.items.map(\.id) == ["b", "c"])
        #expect(deleted.deletions == [0])
    }

    @Test("changes(where:) and changes(sortedBy:) follow a query, as the repository's do")
    func queries() async throws {
        let folder = TemporaryFolder()
        let repository = LocalRepository<Question>(directory: folder.url)
        try await repository.save(question("a", owner: "Ann", created: 2))
        try await repository.save(question("b", owner: "Bob", created: 1))

        var annOnly = repository.changes(where: "owner == %@", "Ann").makeAsyncIterator()
        #expect(try await annOnly.next()?.items.map(\.id) == ["a"])
        var byCreated = repository.changes(sortedBy: "created").makeAsyncIterator()
        #expect(try await byCreated.next()?.items.map(\.id) == ["b", "a"])

        try await repository.save(question("c", owner: "Ann", created: 0))
        #expect(try await annOnly.next()?.items.map(\.id) == ["a", "c"])
        #expect(try await byCreated.next()?.items.map(\.id) == ["c", "b", "a"])
    }

    @Test("a damaged JSON file ends the sequence with the typed error, recorded in lastError")
    func damagedJSONFile() async throws {
        let folder = TemporaryFolder()
        try Data("[{\"id\": ".utf8).write(to: folder.url.appendingPathComponent("data.json"))
        let repository = LocalRepository<Question>(directory: folder.url)
        var iterator = repository.changes.makeAsyncIterator()
        await #expect {
            _ = try await iterator.next()
        } throws: { error in
            if case .damagedJSONFile = error as? RepositoryError { return true }
            return false
        }
        guard case .damagedJSONFile = await repository.lastError else {
            Issue.record("expected damagedJSONFile in lastError, got \(String(describing: await repository.lastError))")
            return
        }
    }
}
