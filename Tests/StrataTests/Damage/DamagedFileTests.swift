// A damaged file gets a typed error from every entry point that can throw; a read that cannot
// throw stops the process once, recording the damage, and the next open throws instead of
// stopping again; `verifyOnOpen` finds damage at open.

import Foundation
import Strata
import Testing

/// One test at a time: salvage opens its source with the engine's default reservation of 1 TiB
/// of address space, and under the thread sanitizer two at once exhaust what a process has.
@Suite(.serialized, .offThePool) struct DamagedFileTests {
    /// A database of `count` records whose tree `suffix` (of DamagedRecord) has its page at
    /// `position` (from the tree's pages in ascending order; -1: the last) damaged.
    func damagedDatabase(_ folder: TemporaryFolder, count: Int = 1_500, tree suffix: String, position: Int = -1)
        throws -> (configuration: Database.Configuration, expected: [Int: DamageLab.Expected], page: UInt64) {
        let configuration = DamageLab.configuration(folder)
        let expected = try DamageLab.populate(configuration, count: count)
        let name = try DamageLab.treeName("DamagedRecord", suffix, in: configuration)
        let (pageSize, trees) = try DamageLab.trees(of: configuration.fileURL!.path)
        let pages = try #require(trees.first { $0.key == name || (suffix == "i" && $0.key.hasPrefix(name)) }?.value)
        #expect(pages.count > 1, "the tree \(name) should span several pages")
        let page = pages[position < 0 ? pages.count + position : position]
        try DamageLab.damage(page: page, of: configuration.fileURL!.path, pageSize: pageSize)
        return (configuration, expected, page)
    }

    @Test func openingAFileWithADamagedCatalogThrowsATypedErrorNamingThePageAndSalvage() throws {
        let folder = TemporaryFolder()
        let configuration = DamageLab.configuration(folder)
        try DamageLab.populate(configuration, count: 50)
        let (pageSize, trees) = try DamageLab.trees(of: configuration.fileURL!.path)
        let catalog = try #require(trees["catalog"]?.first)
        try DamageLab.damage(page: catalog, of: configuration.fileURL!.path, pageSize: pageSize)
        do {
            _ = try Database(configuration: configuration)
            Issue.record("a file with a damaged catalog opened")
        } catch let error as Database.Error {
            #expect(error.code == .invalidDatabase)
            #expect(error.message.contains("page \(catalog)"), "\(error)")
            #expect(error.message.contains("strata salvage"), "\(error)")
            #expect(error.path == configuration.fileURL!.path)
        }
    }

    @Test func verifyOnOpenFailsTheOpenOfAFileWithADamagedObjectPage() throws {
        let folder = TemporaryFolder()
        var (configuration, _, page) = try damagedDatabase(folder, tree: "c")
        // The open reads no object, so without the check the damage is not seen yet.
        do { _ = try Database(configuration: configuration) }
        configuration.verifyOnOpen = true
        do {
            _ = try Database(configuration: configuration)
            Issue.record("verifyOnOpen opened a damaged file")
        } catch let error as Database.Error {
            #expect(error.code == .invalidDatabase)
            #expect(error.message.contains("page \(page)"), "\(error)")
        }
        // A healthy file opens with the check.
        let healthy = DamageLab.configuration(folder, "healthy.strata")
        try DamageLab.populate(healthy, count: 200)
        var checked = healthy
        checked.verifyOnOpen = true
        let db = try Database(configuration: checked)
        #expect(db.objects(DamagedRecord.self).count == 200)
    }

    @MainActor
    @Test func actorOpensThrowTheTypedErrorToo() async throws {
        let folder = TemporaryFolder()
        var (configuration, _, page) = try damagedDatabase(folder, tree: "c")
        configuration.verifyOnOpen = true
        for open in [0, 1] {
            do {
                _ = open == 0 ? try await Database(configuration: configuration) : try await Database.open(configuration: configuration)
                Issue.record("an actor open of a damaged file with verifyOnOpen succeeded")
            } catch let error as Database.Error {
                #expect(error.code == .invalidDatabase)
                #expect(error.message.contains("page \(page)"), "\(error)")
            }
        }
    }

    @Test func aSetterThatMeetsDamageMakesWriteThrowAndRollsBack() throws {
        let folder = TemporaryFolder()
        // The index of `tag` is damaged: reads of the objects work, changing a tag does not.
        let (configuration, expected, _) = try damagedDatabase(folder, tree: "i", position: 0)
        let db = try Database(configuration: configuration)
        let records = db.objects(DamagedRecord.self).sorted(byKeyPath: "id")
        let first = try #require(records.first)
        let second = records[1]
        do {
            try db.write {
                second.payload = "changed before"
                for record in records { record.tag = "changed" }
            }
            Issue.record("a write that met damage committed")
        } catch let error as Database.Error {
            #expect(error.code == .invalidDatabase)
            #expect(error.message.contains("salvage"), "\(error)")
        }
        #expect(!db.isInWriteTransaction)
        #expect(first.tag == expected[0]!.tag)
        #expect(second.payload == expected[1]!.payload, "the write was not rolled back")
        // The same through beginWrite/commitWrite; cancelWrite forgets the damage.
        db.beginWrite()
        for record in records { record.tag = "changed" }
        expectDamage { try db.commitWrite() }
        #expect(!db.isInWriteTransaction)
        db.beginWrite()
        for record in records { record.tag = "changed" }
        db.cancelWrite()
        try db.write { second.payload = "fine" }
        #expect(second.payload == "fine")
    }

