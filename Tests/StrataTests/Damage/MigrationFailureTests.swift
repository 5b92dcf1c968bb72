// A store error met inside a migration block (which cannot throw) fails the open with a typed
// error and leaves the file as it was; damage met there is recorded so that the next open
// throws too instead of stopping.

import Foundation
import Strata
import Synchronization
import Testing

@Suite struct MigrationFailureTests {
    /// A configuration one schema version up whose block rewrites every record's tag (reading
    /// every object page on the way) and counts how many objects it saw.
    private static func migrating(_ configuration: Database.Configuration, seen: SeenCounter) -> Database.Configuration {
        var next = configuration
        next.schemaVersion = 1
        next.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "DamagedRecord") { old, new in
                seen.count += 1
                new?["tag"] = ((old?["tag"] as? String) ?? "?") + "!"
                new?["payload"] = old?["payload"] as? String
            }
        }
        return next
    }

    @Test func damageReadByAMigrationFailsTheOpenAndTheNextOpenThrowsToo() throws {
        let folder = TemporaryFolder()
        let configuration = DamageLab.configuration(folder)
        try DamageLab.populate(configuration, count: 1_500)
        let name = try DamageLab.treeName("DamagedRecord", "c", in: configuration)
        let path = configuration.fileURL!.path
        let (pageSize, trees) = try DamageLab.trees(of: path)
        let pages = try #require(trees[name])
        let page = try #require(pages.last)
        try DamageLab.damage(page: page, of: path, pageSize: pageSize)

        let seen = SeenCounter()
        do {
            _ = try Database(configuration: Self.migrating(configuration, seen: seen))
            Issue.record("a migration that read a damaged page let the open succeed")
        } catch let error as Database.Error {
            #expect(error.code == .invalidDatabase, "\(error)")
            #expect(error.message.contains("page \(page)"), "\(error)")
        }
        #expect(seen.count < 1_500, "the block stopped being called after the damage")
        #expect(FileManager.default.fileExists(atPath: path + "-damaged"), "the damage is recorded beside the file")
        // The migration rolled back: the file still has schema version 0.
        #expect(try Database.schemaVersion(at: configuration.fileURL!) == 0)
        // The next open checks the file (the marker) and throws before migrating again.
        let again = SeenCounter()
        do {
            _ = try Database(configuration: Self.migrating(configuration, seen: again))
            Issue.record("the next open of a damaged file succeeded")
        } catch let error as Database.Error {
            #expect(error.code == .invalidDatabase, "\(error)")
        }
        #expect(again.count == 0, "the check at open throws before the migration runs")
    }

    @Test func aStoreErrorInTheBlockFailsTheOpenAndRollsBackWhatTheBlockDid() throws {
        let folder = TemporaryFolder()
        let configuration = DamageLab.configuration(folder)
        try DamageLab.populate(configuration, count: 50)
        var next = configuration
        next.schemaVersion = 1
        let seen = SeenCounter()
        next.migrationBlock = { migration, _ in
            migration.create("DamagedRecord", value: ["id": 1_000, "payload": "created"])
            migration.enumerateObjects(ofType: "DamagedRecord") { _, new in new?["tag"] = "changed" }
            // The store refuses this (the file has no such property): the first error.
            migration.renameProperty(onType: "DamagedRecord", from: "noSuchProperty", to: "tag")
            // Operations after the failure do nothing and stop nothing.
            migration.enumerateObjects(ofType: "DamagedRecord") { _, _ in seen.count += 1 }
            #expect(migration.create("DamagedRecord", value: ["id": 2_000])["payload"] == nil)
            migration.deleteData(forType: "DamagedRecord")
        }
        do {
            _ = try Database(configuration: next)
            Issue.record("a migration whose store operation failed let the open succeed")
        } catch let error as Database.Error {
            #expect(error.code != .invalidDatabase, "a refused rename is not damage: \(error)")
            #expect(error.message.contains("noSuchProperty"), "\(error)")
        }
        #expect(seen.count == 0)
        #expect(!FileManager.default.fileExists(atPath: configuration.fileURL!.path + "-damaged"))
        #expect(try Database.schemaVersion(at: configuration.fileURL!) == 0)
        // Everything the block did rolled back: the original records, unchanged.
        let db = try Database(configuration: configuration)
        #expect(db.objects(DamagedRecord.self).count == 50)
        #expect(db.objects(DamagedRecord.self).filter("tag == 'changed'").isEmpty)
        #expect(db.object(ofType: DamagedRecord.self, forPrimaryKey: 1_000) == nil)
    }
}

/// How many objects a migration block saw (the block is a Sendable closure).
private final class SeenCounter: Sendable {
    private let value = Mutex(0)
    var count: Int {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
