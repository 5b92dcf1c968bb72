// EmbeddedObject: objects that belong to one parent, created through it, deleted with it or when
// it lets go of them, queried through it, kept across reopen; and the schema rules.

import Foundation
import Testing
@testable import Strata
import StrataStore

final class Doorway: EmbeddedObject {
    @Persisted var label = ""
    @Persisted var width = 0
}

final class Dwelling: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var door: Doorway?
}

final class Inhabitant: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var home: Dwelling?
    @Persisted var past: List<Dwelling>
}

/// An embedded type that names its parent through LinkingObjects.
final class Badge: EmbeddedObject {
    @Persisted var code = ""
    @Persisted(originProperty: "badge") var wearer: LinkingObjects<Guard>
}

final class Guard: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var badge: Badge?
}

/// An embedded type may not have a primary key.
final class KeyedEmbedded: EmbeddedObject {
    @Persisted(primaryKey: true) var id = 0
}

final class KeyedEmbeddedHolder: Object {
    @Persisted var item: KeyedEmbedded?
}

/// `Doorway` as a top-level type: a file made with one cannot be opened with the other.
final class TopLevelDoorway: Object {
    override class func className() -> String { "Doorway" }
    @Persisted var label = ""
    @Persisted var width = 0
}

final class TopLevelDwelling: EmbeddedObject {
    override class func className() -> String { "Dwelling" }
    @Persisted var city = ""
    @Persisted var door: TopLevelDoorway?
}

