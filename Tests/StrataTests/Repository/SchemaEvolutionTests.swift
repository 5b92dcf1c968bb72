import Foundation
import StrataStore
import Testing
@testable import Strata

@Suite("Repository schema evolution")
struct SchemaEvolutionTests {
    /// A file holding two V1 notes, one with a subtitle.
    private func seeded() async throws -> TemporaryFolder {
        let folder = TemporaryFolder()
        let v1 = try Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note")
        try await v1.save(contentsOf: [evoNoteV1("a", subtitle: "sub"), evoNoteV1("b")])
        return folder
    }

    @Test("a new optional property adds a column; existing items read nil, new ones store values")
    func newOptionalProperty() async throws {
        let folder = try await seeded()
        let v2 = try Repository(EvoNoteWithDue.self, in: folder.configuration(), name: "Note")
        let a = try #require(try await v2.find(by: "a"))
        #expect(a == EvoNoteWithDue(id: "a", title: "Title a", body: "Body a", subtitle: "sub", place: EvoNotePlaceV1(city: "City a"), tags: ["t-a"], due: nil))
        var c = a
        c.id = "c"
        c.due = Date(timeIntervalSinceReferenceDate: 100)
        try await v2.save(c)
        #expect(try await v2.items(where: "due == nil", sortedBy: "id").map(\.id) == ["a", "b"])
        #expect(try await v2.find(by: "c")?.due == Date(timeIntervalSinceReferenceDate: 100))
        #expect(try storedNote(folder)?.properties.first { $0.name == "due" }?.isOptional == true)
    }

    @Test("a new property decoded with decodeIfPresent ?? default gives existing items that default, queryable")
    func newPropertyWithDefault() async throws {
        let folder = try await seeded()
        let v2 = try Repository(EvoNoteWithPriority.self, in: folder.configuration(), name: "Note")
        let items = try await v2.loadAll()
        #expect(items.map(\.priority) == [3, 3])
        #expect(items.map(\.status) == ["open", "open"])
        #expect(items.map(\.body) == ["Body a", "Body b"])
        // Properties the file had keep their values, nil included.
        #expect(items.map(\.subtitle) == ["sub", nil])
        // The default is stored, not only decoded: queries see it.
        #expect(try await v2.items(where: "priority == 3 AND status == %@", "open", sortedBy: "id").map(\.id) == ["a", "b"])
        try await v2.save(EvoNoteWithPriority(id: "c", title: "c", body: "c", subtitle: nil, place: EvoNotePlaceV1(city: "x"), tags: [], priority: 9, status: "done"))
        #expect(try await v2.items(where: "priority > 5").map(\.id) == ["c"])
    }

    @Test("a defaulted array property stored as JSON gets the default's JSON text in existing items")
    func newJSONPropertyWithDefault() async throws {
        let folder = try await seeded()
        let v2 = try Repository(EvoNoteWithLabels.self, in: folder.configuration(), name: "Note")
        #expect(try await v2.loadAll().map(\.labels) == [["inbox"], ["inbox"]])
        let database = try Database(configuration: folder.configuration(), queue: nil)
        #expect(database.dynamicObjects("Note").map { $0.value(forKey: "labels") as? String } == [#"["inbox"]"#, #"["inbox"]"#])
    }

