import Foundation
import Observation
import Testing
import Strata

// The seed's view model (seed 004) on a live query, as Repositories.md shows it: the
// `load()` calls are gone and `questions` stays current by itself.

/// Namespaces the rewritten model apart from SeedLocalRepositoryTests' original.
enum LiveSeed {
    @Observable @MainActor
    final class QuestionListViewModel {
        private let live: LiveQuery<Question>
        private let repository: Repository<Question>

        /// The questions, oldest first; current after every commit, from anywhere.
        var questions: [Question] { live.items }

        init(repository: Repository<Question>) {
            self.repository = repository
            live = LiveQuery(repository, sortedBy: "created")
        }

        func add(_ question: Question) async throws {
            try await repository.save(question)
        }
    }
}

@Suite("The seed's view model on a live query", .timeLimit(.minutes(10))) @MainActor
struct QuestionListViewModelTests {
    @Test("questions follow the model's own saves and other writers' without load()")
    func questionsStayCurrent() async throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration()
        let repository = try Repository(Question.self, in: configuration)
        try await repository.save(question("q-001", owner: "Ann", created: 1))
        let model = LiveSeed.QuestionListViewModel(repository: repository)
        let questions = Invalidations { _ = model.questions }

        await questions.wait(for: 1)
        #expect(model.questions.map(\.id) == ["q-001"])

        try await model.add(question("q-002", owner: "Bob", created: 2))
        await questions.wait(for: 2)
        #expect(model.questions.map(\.id) == ["q-001", "q-002"])

        let elsewhere = try Repository(Question.self, in: configuration)
        try await elsewhere.delete("q-001")
        await questions.wait(for: 3)
        #expect(model.questions.map(\.id) == ["q-002"])
    }
}
