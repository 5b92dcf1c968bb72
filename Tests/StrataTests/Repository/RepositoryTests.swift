import Foundation
import Testing
@testable import Strata

@Suite("Repository of Codable values")
struct RepositoryTests {
    @Test("every mapped kind round-trips exactly, nil and set")
    func everyKindRoundTrips() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(EveryKind.self, in: folder.configuration())
        let items = [EveryKind.sample("a", seed: 1), EveryKind.sample("b", seed: 2)]
        try await repository.save(contentsOf: items)
        #expect(try await repository.find(by: "a") == items[0])
        #expect(try await repository.find(by: "b") == items[1])
        #expect(try await repository.loadAll() == items)
    }

    @Test("nested structs are embedded objects: queryable, replaced with their parent, deleted with it")
    func nestedStructsAreEmbedded() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(EveryKind.self, in: folder.configuration())
        var first = EveryKind.sample("a", seed: 1)
        try await repository.save(contentsOf: [first, EveryKind.sample("b", seed: 2)])
        #expect(try await repository.items(where: "address.street == %@", "Main 2").map(\.id) == ["b"])
        #expect(try await repository.items(where: "place.address.zip == 3 AND ANY history.zip == 1", sortedBy: "id").map(\.id) == ["a", "b"])
        first.address = RepositoryAddress(street: "Moved", zip: 9)
        first.history = []
        first.secondAddress = nil
        try await repository.save(first)
        #expect(try await repository.find(by: "a") == first)
        #expect(try await repository.items(where: "address.street == %@", "Main 1").isEmpty)
        let database = try Database(configuration: folder.configuration(), queue: nil)
        // a: address, place, place.address (its history and second address were replaced by
        // none); b: address, 2 × history, place, place.address.
        #expect(database.dynamicObjects("EveryKind_RepositoryAddress").count == 4)
        try await repository.delete("b")
        database.refresh()
        #expect(database.dynamicObjects("EveryKind_RepositoryAddress").count == 1)
        #expect(database.dynamicObjects("EveryKind_RepositoryPlace").count == 1)
    }

    @Test("a type that contains itself round-trips through its JSON columns")
    func recursiveTypeRoundTrips() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Outline.self, in: folder.configuration())
        let leaf = Outline(id: "leaf", title: "Leaf", children: [], byName: [:])
        let root = Outline(id: "root", title: "Root", children: [leaf, Outline(id: "mid", title: "Mid", children: [leaf], byName: [:])], byName: ["leaf": leaf])
        try await repository.save(root)
        #expect(try await repository.find(by: "root") == root)
    }

    @Test("saving an existing id replaces it; a new id inserts")
    func replaceAndInsert() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(question("q1", owner: "Ann", created: 1))
        var changed = question("q1", owner: "Bob", done: true, created: 2)
        changed.title = "Changed"
        try await repository.save(changed)
        #expect(try await repository.count == 1)
        #expect(try await repository.find(by: "q1") == changed)
        try await repository.save(question("q2", owner: "Ann", created: 3))
        #expect(try await repository.count == 2)
        #expect(try await repository.find(by: "missing") == nil)
    }

    @Test("queries filter with string predicates and sort by a property")
    func queriesAndSorting() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration(), indexes: ["owner"])
        try await repository.save(contentsOf: [
            question("q1", owner: "Ann", created: 30),
            question("q2", owner: "Ann", done: true, created: 10),
            question("q3", owner: "Bob", created: 20),
            question("q4", owner: "Ann", created: 5, priority: .high),
        ])
        let open = try await repository.items(where: "owner == %@ AND done == false", "Ann", sortedBy: "created")
        #expect(open.map(\.id) == ["q4", "q1"])
        let newestFirst = try await repository.items(sortedBy: "created", ascending: false)
        #expect(newestFirst.map(\.id) == ["q1", "q3", "q2", "q4"])
        #expect(try await repository.items(where: "priority == %@", "high").map(\.id) == ["q4"])
        #expect(try await repository.items(where: "created > %@", Date(timeIntervalSinceReferenceDate: 15), sortedBy: "id").map(\.id) == ["q1", "q3"])
    }

    @Test("a malformed predicate, an unknown property or a sort by a non-column is a typed error")
    func badQueriesAreTypedErrors() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(EveryKind.self, in: folder.configuration())
        try await repository.save(EveryKind.sample("a", seed: 1))
        await #expect(throws: RepositoryError.self) { _ = try await repository.items(where: "string ==") }
        await #expect(throws: RepositoryError.self) { _ = try await repository.items(where: "nothing == 1") }
        await #expect(throws: RepositoryError.self) { _ = try await repository.items(sortedBy: "address") }
        await #expect(throws: RepositoryError.self) { _ = try await repository.items(sortedBy: "nothing") }
    }

    @Test("delete by id and delete where remove exactly the matching items")
    func deleting() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(contentsOf: (1...10).map { question("q\($0)", owner: $0 % 2 == 0 ? "Ann" : "Bob", created: Double($0)) })
        try await repository.delete("q1")
        try await repository.delete("missing")
        #expect(try await repository.count == 9)
        #expect(try await repository.delete(where: "owner == %@", "Ann") == 5)
        #expect(try await repository.items(sortedBy: "created").map(\.id) == ["q3", "q5", "q7", "q9"])
    }

    @Test("a batch with a value that does not fit stores none of its items")
    func batchIsAllOrNothing() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(EveryKind.self, in: folder.configuration())
        var bad = EveryKind.sample("bad", seed: 3)
        bad.uint64 = .max
        await #expect {
            try await repository.save(contentsOf: [EveryKind.sample("good", seed: 2), bad])
        } throws: { error in
            if case .valueConversion(type: "EveryKind", property: "uint64", _) = error as? RepositoryError { return true }
            return false
        }
        #expect(try await repository.count == 0)
    }

    @Test("a value encoded as another kind than its type decodes is a typed error, and nothing is stored")
    func encodingThatDisagreesWithDecodingIsATypedError() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Lopsided.self, in: folder.configuration())
        await #expect {
            try await repository.save(Lopsided(id: "a", count: 3))
        } throws: { error in
            if case .valueConversion(type: "Lopsided", property: "count", _) = error as? RepositoryError { return true }
            return false
        }
        #expect(try await repository.count == 0)
    }

    @Test("a batch is one commit")
    func batchIsOneCommit() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(question("q0", owner: "Ann", created: 0))
        let before = try versionOfFile(folder.configuration())
        try await repository.save(contentsOf: (1...50).map { question("q\($0)", owner: "Ann", created: Double($0)) })
        #expect(try versionOfFile(folder.configuration()) == before + 1)
        #expect(try await repository.count == 51)
    }

    @Test("several types share one file, with String, Int, UUID and ObjectId ids, and reopen with their items")
    func typesShareAFileAndReopen() async throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration()
        let reading = SensorReading(id: UUID(), value: 2.5)
        let document = Document(id: ObjectId.generate(), body: "text")
        do {
            let questions = try Repository(Question.self, in: configuration, indexes: ["owner"])
            let tags = try Repository(Tag.self, in: configuration)
            let readings = try Repository(SensorReading.self, in: configuration)
            let documents = try Repository(Document.self, in: configuration)
            try await questions.save(question("q1", owner: "Ann", created: 1))
            try await tags.save(Tag(id: 7, name: "swift"))
            try await readings.save(reading)
            try await documents.save(document)
        }
        let questions = try Repository(Question.self, in: configuration, indexes: ["owner"])
        let tags = try Repository(Tag.self, in: configuration)
        #expect(try await questions.loadAll() == [question("q1", owner: "Ann", created: 1)])
        #expect(try await tags.find(by: 7) == Tag(id: 7, name: "swift"))
        #expect(try await Repository(SensorReading.self, in: configuration).find(by: reading.id) == reading)
        #expect(try await Repository(Document.self, in: configuration).find(by: document.id) == document)
        let schema = try Database(configuration: configuration, queue: nil).schema
        #expect(schema["Question"]?.properties.first { $0.name == "owner" }?.isIndexed == true)
        #expect(schema["Tag"] != nil)
    }

    @Test("one repository sees another's saves to the same file")
    func repositoriesSeeEachOther() async throws {
        let folder = TemporaryFolder()
        let first = try Repository(Question.self, in: folder.configuration())
        let second = try Repository(Question.self, in: folder.configuration())
        #expect(try await second.count == 0)
        try await first.save(question("q1", owner: "Ann", created: 1))
        #expect(try await second.find(by: "q1") != nil)
    }

    @Test("a file whose stored type disagrees with the Swift type is a typed error naming the property")
    func mismatchNamesTheProperty() async throws {
        let folder = TemporaryFolder()
        try await Repository(Question.self, in: folder.configuration()).save(question("q1", owner: "Ann", created: 1))
        let changed = try Repository(QuestionWithIntOwner.self, in: folder.configuration(), name: "Question")
        await #expect {
            _ = try await changed.loadAll()
        } throws: { error in
            if case .schemaMismatch(type: "Question", property: "owner", _) = error as? RepositoryError { return true }
            return false
        }
    }
}

/// The file's latest committed version, read by a fresh instance.
private func versionOfFile(_ configuration: Database.Configuration) throws -> UInt64 {
    var configuration = configuration
    configuration.objectTypes = []
    return try Database(configuration: configuration).core.session.store.engine.latestVersion
}
