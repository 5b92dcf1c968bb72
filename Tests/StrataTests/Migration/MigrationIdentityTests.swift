// Migrations compare values as the rest of Strata does: a set written by a migration holds each
// member once by the set's rules (numbers of a mixed set by value, strings by their bytes), and
// a primary key made in a migration refuses only keys that are the same bytes. A property that
// becomes the primary key, or stops being it, keeps its values; so does one made optional or
// required (its nulls then become its type's default), as in Realm.

import Foundation
import Testing
@testable import Strata
import StrataStorage

final class BadgeV0: Object {
    override class func className() -> String { "Badge" }
    @Persisted var code = ""
    @Persisted var marks: MutableSet<MixedValue>
    @Persisted var words: MutableSet<String>
}

final class BadgeV1: Object {
    override class func className() -> String { "Badge" }
    @Persisted(primaryKey: true) var code = ""
    @Persisted var marks: MutableSet<MixedValue>
    @Persisted var words: MutableSet<String>
}

final class BadgeV2: Object {
    override class func className() -> String { "Badge" }
    @Persisted var code = ""
    @Persisted var marks: MutableSet<MixedValue>
    @Persisted var words: MutableSet<String>
}

final class NoteV0: Object {
    override class func className() -> String { "Note" }
    @Persisted var title = ""
    @Persisted var rank: Int?
    @Persisted var tags: List<String>
    @Persisted var levels: MutableSet<Int?>
    @Persisted var scores: Map<String, Double?>
    @Persisted var due: Date?
}

final class NoteV1: Object {
    override class func className() -> String { "Note" }
    @Persisted var title: String?
    @Persisted var rank: Int
    @Persisted var tags: List<String?>
    @Persisted var levels: MutableSet<Int>
    @Persisted var scores: Map<String, Double>
    @Persisted var due: Date
    @Persisted var created: Date
}

