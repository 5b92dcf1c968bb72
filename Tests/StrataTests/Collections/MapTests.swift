// Map: string keys to values and optional objects, unmanaged and managed, through reopen; key
// order, nil values, deleted objects, input dictionaries, copies, freezing and hand-over; the
// schema tells maps from lists.

import Foundation
import Testing
@testable import Strata
import StrataStore

final class Player: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var scores: Map<String, Int>
    @Persisted var notes: Map<String, String?>
    @Persisted var friends: Map<String, Player?>
    @Persisted(originProperty: "friends") var admirers: LinkingObjects<Player>
}

/// The same schema name as `Player`, with `scores` a list: a file made by one is a schema
/// mismatch for the other.
final class PlayerWithScoreList: Object {
    override class func className() -> String { "Player" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var scores: List<Int>
    @Persisted var notes: Map<String, String?>
    @Persisted var friends: Map<String, PlayerWithScoreList?>
}

/// What `strata verify` finds in the objects of `db`'s tables (a map's keys and values must
/// pair up, keys distinct and in order).
func problems(_ db: Database) -> [String] {
    db.core.session.tables.flatMap { $0.verifyObjects().problems }
}

/// A type whose map holds embedded objects.
final class Landlord: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var homes: Map<String, Dwelling?>
}

/// How many embedded `Dwelling` objects the file holds.
private func dwellings(_ db: Database) -> Int { (try? db.core.session.table(named: "Dwelling")?.count) ?? -1 }

