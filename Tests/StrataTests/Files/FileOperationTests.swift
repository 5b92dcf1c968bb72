// writeCopy(toFile:), writeCopy(configuration:), schemaVersion(at:), performMigration(for:),
// Configuration.seedFilePath, and ObjectKeyIdentifiable.

import Foundation
import Testing
@testable import Strata

final class Bookmark: Object, ObjectKeyIdentifiable {
    @Persisted(primaryKey: true) var url = ""
    @Persisted var title = ""
}

@Suite struct FileCopyTests {
    let folder = TemporaryFolder()

    private func configuration(_ name: String, schemaVersion: UInt64 = 0, seed: URL? = nil) -> Database.Configuration {
        var configuration = folder.configuration(name, objectTypes: [Bookmark.self])
        configuration.schemaVersion = schemaVersion
        configuration.seedFilePath = seed
        return configuration
    }

    private func titles(_ db: Database) -> [String] { db.objects(Bookmark.self).map(\.title).sorted() }

    @Test func aCopyHoldsTheCommittedDataAndOpensAsADatabase() throws {
        let copy = folder.url.appendingPathComponent("copy.strata")
        do {
            let db = try Database(configuration: configuration("main.strata", schemaVersion: 3))
            try db.write {
                for i in 0..<200 { db.create(Bookmark.self, value: ["url": "https://e/\(i)", "title": "page \(i)"]) }
                db.delete(db.objects(Bookmark.self).where { $0.title.ends(with: "7") })
            }
            db.beginWrite()
            #expect(throws: Database.Error.self) { try db.writeCopy(toFile: copy) }
            db.cancelWrite()
            let encrypted = #expect(throws: Database.Error.self) { try db.writeCopy(toFile: copy, encryptionKey: Data(count: 64)) }
            #expect(encrypted?.code == .invalidInput)
            try db.writeCopy(toFile: copy)
            // The copy is one self-contained file: no commit log or lock file beside it.
            let beside = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasPrefix("copy.strata") }
            #expect(beside == ["copy.strata"])
            let again = #expect(throws: Database.Error.self) { try db.writeCopy(toFile: copy) }
            #expect(again?.code == .fileExists)
            #expect(try Database.schemaVersion(at: copy) == 3)
            // While open here, the version comes from the open file.
            #expect(try Database.schemaVersion(at: folder.url.appendingPathComponent("main.strata")) == 3)
        }
        let opened = try Database(configuration: configuration("copy.strata", schemaVersion: 3))
        #expect(opened.objects(Bookmark.self).count == 180)
        #expect(opened.object(ofType: Bookmark.self, forPrimaryKey: "https://e/7") == nil)
        #expect(opened.object(ofType: Bookmark.self, forPrimaryKey: "https://e/8")?.title == "page 8")
        let missing = #expect(throws: Database.Error.self) { try Database.schemaVersion(at: folder.url.appendingPathComponent("none.strata")) }
        #expect(missing?.code == .fileNotFound)
    }

    @Test func aCopyHoldsTheVersionTheInstanceReads() throws {
        let db = try Database(configuration: configuration("main.strata"))
        try db.write { db.create(Bookmark.self, value: ["url": "https://a", "title": "first"]) }
        let frozen = db.freeze()
        try db.write {
            db.create(Bookmark.self, value: ["url": "https://b", "title": "second"])
            db.object(ofType: Bookmark.self, forPrimaryKey: "https://a")?.title = "first, renamed"
        }
        try frozen.writeCopy(toFile: folder.url.appendingPathComponent("then.strata"))
        try db.writeCopy(toFile: folder.url.appendingPathComponent("now.strata"))
        #expect(titles(try Database(configuration: configuration("then.strata"))) == ["first"])
        #expect(titles(try Database(configuration: configuration("now.strata"))) == ["first, renamed", "second"])
    }

    @Test func aSeedFileIsCopiedOnlyWhenTheDatabaseHasNoFile() throws {
        let seed = folder.url.appendingPathComponent("seed.strata")
        do {
            let db = try Database(configuration: configuration("build.strata"))
            try db.write { db.create(Bookmark.self, value: ["url": "https://seed", "title": "from the seed"]) }
            try db.writeCopy(toFile: seed)
        }
        do {
            let db = try Database(configuration: configuration("app/user.strata", seed: seed))
            #expect(titles(db) == ["from the seed"])
            try db.write { db.create(Bookmark.self, value: ["url": "https://mine", "title": "mine"]) }
        }
        // Opened again: the file is there, so the seed is not copied over it.
        let reopened = try Database(configuration: configuration("app/user.strata", seed: seed))
        #expect(titles(reopened) == ["from the seed", "mine"])
        let noSeed = #expect(throws: Database.Error.self) {
            try Database(configuration: configuration("other.strata", seed: folder.url.appendingPathComponent("absent.strata")))
        }
        #expect(noSeed?.code == .fileNotFound)
    }

    @Test func objectKeyIdentifiableGivesAStableIdentity() throws {
        let unmanaged = Bookmark()
        let unmanagedID = unmanaged.id
        #expect(unmanagedID == Bookmark.ID(UInt(bitPattern: Unmanaged.passUnretained(unmanaged).toOpaque())))
        let db = try Database(configuration: configuration("ids.strata"))
        let (a, b) = try db.write {
            (db.create(Bookmark.self, value: ["url": "a", "title": "A"]), db.create(Bookmark.self, value: ["url": "b", "title": "B"]))
        }
        #expect(a.id != b.id)
        #expect(db.object(ofType: Bookmark.self, forPrimaryKey: "a")?.id == a.id)
        let frozen = a.freeze()
        #expect(frozen.id == a.id && frozen.thaw()?.id == a.id)
        #expect(Set(db.objects(Bookmark.self).map(\.id)).count == 2)
    }
}