@Suite struct EmbeddedObjectTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Inhabitant.self, Dwelling.self, Doorway.self]) }

    /// How many objects of an embedded type the file holds.
    private func stored(_ type: String, in db: Database) -> Int {
        (try? db.core.session.table(named: type)?.count) ?? 0
    }

    private func populated() throws -> Database {
        let db = try Database(configuration: configuration)
        try db.write {
            let ann = Inhabitant(value: ["id": 1, "name": "Ann"])
            ann.home = Dwelling(value: ["city": "Oslo", "door": ["label": "front", "width": 90]])
            ann.past.append(objectsIn: [Dwelling(value: ["city": "Bergen"]), Dwelling(value: ["city": "Tromsø", "door": ["label": "back"]])])
            db.add(ann)
            db.create(Inhabitant.self, value: ["id": 2, "name": "Bob", "home": ["city": "Bergen"]])
        }
        return db
    }

    @Test func embeddedObjectsAreMadeThroughTheirParentAndQueriedThroughIt() throws {
        do {
            let db = try populated()
            #expect(stored("Dwelling", in: db) == 4 && stored("Doorway", in: db) == 2)
            let ann = try #require(db.object(ofType: Inhabitant.self, forPrimaryKey: 1))
            #expect(ann.home?.city == "Oslo" && ann.home?.door?.width == 90)
            #expect(ann.past.map(\.city) == ["Bergen", "Tromsø"])
            #expect(db.objects(Inhabitant.self).where { $0.home.city == "Bergen" }.map(\.name) == ["Bob"])
            #expect(db.objects(Inhabitant.self).where { $0.past.city == "Tromsø" }.map(\.name) == ["Ann"])
            #expect(db.objects(Inhabitant.self).filter("home.door.label == 'front'").map(\.name) == ["Ann"])
            #expect(ann.past.where { $0.city.starts(with: "T") }.count == 1)
        }
        // Kept across reopen, and the schema says the types are embedded.
        let reopened = try Database(configuration: configuration)
        #expect(reopened.object(ofType: Inhabitant.self, forPrimaryKey: 1)?.past.last?.door?.label == "back")
        let schema = reopened.core.session.store.schema
        #expect(schema["Dwelling"]?.isEmbedded == true && schema["Doorway"]?.isEmbedded == true && schema["Inhabitant"]?.isEmbedded == false)
    }

    @Test func anEmbeddedObjectIsDeletedWhenItsParentLetsGoOfIt() throws {
        let db = try populated()
        let ann = try #require(db.object(ofType: Inhabitant.self, forPrimaryKey: 1))
        let oldHome = try #require(ann.home)
        // Replacing the link deletes the old object, and the one it holds.
        try db.write { ann.home = Dwelling(value: ["city": "Paris"]) }
        #expect(oldHome.isInvalidated && ann.home?.city == "Paris")
        #expect(stored("Dwelling", in: db) == 4 && stored("Doorway", in: db) == 1)
        // Setting nil deletes it.
        try db.write { ann.home = nil }
        #expect(stored("Dwelling", in: db) == 3)
        // Leaving a list deletes it: removal, replacement, removeAll.
        try db.write { ann.past.remove(at: 1) }
        #expect(stored("Dwelling", in: db) == 2 && stored("Doorway", in: db) == 0)
        try db.write { ann.past.replace(index: 0, object: Dwelling(value: ["city": "Rome"])) }
        #expect(ann.past.map(\.city) == ["Rome"] && stored("Dwelling", in: db) == 2)
        try db.write { ann.past.append(Dwelling(value: ["city": "Lima"])); ann.past.move(from: 1, to: 0) }
        #expect(ann.past.map(\.city) == ["Lima", "Rome"] && stored("Dwelling", in: db) == 3)
        try db.write { ann.past.removeAll() }
        #expect(stored("Dwelling", in: db) == 1)
        // Deleting an embedded object directly clears its parent's link.
        let bob = try #require(db.object(ofType: Inhabitant.self, forPrimaryKey: 2))
        try db.write { db.delete(try #require(bob.home)) }
        #expect(bob.home == nil && stored("Dwelling", in: db) == 0)
    }

    @Test func deletingTheParentDeletesWhatItHolds() throws {
        let db = try populated()
        try db.write { db.delete(try #require(db.object(ofType: Inhabitant.self, forPrimaryKey: 1))) }
        #expect(stored("Dwelling", in: db) == 1 && stored("Doorway", in: db) == 0)
        try db.write { db.deleteAll() }
        #expect(stored("Dwelling", in: db) == 0)
        // A rolled-back write leaves everything as it was.
        let fresh = try populated()
        fresh.beginWrite()
        fresh.delete(fresh.objects(Inhabitant.self))
        fresh.cancelWrite()
        #expect(stored("Dwelling", in: fresh) == 4 && stored("Doorway", in: fresh) == 2)
    }

    @Test func aCopyOfAnEmbeddedObjectCanMoveToAnotherParent() throws {
        let db = try populated()
        let ann = try #require(db.object(ofType: Inhabitant.self, forPrimaryKey: 1))
        let bob = try #require(db.object(ofType: Inhabitant.self, forPrimaryKey: 2))
        try db.write { bob.home = Dwelling(value: try #require(ann.home)) }
        // Bob's old home went; the copy has its own door.
        #expect(bob.home?.city == "Oslo" && ann.home?.city == "Oslo" && bob.home != ann.home)
        #expect(bob.home?.door?.label == "front" && bob.home?.door != ann.home?.door)
        // Assigning the object a link already holds changes nothing.
        try db.write { ann.home = ann.home }
        #expect(ann.home?.city == "Oslo" && stored("Dwelling", in: db) == 4 && stored("Doorway", in: db) == 3)
        // Frozen copies read embedded objects too.
        let frozen = ann.freeze()
        #expect(frozen.home?.door?.label == "front")
    }

    /// A parent's observers hear of changes inside an embedded object through a key path.
    @Test func aKeyPathThroughAnEmbeddedObjectReportsItsChanges() throws {
        let db = try populated()
        let ann = try #require(db.object(ofType: Inhabitant.self, forPrimaryKey: 1))
        var changed: [[String]] = []
        let token = ann.observe(keyPaths: ["home.city"]) { (change: ObjectChange<Inhabitant>) in
            if case .change(_, let properties) = change { changed.append(properties.map(\.name)) }
        }
        defer { token.invalidate() }
        try db.write { ann.home?.city = "Drammen" }
        try db.write { ann.name = "Anne" }  // not watched
        #expect(changed == [["home"]])
    }

    /// The parent is found through LinkingObjects, and an update of the parent by primary key
    /// replaces its embedded objects.
    @Test func parentsThroughLinkingObjectsAndUpdatesByPrimaryKey() throws {
        let db = try Database(configuration: folder.configuration("guards.strata", objectTypes: [Guard.self, Badge.self]))
        try db.write { db.create(Guard.self, value: ["id": 7, "badge": ["code": "A1"]]) }
        let guardian = try #require(db.object(ofType: Guard.self, forPrimaryKey: 7))
        #expect(guardian.badge?.wearer.map(\.id) == [7])
        try db.write { db.add(Guard(value: ["id": 7, "badge": ["code": "B2"]]), update: .modified) }
        #expect(guardian.badge?.code == "B2")
        #expect(stored("Badge", in: db) == 1)
    }

    @Test func schemaRulesForEmbeddedTypes() throws {
        let keyed = #expect(throws: Database.Error.self) {
            try Database(configuration: folder.configuration("keyed.strata", objectTypes: [KeyedEmbeddedHolder.self, KeyedEmbedded.self]))
        }
        #expect(keyed?.message.contains("an embedded type cannot have a primary key") == true)
        // A file whose Doorway is embedded, opened with a top-level Doorway: a mismatch.
        _ = try populated()
        let mismatch = #expect(throws: Database.Error.self) {
            try Database(configuration: folder.configuration(objectTypes: [TopLevelDwelling.self, TopLevelDoorway.self]))
        }
        #expect(mismatch?.code == .schemaMismatch)
    }
}