    @MainActor
    @Test func asyncWriteThrowsForDamageMetBySetters() async throws {
        let folder = TemporaryFolder()
        let (configuration, expected, _) = try damagedDatabase(folder, tree: "i", position: 0)
        let db = try await Database(configuration: configuration)
        let records = db.objects(DamagedRecord.self)
        do {
            try await db.asyncWrite { for record in records { record.tag = "changed" } }
            Issue.record("an async write that met damage committed")
        } catch let error as Database.Error {
            #expect(error.code == .invalidDatabase, "\(error)")
        }
        #expect(!db.isInWriteTransaction)
        #expect(db.object(ofType: DamagedRecord.self, forPrimaryKey: 5)?.tag == expected[5]!.tag)
    }

    /// The child reads through an accessor that cannot throw: every record's properties, a
    /// look-up by primary key of each, or a query's count.
    @Test(arguments: ["read-damaged", "lookup-damaged", "query-damaged"])
    func aReadThatStopsOnDamageMakesTheNextOpenThrowInstead(_ read: String) async throws {
        let folder = TemporaryFolder()
        let (configuration, expected, page) = try damagedDatabase(folder, tree: "c")
        let path = configuration.fileURL!.path
        // Reads cannot throw, so the child stops.
        let run = try await MisuseChild.run(read, in: folder.url)
        #expect(run.output.contains("misusing"), "the child stopped before reading; stderr: \(run.errors)")
        #expect(run.signalled, "expected the read to stop the child; status \(run.status), stdout: \(run.output), stderr: \(run.errors)")
        #expect(run.errors.contains("Strata could not access 'DamagedRecord'"), "stderr: \(run.errors)")
        #expect(run.errors.contains("the next open checks the file and throws"), "stderr: \(run.errors)")
        #expect(FileManager.default.fileExists(atPath: path + "-damaged"))
        try Self.nextOpenThrowsAndSalvageCopies(configuration, expected: expected.count, page: page)
    }

    /// The next open, here, throws the typed error instead of stopping at the same page; salvage
    /// copies what can be read; deleting the files removes the marker too. (A thread-confined
    /// open, so not in the async test itself.)
    private static func nextOpenThrowsAndSalvageCopies(_ configuration: Database.Configuration, expected: Int, page: UInt64) throws {
        let path = configuration.fileURL!.path
        for _ in 0..<2 {
            do {
                _ = try Database(configuration: configuration)
                Issue.record("the open after the stop did not throw")
            } catch let error as Database.Error {
                #expect(error.code == .invalidDatabase)
                #expect(error.message.contains("page \(page)"), "\(error)")
                #expect(error.message.contains("A process stopped on this damage earlier"), "\(error)")
            }
        }
        let salvaged = configuration.fileURL!.deletingLastPathComponent().appendingPathComponent("salvaged.strata")
        let report = try Database.salvage(from: configuration.fileURL!, to: salvaged)
        let records = try #require(report.types.first { $0.name == "DamagedRecord" })
        #expect(records.lostObjects > 0 && records.copiedObjects > 0 && records.copiedObjects + records.lostObjects == expected, "\(report)")
        #expect(try Database.deleteFiles(for: configuration))
        #expect(!FileManager.default.fileExists(atPath: path + "-damaged"))
    }

    @Test func writeCopyAndCheckpointOfADamagedFileThrowTypedErrorsNamingTheSource() throws {
        let folder = TemporaryFolder()
        let (configuration, _, page) = try damagedDatabase(folder, tree: "c")
        let db = try Database(configuration: configuration)
        let copy = folder.url.appendingPathComponent("copy.strata")
        do {
            try db.writeCopy(toFile: copy)
            Issue.record("a copy of a damaged file was written")
        } catch let error as Database.Error {
            #expect(error.code == .invalidDatabase)
            #expect(error.path == configuration.fileURL!.path, "\(error)")
            #expect(error.message.contains("page \(page)"), "\(error)")
        }
        try db.checkpoint()  // nothing to flush: the damage is not read
    }

    @Test func aMarkerBesideAHealthyFileIsCheckedAndRemoved() throws {
        let folder = TemporaryFolder()
        let configuration = DamageLab.configuration(folder)
        try DamageLab.populate(configuration, count: 100)
        let marker = configuration.fileURL!.path + "-damaged"
        try Data("Strata found this database damaged and stopped the process.\nread failed: EIO\n".utf8).write(to: URL(fileURLWithPath: marker))
        let db = try Database(configuration: configuration)
        #expect(db.objects(DamagedRecord.self).count == 100)
        #expect(!FileManager.default.fileExists(atPath: marker), "a healthy file keeps its marker")
    }
}

/// Runs `body` and checks that it threw `Database.Error` with code `.invalidDatabase`.
func expectDamage(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        try body()
        Issue.record("no error was thrown", sourceLocation: sourceLocation)
    } catch let error as Database.Error {
        #expect(error.code == .invalidDatabase, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("not a Database.Error: \(error)", sourceLocation: sourceLocation)
    }
}
