// writeCopy(toFile:), schemaVersion(at:), Configuration.seedFilePath, and ObjectKeyIdentifiable.

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