    @Test("a removed property drops its column and values; the other properties keep theirs")
    func removedProperty() async throws {
        let folder = try await seeded()
        let v2 = try Repository(EvoNoteWithoutBody.self, in: folder.configuration(), name: "Note")
        #expect(try await v2.loadAll() == [
            EvoNoteWithoutBody(id: "a", title: "Title a", subtitle: "sub", place: EvoNotePlaceV1(city: "City a")),
            EvoNoteWithoutBody(id: "b", title: "Title b", subtitle: nil, place: EvoNotePlaceV1(city: "City b")),
        ])
        let stored = try #require(try storedNote(folder))
        #expect(stored.properties.map(\.name).sorted() == ["id", "place", "subtitle", "title"])
        // Opening with V1 again adds `body` and `tags` back, empty: their old values are gone.
        // `body` is required and the items have no value for it, so that is an error.
        let v1 = try Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note")
        await #expect(throws: RepositoryError.self) { _ = try await v1.count }
    }

    @Test("a property renamed through renamed: keeps its values, also across later changes")
    func renamedProperty() async throws {
        let folder = try await seeded()
        let v2 = try Repository(EvoNoteWithText.self, in: folder.configuration(), name: "Note", renamed: ["body": "text"])
        #expect(try await v2.loadAll().map(\.text) == ["Body a", "Body b"])
        #expect(try await v2.items(where: "text == %@", "Body b").map(\.id) == ["b"])
        #expect(try storedNote(folder)?.properties.contains { $0.name == "body" } == false)
        // The mapping stays in the code; reopening, and a later change, keep the values.
        let again = try Repository(EvoNoteWithText.self, in: folder.configuration(), name: "Note", renamed: ["body": "text"])
        #expect(try await again.find(by: "a")?.text == "Body a")
        let v3 = try Repository(EvoNoteWithTextAndDue.self, in: folder.configuration(), name: "Note", renamed: ["body": "text"])
        #expect(try await v3.loadAll().map(\.text) == ["Body a", "Body b"])
    }

    @Test("without the mapping, a renamed property is a new required one: a typed error, file unchanged")
    func renameWithoutMappingIsAnError() async throws {
        let folder = try await seeded()
        let version = try latestVersion(folder)
        let v2 = try Repository(EvoNoteWithText.self, in: folder.configuration(), name: "Note")
        await #expect {
            _ = try await v2.loadAll()
        } throws: { error in
            if case .schemaMismatch(type: "Note", property: "text", let reason) = error as? RepositoryError { return reason.contains("new and not optional") }
            return false
        }
        #expect(try latestVersion(folder) == version)
        #expect(try await Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note").loadAll() == [evoNoteV1("a", subtitle: "sub"), evoNoteV1("b")])
    }

    @Test("renamed: naming a property the type lacks is an error at init")
    func renameToAnUnknownProperty() throws {
        let folder = TemporaryFolder()
        #expect(throws: RepositoryError.self) {
            _ = try Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note", renamed: ["text": "content"])
        }
    }

    @Test("a nested struct's new optional property adds a column to its embedded type")
    func nestedOptionalProperty() async throws {
        let folder = try await seeded()
        let v2 = try Repository(EvoNoteWithZip.self, in: folder.configuration(), name: "Note")
        let items = try await v2.loadAll()
        #expect(items.map(\.place) == [EvoNotePlaceWithZip(city: "City a", zip: nil), EvoNotePlaceWithZip(city: "City b", zip: nil)])
        var a = items[0]
        a.place.zip = 12
        try await v2.save(a)
        #expect(try await v2.items(where: "place.zip == 12").map(\.id) == ["a"])
    }

    @Test("a nested struct's new required property is a typed error naming the embedded type")
    func nestedRequiredProperty() async throws {
        let folder = try await seeded()
        let v2 = try Repository(EvoNoteWithCountry.self, in: folder.configuration(), name: "Note")
        await #expect {
            _ = try await v2.count
        } throws: { error in
            if case .schemaMismatch(type: "Note_Place", property: "country", _) = error as? RepositoryError { return true }
            return false
        }
    }

    @Test("a property whose values change kind is a typed error naming it, and the file is unchanged")
    func kindChangeIsAnError() async throws {
        let folder = try await seeded()
        let version = try latestVersion(folder)
        let before = try storedNote(folder)
        let v2 = try Repository(EvoNoteWithIntTitle.self, in: folder.configuration(), name: "Note")
        await #expect {
            _ = try await v2.loadAll()
        } throws: { error in
            if case .schemaMismatch(type: "Note", property: "title", let reason) = error as? RepositoryError { return reason.contains("string") && reason.contains("int") }
            return false
        }
        #expect(try latestVersion(folder) == version)
        #expect(try storedNote(folder) == before)
        #expect(try await Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note").find(by: "a") == evoNoteV1("a", subtitle: "sub"))
    }

    @Test("a list whose elements change kind is a typed error naming it")
    func listElementChangeIsAnError() async throws {
        let folder = try await seeded()
        let v2 = try Repository(EvoNoteWithIntTags.self, in: folder.configuration(), name: "Note")
        await #expect {
            _ = try await v2.loadAll()
        } throws: { error in
            if case .schemaMismatch(type: "Note", property: "tags", _) = error as? RepositoryError { return true }
            return false
        }
    }

    @Test("an optional property made required (no default) is a typed error naming it")
    func optionalToRequiredIsAnError() async throws {
        let folder = try await seeded()
        let version = try latestVersion(folder)
        let v2 = try Repository(EvoNoteWithRequiredSubtitle.self, in: folder.configuration(), name: "Note")
        await #expect {
            _ = try await v2.loadAll()
        } throws: { error in
            if case .schemaMismatch(type: "Note", property: "subtitle", let reason) = error as? RepositoryError { return reason.contains("optional") }
            return false
        }
        #expect(try latestVersion(folder) == version)
    }

    @Test("a new required property without a default is a typed error naming it")
    func newRequiredPropertyIsAnError() async throws {
        let folder = try await seeded()
        let v2 = try Repository(EvoNoteWithRequiredRating.self, in: folder.configuration(), name: "Note")
        await #expect {
            _ = try await v2.save(EvoNoteWithRequiredRating(id: "c", title: "", body: "", subtitle: nil, place: EvoNotePlaceV1(city: ""), tags: [], rating: 1))
        } throws: { error in
            if case .schemaMismatch(type: "Note", property: "rating", _) = error as? RepositoryError { return true }
            return false
        }
        #expect(try await Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note").count == 2)
    }

    @Test("a type with no stored items takes any change")
    func emptyTypeTakesAnyChange() async throws {
        let folder = TemporaryFolder()
        let v1 = try Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note")
        try await v1.save(evoNoteV1("a"))
        try await v1.delete("a")
        let v2 = try Repository(EvoNoteWithIntTitle.self, in: folder.configuration(), name: "Note")
        let item = EvoNoteWithIntTitle(id: "x", title: 7, body: "", subtitle: nil, place: EvoNotePlaceV1(city: ""), tags: ["t"])
        try await v2.save(item)
        #expect(try await v2.items(where: "title == 7") == [item])
    }

    @Test("a required property made optional keeps its values")
    func requiredToOptional() async throws {
        let folder = try await seeded()
        let v2 = try Repository(EvoNoteWithOptionalTitle.self, in: folder.configuration(), name: "Note")
        #expect(try await v2.loadAll().map(\.title) == ["Title a", "Title b"])
        var a = try #require(try await v2.find(by: "a"))
        a.title = nil
        try await v2.save(a)
        #expect(try await v2.items(where: "title == nil").map(\.id) == ["a"])
    }

    @Test("an index added or removed in indexes: is built or dropped on open")
    func indexChanges() async throws {
        let folder = try await seeded()
        let indexed = try Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note", indexes: ["title"])
        #expect(try await indexed.items(where: "title == %@", "Title b").map(\.id) == ["b"])
        #expect(try storedNote(folder)?.properties.first { $0.name == "title" }?.isIndexed == true)
        let plain = try Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note")
        #expect(try await plain.count == 2)
        #expect(try storedNote(folder)?.properties.first { $0.name == "title" }?.isIndexed == false)
    }

    @Test("changing one type leaves the other types in the file, and their values, as they were")
    func otherTypesUntouched() async throws {
        let folder = try await seeded()
        let tags = try Repository(Tag.self, in: folder.configuration(), indexes: ["name"])
        try await tags.save(contentsOf: [Tag(id: 1, name: "one"), Tag(id: 2, name: "two")])
        let tagSchema = try storedSchema(folder)["Tag"]
        let v2 = try Repository(EvoNoteWithoutBody.self, in: folder.configuration(), name: "Note")
        #expect(try await v2.count == 2)
        #expect(try storedSchema(folder)["Tag"] == tagSchema)
        let reopened = try Repository(Tag.self, in: folder.configuration(), indexes: ["name"])
        #expect(try await reopened.items(where: "name == %@", "two") == [Tag(id: 2, name: "two")])
    }

    @Test("an Object model in the same file keeps its objects and schema when a repository's type changes")
    func objectModelsUntouched() async throws {
        let folder = try await seeded()
        let dogs = try Database(configuration: folder.configuration(objectTypes: [Dog.self]), queue: nil)
        try dogs.write { dogs.add(Dog(value: ["name": "Rex", "age": 3])) }
        let dogSchema = try storedSchema(folder)["Dog"]
        let v2 = try Repository(EvoNoteWithoutBody.self, in: folder.configuration(), name: "Note")
        #expect(try await v2.count == 2)
        #expect(try storedSchema(folder)["Dog"] == dogSchema)
        dogs.refresh()
        #expect(dogs.objects(Dog.self).map(\.name) == ["Rex"])
        try dogs.write { dogs.add(Dog(value: ["name": "Fido", "age": 1])) }
        #expect(dogs.objects(Dog.self).count == 2)
    }

    @Test("removing a nested-struct list deletes its embedded objects with the column")
    func removedEmbeddedListDeletesItsObjects() async throws {
        let folder = TemporaryFolder()
        let v1 = try Repository(EveryKind.self, in: folder.configuration())
        try await v1.save(contentsOf: [EveryKind.sample("a", seed: 1), EveryKind.sample("b", seed: 2)])
        let database = try Database(configuration: folder.configuration(), queue: nil)
        let before = database.dynamicObjects("EveryKind_RepositoryAddress").count
        let smaller = try Repository(EvoEveryKindWithoutHistory.self, in: folder.configuration(), name: "EveryKind")
        #expect(try await smaller.count == 2)
        database.refresh()
        // Before: a's address, two history entries and second address; b's address and two
        // history entries. After: the two addresses.
        #expect(before == 7)
        #expect(database.dynamicObjects("EveryKind_RepositoryAddress").count == 2)
        #expect(try await smaller.find(by: "a")?.address == EveryKind.sample("a", seed: 1).address)
    }

    @Test("two instances opening the changed type at once both follow the file")
    func staleInstanceFollows() async throws {
        let folder = try await seeded()
        let first = try Repository(EvoNoteWithDue.self, in: folder.configuration(), name: "Note")
        let second = try Repository(EvoNoteWithDue.self, in: folder.configuration(), name: "Note")
        // Whichever changes the file, the other finds it changed (or its tables older than
        // the file's, when it opened first) and reads and writes the new columns.
        async let one = first.count
        async let two = second.count
        #expect(try await [one, two] == [2, 2])
        var c = try #require(try await first.find(by: "a"))
        c.id = "c"
        c.due = Date(timeIntervalSinceReferenceDate: 5)
        try await first.save(c)
        #expect(try await second.find(by: "c") == c)
    }
}

