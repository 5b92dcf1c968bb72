import Foundation
import Testing
import StrataRealmCompat

/// What the seed examples printed, for the tests to check.
enum SeedLog {
    @MainActor static var lines: [String] = []
    @MainActor static func record(_ line: String) { lines.append(line) }
}

/// The seed examples share the default configuration, so they run one at a time, each on a
/// fresh file.
@Suite(.serialized) struct SeedTests {
    let folder: URL

    init() {
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-seeds-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("default.strata"))
        configuration.maximumFileSize = 1 << 30  // leaves address space for the thread sanitizer
        // The seeds' own model class: without a list, the schema is every class this process
        // has used so far, which other suites running meanwhile change between two opens.
        configuration.objectTypes = [Todo.self]
        Realm.Configuration.defaultConfiguration = configuration
    }

    @Test func realmActorCreatesReadsUpdatesAndDeletes() async throws {
        let actor = try await RealmActor()
        try await actor.createTodo(name: "Arrive safely in Bree", owner: "Merry", status: "In Progress")
        #expect(await actor.getTodoOwner(forTodoNamed: "Arrive safely in Bree") == "Merry")
        let todo = await actor.getTodoAsStruct(forTodoNamed: "Arrive safely in Bree")
        #expect(todo.status == "In Progress")
        try await actor.updateTodo(_id: todo.id, name: todo.name, owner: "Pippin", status: "Complete")
        let updated = await actor.getTodoAsStruct(forTodoNamed: "Arrive safely in Bree")
        #expect(updated.id == todo.id && updated.owner == "Pippin" && updated.status == "Complete")
        try await createObject(in: actor)
        #expect(await actor.count == 2)
        try await actor.deleteTodo(id: todo.id)
        #expect(await actor.count == 1)
        await actor.close()
        // The data is in the file: a fresh instance on another actor sees it.
        let other = try await RealmActor()
        #expect(await other.getTodoOwner(forTodoNamed: "Keep it secret") == "Frodo")
    }

    @Test func globalActorWritesAndMainActorReads() async throws {
        try await backgroundThreadFunction()
        let count = try await MainActor.run { try Realm().objects(Todo.self).count }
        #expect(count == 1)
    }

    @Test @MainActor func mainActorExamples() async throws {
        SeedLog.lines = []
        try await runMainActorExamples()
        #expect(SeedLog.lines == [
            "owner: Gandalf",
            "main actor sees: Pippin",
            "struct: Leave the ring on the mantle / Bilbo",
        ])
        let realm = try await Realm()
        #expect(realm.objects(Todo.self).count == 3)
        #expect(realm.objects(Todo.self).where { $0.owner == "Pippin" }.first?.name == "Pledge fealty and service to Gondor")
    }
}

extension SeedTests {
    @Test func observeCollectionOnAnotherActor() async throws {
        _ = SeedLog.anyActor.take()
        try await observeCollectionOnActor()
        let lines = SeedLog.anyActor.take()
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("initial") == true)
        #expect(lines.last == "An object was deleted: [0]")
    }

    @Test func observeObjectOnAnotherActor() async throws {
        _ = SeedLog.anyActor.take()
        try await observeObjectOnActor()
        let lines = SeedLog.anyActor.take()
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("Property 'name' of object") == true)
        #expect(lines.first?.hasSuffix("changed to 'Scour the Shire and beyond'") == true)
        #expect(lines.last == "The object was deleted.")
    }
}
