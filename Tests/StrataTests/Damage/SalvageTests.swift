// Database.salvage(from:to:): every object that can still be read goes into a new file, equal to
// what was written; what cannot is reported; nothing crashes, whatever page is damaged.

import Foundation
import Strata
import Testing

final class SalvageShelf: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var anything: MixedValue
    @Persisted var history: List<MixedValue>
    @Persisted var byLabel: Map<String, SalvageBox?>
    @Persisted var tags: MutableSet<String>
    @Persisted var boxes: List<SalvageBox>
}

final class SalvageBox: Object {
    @Persisted var number = 0
}

@Suite struct SalvageTests {
    /// Checks the salvaged file against what was written: it opens with a full check, every
    /// record in it equals the original (a link or note may be cleared, when its object was
    /// not copied, never changed), and the report's count matches. Returns the ids copied.
    @discardableResult
    func checkSalvaged(_ destination: URL, _ report: Database.SalvageReport, expected: [Int: DamageLab.Expected],
                       schemaVersion: UInt64 = 0, sourceLocation: SourceLocation = #_sourceLocation) throws -> Set<Int> {
        var configuration = Database.Configuration(fileURL: destination, schemaVersion: schemaVersion,
                                                   objectTypes: [DamagedRecord.self, DamagedNote.self])
        configuration.maximumFileSize = 1 << 30
        configuration.verifyOnOpen = true
        let db = try Database(configuration: configuration)
        var ids = Set<Int>()
        for record in db.objects(DamagedRecord.self) {
            ids.insert(record.id)
            let original = try #require(expected[record.id], "an object that was never written: \(record.id)", sourceLocation: sourceLocation)
            var found = DamageLab.read(record)
            #expect(found.friend == nil || found.friend == original.friend, "record \(record.id)", sourceLocation: sourceLocation)
            #expect(found.note == nil || found.note == original.note, "record \(record.id)", sourceLocation: sourceLocation)
            found.friend = found.friend == nil ? nil : original.friend
            found.note = found.note == nil ? nil : original.note
            var comparable = original
            if found.friend == nil { comparable.friend = nil }
            if found.note == nil { comparable.note = nil }
            #expect(found == comparable, "record \(record.id)", sourceLocation: sourceLocation)
            // A friend that was copied is linked.
            if let friend = original.friend, db.object(ofType: DamagedRecord.self, forPrimaryKey: friend) != nil {
                #expect(record.friend?.id == friend, "record \(record.id) lost its link to \(friend)", sourceLocation: sourceLocation)
            }
        }
        let records = try #require(report.types.first { $0.name == "DamagedRecord" }, sourceLocation: sourceLocation)
        #expect(records.copiedObjects == ids.count, "\(report)", sourceLocation: sourceLocation)
        #expect(records.copiedObjects + records.lostObjects <= expected.count, "\(report)", sourceLocation: sourceLocation)
        let notes = report.types.first { $0.name == "DamagedNote" }?.copiedObjects ?? 0
        #expect(notes == db.objects(DamagedRecord.self).filter { $0.note != nil }.count, "\(report)", sourceLocation: sourceLocation)
        return ids
    }