@Suite struct MigrationIdentityTests {
    @Test func propertiesMadeOptionalOrRequiredKeepTheirValues() throws {
        let folder = TemporaryFolder()
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [NoteV0.self]))
            try db.write {
                db.create(NoteV0.self, value: ["title": "a", "rank": 3, "tags": ["x"], "levels": [1, 2], "scores": ["s": 1.5],
                                               "due": Date(timeIntervalSince1970: 86_400)])
                db.create(NoteV0.self, value: ["title": "b", "rank": NSNull(), "tags": ["y", "z"], "levels": [NSNull(), 0, 4],
                                               "scores": ["s": NSNull(), "t": 2.0]])
            }
        }
        // Every value stays; the nulls of the properties made required read as their type's
        // default, and a set holds the default once.
        var config = folder.configuration(objectTypes: [NoteV1.self])
        config.schemaVersion = 1
        // The block sets one added date; the other object's starts at the epoch.
        config.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Note") { old, new in
                if old?["title"] as? String == "a" { new?["created"] = Date(timeIntervalSince1970: 7) }
                #expect(new?["rank"] is Int, "the block sees the default of a property made required")
            }
        }
        let db = try Database(configuration: config)
        let notes = db.objects(NoteV1.self).sorted(byKeyPath: "title")
        #expect(notes.map(\.title) == ["a", "b"])
        #expect(notes.map(\.rank) == [3, 0])
        #expect(notes.map { Array($0.tags) } == [["x"], ["y", "z"]])
        #expect(notes.map { Array($0.levels) } == [[1, 2], [0, 4]])
        #expect(notes[1].scores["s"] == 0 && notes[1].scores["t"] == 2 && notes[0].scores["s"] == 1.5)
        // A date's default is the epoch, as a new object's is.
        #expect(notes.map(\.due) == [Date(timeIntervalSince1970: 86_400), NoteV1().due])
        #expect(notes.map(\.created) == [Date(timeIntervalSince1970: 7), NoteV1().created], "an added date starts at the epoch")
        #expect(db.objects(NoteV1.self).where { $0.rank == 0 }.count == 1)
        // Stored as the default, not as null read as one.
        #expect(notes[1]["rank"] as? Int == 0 && db.objects(NoteV1.self).filter("rank == 0 AND ANY levels == 0").count == 1)
        #expect(db.core.session.tables.flatMap { $0.verifyObjects().problems }.isEmpty)
    }


    /// The names of the file's trees.
    func treeNames(_ config: Database.Configuration) throws -> [String] {
        let engine = try StorageEngine.open(path: config.path, options: StorageOptions())
        defer { engine.close() }
        return try engine.read { try $0.treeNames() }
    }

    @Test func aPrimaryKeyAddedOrRemovedKeepsTheValues() throws {
        let folder = TemporaryFolder()
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [BadgeV0.self]))
            try db.write { for code in ["a", "b", "c"] { db.create(BadgeV0.self, value: ["code": code]) } }
        }
        // No block: the values stay in their column and the key's index is built from them.
        var keyed = folder.configuration(objectTypes: [BadgeV1.self])
        keyed.schemaVersion = 1
        do {
            let db = try Database(configuration: keyed)
            #expect(db.objects(BadgeV1.self).map(\.code).sorted() == ["a", "b", "c"])
            #expect(db.object(ofType: BadgeV1.self, forPrimaryKey: "b")?.code == "b")
            #expect(db.core.session.tables.flatMap { $0.verifyObjects().problems }.isEmpty)
        }
        #expect(try treeNames(keyed).contains { $0.hasSuffix(".pk") })
        // And back: the values stay, the index goes.
        var plain = folder.configuration(objectTypes: [BadgeV2.self])
        plain.schemaVersion = 2
        do {
            let db = try Database(configuration: plain)
            #expect(db.objects(BadgeV2.self).map(\.code).sorted() == ["a", "b", "c"])
            #expect(db.core.session.tables.flatMap { $0.verifyObjects().problems }.isEmpty)
        }
        #expect(try !treeNames(plain).contains { $0.hasSuffix(".pk") })
    }

    @Test func repeatedValuesCannotBecomeThePrimaryKey() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [BadgeV0.self])
        do {
            let db = try Database(configuration: config)
            try db.write { for code in ["a", "b", "a"] { db.create(BadgeV0.self, value: ["code": code]) } }
        }
        var keyed = folder.configuration(objectTypes: [BadgeV1.self])
        keyed.schemaVersion = 1
        let error = #expect(throws: Database.Error.self) { try Database(configuration: keyed) }
        #expect(error?.message.contains("primary key") == true, "\(String(describing: error))")
        // The file is as it was.
        let db = try Database(configuration: config)
        #expect(db.objects(BadgeV0.self).map(\.code).sorted() == ["a", "a", "b"])
        #expect(try Database.schemaVersion(at: URL(fileURLWithPath: config.path)) == 0)
    }

    @Test func setsAndPrimaryKeysMadeInAMigration() throws {
        let folder = TemporaryFolder()
        // Two codes that are canonically equivalent Swift strings but different bytes.
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [BadgeV0.self]))
            try db.write {
                db.create(BadgeV0.self, value: ["code": composed])
                db.create(BadgeV0.self, value: ["code": decomposed])
            }
        }
        var config = folder.configuration(objectTypes: [BadgeV1.self])
        config.schemaVersion = 1
        config.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Badge") { _, new in
                new?["marks"] = [MixedValue.int(5), MixedValue.double(5), MixedValue.string("5"), MixedValue.decimal128(5)]
                new?["words"] = [composed, decomposed, composed]
            }
        }
        // `code` becomes the primary key: the two codes are different keys.
        let db = try Database(configuration: config)
        #expect(db.objects(BadgeV1.self).count == 2)
        let badge = try #require(db.object(ofType: BadgeV1.self, forPrimaryKey: decomposed))
        #expect(badge.code.utf8.elementsEqual(decomposed.utf8))
        #expect(Array(badge.marks) == [.int(5), .string("5")])
        #expect(badge.words.count == 2)
    }
}