/// `EveryKind` without `history` (a list of nested structs).
struct EvoEveryKindWithoutHistory: Codable, Identifiable, Sendable {
    var id: String
    var address: RepositoryAddress
    var place: RepositoryPlace
}

/// The file's stored schema, read by a fresh instance.
private func storedSchema(_ folder: TemporaryFolder) throws -> Schema {
    var configuration = folder.configuration()
    configuration.objectTypes = []
    let database = try Database(configuration: configuration, queue: nil)
    return withExtendedLifetime(database) { database.core.session.store.schema }
}

private func storedNote(_ folder: TemporaryFolder) throws -> ObjectSchema? { try storedSchema(folder)["Note"] }

/// The file's latest committed version, read by a fresh instance.
private func latestVersion(_ folder: TemporaryFolder) throws -> UInt64 {
    var configuration = folder.configuration()
    configuration.objectTypes = []
    // The instance stays alive while the engine is read: the last one to go closes the file.
    let database = try Database(configuration: configuration, queue: nil)
    return withExtendedLifetime(database) { database.core.session.store.engine.latestVersion }
}

@Suite("Store-level schema evolution in an open file")
struct StoreEvolutionTests {
    @Test("a step that fails after it started writing rolls back: the file and the session keep the old schema and values")
    func failureMidwayLeavesTheFileUnchanged() async throws {
        let folder = TemporaryFolder()
        var twins = [evoNoteV1("a"), evoNoteV1("b")]
        twins[1].title = twins[0].title
        try await Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note").save(contentsOf: twins)
        var configuration = folder.configuration()
        configuration.objectTypes = []
        let database = try Database(configuration: configuration, queue: nil)
        let session = database.core.session
        let old = try #require(session.table(named: "Note")?.schema)
        let version = session.store.engine.latestVersion
        // Drops `body`, adds `extra` (filled in for both items), and makes `title` the primary
        // key: the two items share a title, so building its index fails at the end of the step.
        var changed = old
        changed.properties.removeAll { $0.name == "body" }
        changed.properties.append(PropertySchema(name: "extra", kind: .string, isOptional: true))
        for index in changed.properties.indices {
            changed.properties[index].isPrimaryKey = changed.properties[index].name == "title"
        }
        let embedded = try #require(session.table(named: "Note_Place")?.schema)
        #expect {
            _ = try session.evolveTables([changed, embedded], defaults: ["Note": ["extra": .string("filled")]]) { _, _ in }
        } throws: { error in
            if case .duplicatePrimaryKey(type: "Note", _) = error as? StoreError { return true }
            return false
        }
        #expect(session.store.engine.latestVersion == version)
        #expect(session.table(named: "Note")?.schema == old)
        #expect(session.store.schema["Note"] == old)
        #expect(try await Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note").loadAll() == twins)
        // The session is usable for a step that succeeds.
        var added = old
        added.properties.append(PropertySchema(name: "extra", kind: .string, isOptional: true))
        #expect(try session.evolveTables([added, embedded], defaults: ["Note": ["extra": .string("filled")]]) { _, _ in })
        database.refresh()
        #expect(database.dynamicObjects("Note").map { $0.value(forKey: "extra") as? String } == ["filled", "filled"])
    }

    @Test("validation that throws ends the step before anything is written, with its own error")
    func validationErrorIsRethrown() async throws {
        struct Refused: Error {}
        let folder = TemporaryFolder()
        try await Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note").save(evoNoteV1("a"))
        var configuration = folder.configuration()
        configuration.objectTypes = []
        let database = try Database(configuration: configuration, queue: nil)
        let session = database.core.session
        let old = try #require(session.table(named: "Note")?.schema)
        var changed = old
        changed.properties.removeAll { $0.name == "body" }
        var sawCount = -1
        #expect(throws: Refused.self) {
            _ = try session.evolveTables([changed]) { stored, objectCount in
                sawCount = try objectCount("Note")
                #expect(stored["Note"] == old)
                throw Refused()
            }
        }
        #expect(sawCount == 1)
        #expect(session.table(named: "Note")?.schema == old)
    }
}