    @Test func aHealthyFileIsCopiedCompletelyWithItsSchemaVersion() throws {
        let folder = TemporaryFolder()
        var configuration = DamageLab.configuration(folder)
        configuration.schemaVersion = 3
        let expected = try DamageLab.populate(configuration, count: 800)
        let destination = folder.url.appendingPathComponent("copy.strata")
        let report = try Database.salvage(from: configuration.fileURL!, to: destination)
        #expect(report.isComplete, "\(report)")
        #expect(report.unreadableParts.isEmpty && report.unreachableTrees.isEmpty, "\(report)")
        #expect(report.schemaVersion == 3)
        #expect(report.copiedObjects == 800 + 400)  // records and their notes
        let ids = try checkSalvaged(destination, report, expected: expected, schemaVersion: 3)
        #expect(ids == Set(0..<800))
        // Every link and note came along.
        let db = try Database(configuration: Database.Configuration(fileURL: destination, schemaVersion: 3,
                                                                    objectTypes: [DamagedRecord.self, DamagedNote.self]))
        for record in db.objects(DamagedRecord.self) { #expect(DamageLab.read(record) == expected[record.id]) }
        // The source was not modified: it still opens and holds everything.
        let source = try Database(configuration: configuration)
        #expect(source.objects(DamagedRecord.self).count == 800)
    }

    @Test func aFileWithSeveralDamagedPagesCopiesEveryReadableObjectAndReportsTheRest() throws {
        let folder = TemporaryFolder()
        let configuration = DamageLab.configuration(folder)
        let expected = try DamageLab.populate(configuration, count: 2_000)
        let path = configuration.fileURL!.path
        let clusters = try DamageLab.treeName("DamagedRecord", "c", in: configuration)
        let lists = try DamageLab.treeName("DamagedRecord", "l", in: configuration)
        let (pageSize, trees) = try DamageLab.trees(of: path)
        // Three pages of the objects' tree and one of the lists' tree, none of them a root.
        var generator = DamageLab.Generator(seed: 5)
        var objectPages = try #require(trees[clusters]).dropFirst().map { $0 }
        #expect(objectPages.count >= 6)
        var damaged: [UInt64] = []
        for _ in 0..<3 { damaged.append(objectPages.remove(at: generator.next(objectPages.count))) }
        let listPages = try #require(trees[lists]).dropFirst().map { $0 }
        if !listPages.isEmpty { damaged.append(listPages[generator.next(listPages.count)]) }
        for page in damaged { try DamageLab.damage(page: page, of: path, pageSize: pageSize, offset: 40 + generator.next(pageSize - 48)) }

        let destination = folder.url.appendingPathComponent("salvaged.strata")
        let report = try Database.salvage(from: configuration.fileURL!, to: destination)
        let records = try #require(report.types.first { $0.name == "DamagedRecord" })
        #expect(records.lostObjects > 0, "\(report)")
        #expect(records.copiedObjects + records.lostObjects == 2_000, "\(report)")
        #expect(!report.isComplete)
        #expect(Set(report.unreadableParts.map(\.page)).isSuperset(of: damaged), "\(report)")
        let ids = try checkSalvaged(destination, report, expected: expected)
        #expect(ids.count == records.copiedObjects)
        #expect(report.description.contains("DamagedRecord: \(records.copiedObjects) copied, \(records.lostObjects) lost"), "\(report)")
    }

    @Test func aSweepDamagingEachPageInTurnNeverCrashesAndCopiesOnlyTrueObjects() throws {
        let folder = TemporaryFolder()
        let configuration = DamageLab.configuration(folder, "small.strata")
        let expected = try DamageLab.populate(configuration, count: 150, seed: 11)
        let path = configuration.fileURL!.path
        let (pageSize, _) = try DamageLab.trees(of: path)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).intValue
        let pageCount = UInt64(size / pageSize)
        #expect(pageCount > 8)
        var generator = DamageLab.Generator(seed: 77)
        var salvaged = 0
        var refused = 0
        for page in 0..<pageCount {
            let copy = folder.url.appendingPathComponent("sweep-\(page).strata")
            try FileManager.default.copyItem(atPath: path, toPath: copy.path)
            try DamageLab.damage(page: page, of: copy.path, pageSize: pageSize, offset: generator.next(pageSize - 16), count: 1 + generator.next(16))
            let destination = folder.url.appendingPathComponent("sweep-\(page)-salvaged.strata")
            do {
                let report = try Database.salvage(from: copy, to: destination)
                try checkSalvaged(destination, report, expected: expected)
                salvaged += 1
            } catch let error as Database.Error {
                // Only a file whose header, meta or schema cannot be read is refused.
                #expect([.invalidDatabase, .unsupportedFileFormatVersion].contains(error.code), "page \(page): \(error)")
                #expect(!FileManager.default.fileExists(atPath: destination.path), "a refused salvage left a file")
                refused += 1
            }
        }
        #expect(salvaged > refused, "salvaged \(salvaged), refused \(refused)")
    }