/// Counts a migration block's calls, across the `@Sendable` block.
final class MigrationCalls: @unchecked Sendable {
    // @unchecked: the block runs on the opening thread, which is the test's.
    var oldVersions: [UInt64] = []
}

@Suite struct PerformMigrationTests {
    let folder = TemporaryFolder()

    private func configuration(_ version: UInt64, _ calls: MigrationCalls? = nil) -> Database.Configuration {
        var configuration = folder.configuration("books.strata", objectTypes: [Bookmark.self])
        configuration.schemaVersion = version
        configuration.migrationBlock = { migration, old in
            calls?.oldVersions.append(old)
            migration.enumerateObjects(ofType: "Bookmark") { _, new in
                new?["title"] = ((new?["title"] as? String) ?? "") + " (v\(version))"
            }
        }
        return configuration
    }

    @Test func theMigrationRunsOnceWithoutAnInstanceStayingOpen() throws {
        do {
            let db = try Database(configuration: configuration(1))
            try db.write { db.create(Bookmark.self, value: ["url": "https://a", "title": "A"]) }
        }
        let calls = MigrationCalls()
        try Database.performMigration(for: configuration(2, calls))
        #expect(calls.oldVersions == [1])
        #expect(!StoreHandle.isOpen(configuration(2)), "nothing stays open")
        #expect(try Database.schemaVersion(at: folder.url.appendingPathComponent("books.strata")) == 2)
        // Opening afterwards finds the file migrated: the block does not run again.
        let db = try Database(configuration: configuration(2, calls))
        #expect(calls.oldVersions == [1])
        #expect(db.objects(Bookmark.self).first?.title == "A (v2)")
        // While the file is open here, migrating is refused.
        let open = #expect(throws: Database.Error.self) { try Database.performMigration(for: configuration(3, calls)) }
        #expect(open?.code == .alreadyOpen)
        #expect(calls.oldVersions == [1])
    }

    @Test func aLowerVersionAndAnInMemoryConfigurationAreErrors() throws {
        do {
            let db = try Database(configuration: configuration(4))
            try db.write { db.create(Bookmark.self, value: ["url": "https://a", "title": "A"]) }
        }
        let lower = #expect(throws: Database.Error.self) { try Database.performMigration(for: configuration(3)) }
        #expect(lower?.code == .schemaMismatch)
        var memory = Database.Configuration(inMemoryIdentifier: "perform-migration", objectTypes: [Bookmark.self])
        memory.schemaVersion = 1
        let inMemory = #expect(throws: Database.Error.self) { try Database.performMigration(for: memory) }
        #expect(inMemory?.code == .invalidInput)
        // A configuration for a file that does not exist yet creates it, as opening would.
        var fresh = folder.configuration("fresh.strata", objectTypes: [Bookmark.self])
        fresh.schemaVersion = 5
        try Database.performMigration(for: fresh)
        #expect(try Database.schemaVersion(at: folder.url.appendingPathComponent("fresh.strata")) == 5)
    }