@Suite struct MapTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Player.self]) }

    @Test func anUnmanagedMapKeepsItsKeysInOrder() {
        let player = Player()
        player.scores["b"] = 2
        player.scores["a"] = 1
        player.scores["c"] = 3
        player.scores["b"] = 20
        #expect(player.scores.keys == ["a", "b", "c"])
        #expect(player.scores.values == [1, 20, 3])
        #expect(player.scores["b"] == 20 && player.scores["z"] == nil)
        player.scores["a"] = nil
        #expect(player.scores.keys == ["b", "c"] && player.scores.count == 2)
        player.notes.updateValue(nil, forKey: "empty")
        #expect(player.notes.count == 1 && player.notes["empty"] == .some(nil))
        player.scores.merge(["c": 30, "d": 4]) { old, new in old + new }
        #expect(player.scores.asKeyValueSequence().map { $0.key } == ["b", "c", "d"])
        #expect(player.scores.map { $0.value } == [20, 33, 4])
        #expect(!player.scores.isManaged && player.scores.database == nil)
        player.scores.removeAll()
        #expect(player.scores.isEmpty)
    }

    @Test func aManagedMapKeepsItsEntriesThroughReopen() throws {
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                let ann = db.create(Player.self, value: ["id": 1, "name": "Ann", "scores": ["z": 26, "é": 5, "a": 1],
                                                         "notes": ["x": "hi", "n": NSNull()]])
                let bo = Player(value: ["id": 2, "name": "Bo"])
                ann.friends["best"] = bo  // unmanaged: added
                ann.friends["none"] = .some(nil)
                ann.scores["m"] = 13
            }
            let ann = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
            // Key order is the keys' UTF-8 bytes: "é" (0xC3 0xA9) after "z".
            #expect(ann.scores.keys == ["a", "m", "z", "é"])
            #expect(ann.scores.values == [1, 13, 26, 5])
            #expect(ann.notes["n"] == .some(nil) && ann.notes["x"] == "hi" && ann.notes["q"] == nil)
            #expect(ann.friends["best"]??.name == "Bo")
            #expect(ann.friends.keys == ["best", "none"])
            #expect(ann.scores.isManaged)
        }
        let db = try Database(configuration: configuration)
        let ann = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        #expect(ann.scores.keys == ["a", "m", "z", "é"])
        #expect(ann.scores.values == [1, 13, 26, 5])
        #expect(ann.friends["best"]??.name == "Bo")
        #expect(ann.friends["none"] == .some(nil))
        try db.write {
            ann.scores.removeObject(for: "m")
            ann.scores.removeObject(for: "not there")
            ann.scores["a"] = 100
            ann.notes.removeAll()
        }
        #expect(ann.scores.keys == ["a", "z", "é"] && ann.scores["a"] == 100)
        #expect(ann.notes.isEmpty)
        #expect(problems(db).isEmpty)
    }

    @Test func aDeletedObjectLeavesItsKeyWithNil() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let ann = db.create(Player.self, value: ["id": 1, "name": "Ann"])
            ann.friends["bo"] = db.create(Player.self, value: ["id": 2, "name": "Bo"])
            ann.friends["cy"] = db.create(Player.self, value: ["id": 3, "name": "Cy"])
        }
        let ann = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        try db.write { db.delete(try #require(db.object(ofType: Player.self, forPrimaryKey: 2))) }
        #expect(ann.friends.keys == ["bo", "cy"])
        #expect(ann.friends["bo"] == .some(nil))
        #expect(ann.friends["cy"]??.name == "Cy")
        // Deleting the map's objects: every value becomes nil; the keys stay.
        try db.write { db.delete(ann.friends) }
        #expect(ann.friends.values.allSatisfy { $0 == nil } && ann.friends.count == 2)
        #expect(db.objects(Player.self).count == 1)
        #expect(problems(db).isEmpty)
    }

    @Test func deletingTheOwnerRemovesTheMap() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            db.create(Player.self, value: ["id": 1, "scores": ["a": 1, "b": 2]])
            db.create(Player.self, value: ["id": 2, "scores": ["c": 3]])
        }
        try db.write { db.delete(try #require(db.object(ofType: Player.self, forPrimaryKey: 1))) }
        // A new object with the deleted one's key reads no leftover entries.
        try db.write { db.create(Player.self, value: ["id": 1]) }
        #expect(try #require(db.object(ofType: Player.self, forPrimaryKey: 1)).scores.isEmpty)
        #expect(try #require(db.object(ofType: Player.self, forPrimaryKey: 2)).scores.keys == ["c"])
        #expect(problems(db).isEmpty)
    }

    @Test func assigningAMapCopiesIt() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let ann = db.create(Player.self, value: ["id": 1, "scores": ["a": 1, "b": 2]])
            let bo = db.create(Player.self, value: ["id": 2])
            bo.scores = ann.scores
            ann.scores["c"] = 3
            let unmanaged = Map<String, Int>()
            unmanaged["x"] = 9
            ann.scores = unmanaged
        }
        #expect(try #require(db.object(ofType: Player.self, forPrimaryKey: 1)).scores.keys == ["x"])
        #expect(try #require(db.object(ofType: Player.self, forPrimaryKey: 2)).scores.keys == ["a", "b"])
        // A managed object's copy (init(value:)) holds an unmanaged copy of the map.
        let copy = Player(value: try #require(db.object(ofType: Player.self, forPrimaryKey: 2)))
        #expect(!copy.scores.isManaged && copy.scores.values == [1, 2])
    }

    @Test func frozenMapsAndReferencesCrossThreads() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Player.self, value: ["id": 1, "scores": ["a": 1]]) }
        let ann = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        let frozen = ann.scores.frozen
        let reference = ThreadSafeReference(to: ann.scores)
        try db.write { ann.scores["b"] = 2 }
        let configuration = self.configuration
        let seen = try onAnotherThread {
            let db = try Database(configuration: configuration)
            let resolved = db.resolve(reference)
            return [frozen.value.keys, resolved?.keys ?? ["not resolved"], [frozen.value.isFrozen ? "frozen" : "live"]]
        }
        #expect(seen == [["a"], ["a", "b"], ["frozen"]])
        let thawed = try #require(frozen.value.thaw())
        #expect(thawed.keys == ["a", "b"] && !thawed.isFrozen)
    }

    @Test func theSchemaTellsAMapFromAList() throws {
        _ = try Database(configuration: configuration)
        let error = #expect(throws: Database.Error.self) {
            _ = try Database(configuration: folder.configuration(objectTypes: [PlayerWithScoreList.self]))
        }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("scores") == true, "\(error?.message ?? "")")
        let schema = try ClassInfo.of(Player.self).schema
        let property = try #require(schema.properties.first { $0.name == "scores" })
        #expect(property.isMap && property.isList && property.kind == PropertyKind.int && property.typeDescription == "map<string, int>")
        let friends = try #require(schema.properties.first { $0.name == "friends" })
        #expect(friends.isMap && friends.kind == PropertyKind.link && friends.objectType == "Player" && friends.isOptional)
    }

    @Test func keyValueAccessReadsAndWritesMaps() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Player.self, value: ["id": 1]) }
        let player = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        try db.write { player.setValue(["b": 2, "a": 1], forKey: "scores") }
        #expect(player.scores.keys == ["a", "b"])
        let read = try #require(player["scores"] as? Map<String, Int>)
        #expect(read.values == [1, 2] && read.isManaged)
    }

    @Test func linkingObjectsFollowAMapOfObjects() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let ann = db.create(Player.self, value: ["id": 1, "name": "Ann"])
            let bo = db.create(Player.self, value: ["id": 2, "name": "Bo"])
            let cy = db.create(Player.self, value: ["id": 3, "name": "Cy"])
            ann.friends["best"] = bo
            cy.friends["old"] = bo
            cy.friends["none"] = .some(nil)
        }
        let bo = try #require(db.object(ofType: Player.self, forPrimaryKey: 2))
        #expect(bo.admirers.map(\.name).sorted() == ["Ann", "Cy"])
        #expect(db.objects(Player.self).where { $0.admirers.name == "Cy" }.map(\.name) == ["Bo"])
        try db.write { try #require(db.object(ofType: Player.self, forPrimaryKey: 1)).friends.removeAll() }
        #expect(bo.admirers.map(\.name) == ["Cy"])
    }

    @Test func valueAggregates() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Player.self, value: ["id": 1, "scores": ["a": 4, "b": 1, "c": 7]]) }
        let scores = try #require(db.object(ofType: Player.self, forPrimaryKey: 1)).scores
        #expect(scores.min() == 1 && scores.max() == 7 && scores.sum() == 12)
        let mean: Double? = scores.average()
        #expect(mean == 4)
        #expect(Map<String, Int>().sum() == 0 && Map<String, Int>().max() == nil)
        #expect(scores.sorted() == [1, 4, 7] && scores.sorted(ascending: false) == [7, 4, 1])
        try db.write { scores["d"] = 4 }
        #expect(scores.distinct() == [4, 1, 7])
    }

    @Test func aMigrationTurnsAListIntoAMap() throws {
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [PlayerWithScoreList.self]))
            try db.write { db.create(PlayerWithScoreList.self, value: ["id": 1, "scores": [5, 7], "notes": ["a": "x", "b": nil]]) }
        }
        var v1 = configuration
        v1.schemaVersion = 1
        v1.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Player") { old, new in
                let scores = (old?["scores"] as? [Any])?.compactMap { $0 as? Int } ?? []
                new?["scores"] = Dictionary(uniqueKeysWithValues: scores.enumerated().map { ("round \($0.offset + 1)", $0.element) })
                let notes = old?["notes"] as? [String: Any?]
                new?["notes"] = notes?.merging(["c": "added"]) { $1 }
            }
        }
        let db = try Database(configuration: v1)
        let player = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        #expect(player.scores.keys == ["round 1", "round 2"] && player.scores.values == [5, 7])
        #expect(player.notes.keys == ["a", "b", "c"] && player.notes["b"] == .some(nil) && player.notes["c"] == "added")
        #expect(problems(db).isEmpty)
    }

    @Test func embeddedObjectsBelongToTheirMap() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [Landlord.self, Dwelling.self, Doorway.self]))
        try db.write {
            let owner = db.create(Landlord.self, value: ["id": 1])
            owner.homes["north"] = Dwelling(value: ["city": "Oslo"])
            owner.homes["south"] = Dwelling(value: ["city": "Rome"])
        }
        let owner = try #require(db.object(ofType: Landlord.self, forPrimaryKey: 1))
        #expect(owner.homes["north"]??.city == "Oslo" && dwellings(db) == 2)
        // Replacing or removing a value deletes the embedded object it held.
        try db.write { owner.homes["north"] = Dwelling(value: ["city": "Bergen"]) }
        try db.write { owner.homes.removeObject(for: "south") }
        #expect(owner.homes.keys == ["north"] && owner.homes["north"]??.city == "Bergen")
        #expect(dwellings(db) == 1)
        // Deleting the parent deletes its map's objects.
        try db.write { db.delete(owner) }
        #expect(dwellings(db) == 0)
        #expect(problems(db).isEmpty)
    }

    @Test func aMapCrossesActorsThroughThreadSafe() async throws {
        let db = try openHere(configuration)
        try db.write { db.create(Player.self, value: ["id": 1, "scores": ["a": 1, "b": 2]]) }
        @ThreadSafe var scores = try #require(db.object(ofType: Player.self, forPrimaryKey: 1)).scores
        let reader = try await MapReader(configuration)
        #expect(await reader.keys(of: scores) == ["a", "b"])
    }

    @Test func anObjectReportsItsMapAsChanged() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Player.self, value: ["id": 1, "scores": ["a": 1]]) }
        let player = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        var changed: [[String]] = []
        let token = player.observe { (change: ObjectChange<Player>) in
            if case .change(_, let properties) = change { changed.append(properties.map(\.name)) }
        }
        try db.write { player.scores["b"] = 2 }
        try db.write { player.name = "Ann" }
        #expect(changed == [["scores"], ["name"]])
        token.invalidate()
    }
}
