import Foundation
import Testing
@testable import Strata
import StrataTestWorkloads

/// `Database.checkpoint()`: after it, the database file alone (without its `-log`) opens at the
/// newest version; before it, small durable writes live in the commit log until Strata
/// checkpoints on its own.
@Suite struct CheckpointTests {
    /// A copy of the database file alone, as a backup that forgot the `-log` file would be.
    private static func copyOfTheFileAlone(_ configuration: Database.Configuration, in folder: TemporaryFolder,
                                           named name: String) throws -> Database.Configuration {
        let copy = folder.configuration(name, objectTypes: [GuessedItem.self])
        try FileManager.default.copyItem(atPath: configuration.path, toPath: copy.path)
        return copy
    }

    private static func add(_ db: Database, _ id: Int) throws {
        try db.write {
            let item = GuessedItem()
            item.id = id
            item.value = id * 7
            db.add(item)
        }
    }

    @Test func aCheckpointedFileOpensAloneAtTheNewestVersion() throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration(objectTypes: [GuessedItem.self])
        let db = try Database(configuration: configuration)
        for id in 0..<5 { try Self.add(db, id) }

        // Small writes are logged: the file alone opens at an older version.
        let unsynced = try Self.copyOfTheFileAlone(configuration, in: folder, named: "before.strata")
        do {
            let copy = try Database(configuration: unsynced)
            #expect(copy.objects(GuessedItem.self).count < 5)
        }

        try db.checkpoint()
        let checkpointed = try Self.copyOfTheFileAlone(configuration, in: folder, named: "after.strata")
        do {
            let copy = try Database(configuration: checkpointed)
            #expect(copy.objects(GuessedItem.self).count == 5)
            for id in 0..<5 { #expect(copy.object(ofType: GuessedItem.self, forPrimaryKey: id)?.value == id * 7) }
        }

        // A second checkpoint with nothing logged since does nothing, and writing goes on.
        try db.checkpoint()
        try Self.add(db, 5)
        #expect(db.objects(GuessedItem.self).count == 6)
        try db.checkpoint()
        let later = try Self.copyOfTheFileAlone(configuration, in: folder, named: "later.strata")
        let copy = try Database(configuration: later)
        #expect(copy.object(ofType: GuessedItem.self, forPrimaryKey: 5)?.value == 35)
    }

    @Test func databasesWithoutACommitLogHaveNothingToCheckpoint() throws {
        var inMemory = Database.Configuration(inMemoryIdentifier: "checkpoint-\(UUID().uuidString)", objectTypes: [GuessedItem.self])
        inMemory.maximumFileSize = 1 << 30
        let memory = try Database(configuration: inMemory)
        try Self.add(memory, 1)
        try memory.checkpoint()
        #expect(memory.objects(GuessedItem.self).count == 1)

        let folder = TemporaryFolder()
        var configuration = folder.configuration(objectTypes: [GuessedItem.self])
        do {
            let db = try Database(configuration: configuration)
            try Self.add(db, 1)
        }
        configuration.readOnly = true
        let readOnly = try Database(configuration: configuration)
        try readOnly.checkpoint()
        #expect(readOnly.objects(GuessedItem.self).count == 1)
    }
}