    @Test func aCopyGoesToTheConfigurationsFile() throws {
        let db = try Database(configuration: configuration(1))
        try db.write { db.create(Bookmark.self, value: ["url": "https://a", "title": "A"]) }
        let target = folder.configuration("copied.strata", objectTypes: [Bookmark.self])
        try db.writeCopy(configuration: target)
        let again = #expect(throws: Database.Error.self) { try db.writeCopy(configuration: target) }
        #expect(again?.code == .fileExists)
        let memory = Database.Configuration(inMemoryIdentifier: "copy-target", objectTypes: [Bookmark.self])
        let inMemory = #expect(throws: Database.Error.self) { try db.writeCopy(configuration: memory) }
        #expect(inMemory?.code == .invalidInput)
        var opened = target
        opened.schemaVersion = 1
        let copy = try Database(configuration: opened)
        #expect(copy.objects(Bookmark.self).map(\.title) == ["A"])
    }
}

/// Counts calls and what they were given, across the `@Sendable` decision block.
final class CompactionDecisions: @unchecked Sendable {
    // @unchecked: the block runs on the opening thread, which is the test's.
    var calls: [(total: Int, used: Int)] = []
}

@Suite struct CompactOnLaunchTests {
    let folder = TemporaryFolder()

    private func configuration(compact: (@Sendable (Int, Int) -> Bool)? = nil) -> Database.Configuration {
        var configuration = folder.configuration("grown.strata", objectTypes: [Bookmark.self])
        configuration.shouldCompactOnLaunch = compact
        return configuration
    }

    /// 3,000 bookmarks with long titles, then all but 29 deleted: most of the file is free.
    private func grow() throws {
        let db = try Database(configuration: configuration())
        try db.write {
            for i in 0..<3_000 {
                db.create(Bookmark.self, value: ["url": "https://e/\(i)", "title": String(repeating: "t\(i % 10)", count: 200)])
            }
        }
        try db.write { db.delete(db.objects(Bookmark.self).where { !$0.url.ends(with: "00") }) }
    }

    private var fileSize: Int {
        ((try? FileManager.default.attributesOfItem(atPath: folder.url.appendingPathComponent("grown.strata").path))?[.size] as? Int) ?? -1
    }

    @Test func theBlockDecidesAndCompactionKeepsTheData() throws {
        try grow()
        let grown = fileSize
        let decisions = CompactionDecisions()
        do {
            // Declined: nothing changes.
            let db = try Database(configuration: configuration { total, used in decisions.calls.append((total, used)); return false })
            #expect(db.objects(Bookmark.self).count == 29)
        }
        #expect(fileSize == grown)
        #expect(decisions.calls.count == 1)
        if let call = decisions.calls.first {
            #expect(call.total == grown)
            #expect(call.used > 0 && call.used < call.total / 4, "\(call)")
        }
        do {
            let db = try Database(configuration: configuration { total, used in decisions.calls.append((total, used)); return used < total / 2 })
            #expect(db.objects(Bookmark.self).count == 29)
            #expect(db.object(ofType: Bookmark.self, forPrimaryKey: "https://e/2900")?.title.hasPrefix("t0t0") == true)
            try db.write { db.create(Bookmark.self, value: ["url": "https://new", "title": "after"]) }
        }
        #expect(decisions.calls.count == 2)
        #expect(fileSize < grown / 4, "\(fileSize) bytes after compaction, \(grown) before")
        let reopened = try Database(configuration: configuration())
        #expect(reopened.objects(Bookmark.self).count == 30)
    }

    @Test func notCalledWhileTheFileIsOpenAndNotForReadOnly() throws {
        try grow()
        let decisions = CompactionDecisions()
        let open = try Database(configuration: configuration())
        // Another configuration of the same file while it is open here: the file is in use.
        var other = configuration { _, _ in decisions.calls.append((0, 0)); return true }
        other.schemaVersion = 0
        _ = try Database(configuration: other)
        #expect(decisions.calls.isEmpty)
        #expect(open.objects(Bookmark.self).count == 29)
        var readOnly = configuration { _, _ in true }
        readOnly.readOnly = true
        let refused = #expect(throws: Database.Error.self) { try Database(configuration: readOnly) }
        #expect(refused?.code == .invalidInput)
    }
}