    @Test func salvageRefusesAnExistingDestinationAnOpenSourceAndForeignFiles() throws {
        let folder = TemporaryFolder()
        let configuration = DamageLab.configuration(folder)
        try DamageLab.populate(configuration, count: 10)
        let existing = folder.url.appendingPathComponent("existing")
        try Data("keep me".utf8).write(to: existing)
        func code(_ body: () throws -> Void) -> Database.Error.Code? {
            do { try body() } catch let error as Database.Error { return error.code } catch { return nil }
            return nil
        }
        #expect(code { _ = try Database.salvage(from: configuration.fileURL!, to: existing) } == .fileExists)
        #expect(try String(contentsOf: existing, encoding: .utf8) == "keep me")
        let missing = folder.url.appendingPathComponent("missing.strata")
        #expect(code { _ = try Database.salvage(from: missing, to: folder.url.appendingPathComponent("a.strata")) } == .fileNotFound)
        do {
            let db = try Database(configuration: configuration)
            #expect(code { _ = try Database.salvage(from: configuration.fileURL!, to: folder.url.appendingPathComponent("b.strata")) } == .alreadyOpen)
            _ = db
        }
        let foreign = folder.url.appendingPathComponent("foreign.strata")
        try Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: foreign)
        #expect(code { _ = try Database.salvage(from: foreign, to: folder.url.appendingPathComponent("c.strata")) } == .invalidDatabase)
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("c.strata").path))
    }

    @Test func mixedValuesMapsSetsAndListsOfLinksAreCopied() throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration("shelves.strata", objectTypes: [SalvageShelf.self, SalvageBox.self])
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                for number in 0..<30 { db.create(SalvageBox.self, value: ["number": number]) }
                let boxes = db.objects(SalvageBox.self).sorted(byKeyPath: "number")
                for index in 0..<10 {
                    let shelf = db.create(SalvageShelf.self, value: ["name": "shelf \(index)"])
                    shelf.anything = index.isMultiple(of: 2) ? .object(boxes[index]) : .string("text \(index)")
                    shelf.history.append(objectsIn: [.int(index), .object(boxes[index + 1]), .none])
                    shelf.byLabel["a"] = boxes[index + 2]
                    shelf.byLabel["b"] = boxes[20 + index]
                    shelf.tags.insert(objectsIn: ["x\(index)", "y"])
                    shelf.boxes.append(objectsIn: [boxes[index], boxes[29 - index]])
                }
            }
        }
        let destination = folder.url.appendingPathComponent("copy.strata")
        let report = try Database.salvage(from: configuration.fileURL!, to: destination)
        #expect(report.isComplete && report.copiedObjects == 40, "\(report)")
        let db = try Database(configuration: folder.configuration("copy.strata", objectTypes: [SalvageShelf.self, SalvageBox.self]))
        for index in 0..<10 {
            let shelf = try #require(db.object(ofType: SalvageShelf.self, forPrimaryKey: "shelf \(index)"))
            if index.isMultiple(of: 2) {
                #expect(shelf.anything.object(SalvageBox.self)?.number == index)
            } else {
                #expect(shelf.anything == .string("text \(index)"))
            }
            #expect(shelf.history.count == 3 && shelf.history[0] == .int(index) && shelf.history[2] == MixedValue.none)
            #expect(shelf.history[1].object(SalvageBox.self)?.number == index + 1)
            #expect(shelf.byLabel["a"]??.number == index + 2)
            #expect(shelf.byLabel.keys.sorted() == ["a", "b"] && shelf.byLabel["b"]??.number == 20 + index)
            #expect(Set(shelf.tags) == ["x\(index)", "y"])
            #expect(shelf.boxes.map(\.number) == [index, 29 - index])
        }
        #expect(db.objects(SalvageBox.self).count == 30)
    }
}
