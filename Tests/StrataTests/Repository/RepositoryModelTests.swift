import Foundation
import Testing
@testable import Strata

/// Seeded random sequences of a repository's operations, each checked against a dictionary
/// that models the repository: every step's result must equal the model's, and the repository
/// is reopened (a new instance over the same file) now and then, so what is checked afterwards
/// was read back from the file. A failure names the seed and the step.
@Suite("Repository against an in-memory model")
struct RepositoryModelTests {
    static let owners = ["Ann", "Bob", "Cy"]

    /// A random question among 40 possible ids, so saves often replace and deletes often hit.
    static func randomQuestion(_ rng: inout SeededGenerator) -> Question {
        let id = "q\(Int.random(in: 0..<40, using: &rng))"
        return Question(id: id, title: "Title \(Int.random(in: 0..<1_000, using: &rng))",
                        owner: owners.randomElement(using: &rng) ?? "Ann", done: Bool.random(using: &rng),
                        created: Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<30, using: &rng))),
                        priority: Bool.random(using: &rng) ? .low : .high)
    }

    static func byID(_ items: [Question]) -> [Question] { items.sorted { $0.id < $1.id } }

    @Test("random saves, deletes and queries, with reopening, always agree with the model", arguments: [1, 2, 3] as [UInt64])
    func randomSequencesAgreeWithTheModel(seed: UInt64) async throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration()
        var repository = try Repository(Question.self, in: configuration, indexes: ["owner"])
        var model: [String: Question] = [:]
        var rng = SeededGenerator(seed: seed)
        var reopened = 0
        for step in 0..<250 {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<25:
                let item = Self.randomQuestion(&rng)
                try await repository.save(item)
                model[item.id] = item
            case 25..<35:
                // Duplicate ids in one batch: the last one wins, as for saves one by one.
                let items = (0..<Int.random(in: 0..<6, using: &rng)).map { _ in Self.randomQuestion(&rng) }
                try await repository.save(contentsOf: items)
                for item in items { model[item.id] = item }
            case 35..<45:
                let id = "q\(Int.random(in: 0..<40, using: &rng))"
                try await repository.delete(id)
                model[id] = nil
            case 45..<50:
                let owner = Self.owners.randomElement(using: &rng) ?? "Ann"
                let deleted = try await repository.delete(where: "owner == %@ AND done == true", owner)
                let matching = model.values.filter { $0.owner == owner && $0.done }
                #expect(deleted == matching.count, "\(context): delete(where:) count")
                for item in matching { model[item.id] = nil }
            case 50..<65:
                let id = "q\(Int.random(in: 0..<40, using: &rng))"
                #expect(try await repository.find(by: id) == model[id], "\(context): find(by: \(id))")
            case 65..<80:
                let owner = Self.owners.randomElement(using: &rng) ?? "Ann"
                let ascending = Bool.random(using: &rng)
                let found = try await repository.items(where: "owner == %@ AND done == false", owner, sortedBy: "created",
                                                       ascending: ascending)
                let expected = model.values.filter { $0.owner == owner && !$0.done }
                // Items with equal dates may come in any order; the dates' order may not.
                let dates = expected.map(\.created).sorted()
                #expect(found.map(\.created) == (ascending ? dates : dates.reversed()), "\(context): items(where:sortedBy:) order")
                #expect(Self.byID(found) == Self.byID(expected), "\(context): items(where:sortedBy:) items")
            case 80..<88:
                #expect(try await repository.count == model.count, "\(context): count")
            case 88..<95:
                #expect(Self.byID(try await repository.loadAll()) == Self.byID(Array(model.values)), "\(context): loadAll")
            default:
                repository = try Repository(Question.self, in: configuration, indexes: ["owner"])
                reopened += 1
                #expect(try await repository.count == model.count, "\(context): count after reopening")
            }
        }
        #expect(reopened > 0, "seed \(seed): the sequence never reopened the repository")
        repository = try Repository(Question.self, in: configuration, indexes: ["owner"])
        #expect(Self.byID(try await repository.loadAll()) == Self.byID(Array(model.values)), "seed \(seed): loadAll at the end")
    }
}
