import Foundation
import Observation
import Testing
@testable import Strata

// The seed's usage, as written there: `LocalRepository` calls and its `QuestionListViewModel`,
// compiled against Strata's `LocalRepository`.

@Observable
final class QuestionListViewModel {
    private(set) var questions: [Question] = []
    private let repository: LocalRepository<Question>

    init(repository: LocalRepository<Question> = LocalRepository()) {
        self.repository = repository
    }

    func load() async {
        questions = await repository.loadAll()
    }

    func add(_ question: Question) async throws {
        try await repository.save(question)
        questions = await repository.loadAll()
    }
}

@Suite("LocalRepository, the seed's drop-in")
struct SeedLocalRepositoryTests {
    @Test("the seed's usage works: save, find, loadAll, delete")
    func seedUsage() async throws {
        let folder = TemporaryFolder()
        let repository = LocalRepository<Question>(directory: folder.url, filename: "questions.json")
        let newQuestion = question("q-001", owner: "Ann", created: 1)

        try await repository.save(newQuestion)
        let found = await repository.find(by: "q-001")
        let allQuestions = await repository.loadAll()
        #expect(found == newQuestion)
        #expect(allQuestions == [newQuestion])

        try await repository.delete("q-001")
        #expect(await repository.find(by: "q-001") == nil)
        #expect(await repository.loadAll().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("questions.json").path))
    }

    @Test("the seed's view model loads and adds through the repository")
    func seedViewModel() async throws {
        let folder = TemporaryFolder()
        let viewModel = QuestionListViewModel(repository: LocalRepository(directory: folder.url, filename: "questions.json"))
        await viewModel.load()
        #expect(viewModel.questions.isEmpty)
        try await viewModel.add(question("q1", owner: "Ann", created: 1))
        try await viewModel.add(question("q2", owner: "Bob", created: 2))
        #expect(viewModel.questions.map(\.id).sorted() == ["q1", "q2"])
        let reopened = QuestionListViewModel(repository: LocalRepository(directory: folder.url, filename: "questions.json"))
        await reopened.load()
        #expect(reopened.questions.map(\.id).sorted() == ["q1", "q2"])
    }

    @Test("the seed's JSON file is imported once, beside it, and left untouched")
    func importsTheJSONFile() async throws {
        let folder = TemporaryFolder()
        let jsonURL = folder.url.appendingPathComponent("data.json")
        let existing = [question("a", owner: "Ann", created: 1), question("b", owner: "Bob", created: 2)]
        // The seed's own writer: JSONEncoder over the array, written atomically.
        let original = try JSONEncoder().encode(existing)
        try original.write(to: jsonURL, options: .atomic)

        let repository = LocalRepository<Question>(directory: folder.url)
        #expect(await repository.loadAll() == existing)
        try await repository.save(question("c", owner: "Cy", created: 3))
        try await repository.delete("a")
        #expect(try Data(contentsOf: jsonURL) == original)
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("data.strata").path))

        // A second open does not import again: the deleted item stays deleted.
        let reopened = LocalRepository<Question>(directory: folder.url)
        #expect(await reopened.find(by: "a") == nil)
        #expect(await reopened.loadAll().map(\.id) == ["b", "c"])
    }

    @Test("a damaged JSON file is a typed error at the first call that needs it and is never overwritten")
    func damagedJSONFile() async throws {
        let folder = TemporaryFolder()
        let jsonURL = folder.url.appendingPathComponent("data.json")
        let damaged = Data("[{\"id\": \"a\", \"title\": ".utf8)
        try damaged.write(to: jsonURL)

        let repository = LocalRepository<Question>(directory: folder.url)
        #expect(await repository.loadAll().isEmpty)
        guard case .damagedJSONFile(let path, _) = await repository.lastError else {
            Issue.record("expected damagedJSONFile, got \(String(describing: await repository.lastError))")
            return
        }
        #expect(path == jsonURL.path)
        await #expect {
            try await repository.save(question("c", owner: "Cy", created: 3))
        } throws: { error in
            if case .damagedJSONFile = error as? RepositoryError { return true }
            return false
        }
        #expect(try Data(contentsOf: jsonURL) == damaged)

        // Once repaired, the next call imports it.
        let repaired = [question("a", owner: "Ann", created: 1)]
        try JSONEncoder().encode(repaired).write(to: jsonURL)
        try await repository.save(question("c", owner: "Cy", created: 3))
        #expect(await repository.loadAll().map(\.id) == ["a", "c"])
        #expect(await repository.lastError == nil)
    }
}
