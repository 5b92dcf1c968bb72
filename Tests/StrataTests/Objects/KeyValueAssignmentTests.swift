// Key-value assignment of collections to list and set properties, NSNull as nil, unknown
// keys in value dictionaries, and aggregates of unmanaged lists and sets of objects: as
// RealmSwift code relies on them.
import Foundation
import Testing
@testable import Strata

final class KVCDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var weight: Double?
    @Persisted var born: Date?
    @Persisted var pals: List<KVCOwner>
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<KVCOwner>
}

final class KVCOwner: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<KVCDog>
    @Persisted var dogSet: MutableSet<KVCDog>
    @Persisted var scores: List<Int>
}

final class KVCOptionalKey: Object {
    @Persisted(primaryKey: true) var id: Int?
    @Persisted var note: String?
    @Persisted var value = 0
}

final class KVCOptionalStringKey: Object {
    @Persisted(primaryKey: true) var id: String?
    @Persisted var value = 0
}

@Suite struct KeyValueAssignmentTests {
    private static func open(_ folder: TemporaryFolder) throws -> Database {
        try Database(configuration: folder.configuration(objectTypes: [KVCDog.self, KVCOwner.self, KVCOptionalKey.self, KVCOptionalStringKey.self]))
    }

    private static func addDogs(_ db: Database) throws {
        try db.write {
            for (name, age) in [("Rex", 1), ("Fido", 3), ("Bo", 5)] { db.create(KVCDog.self, value: ["name": name, "age": age]) }
        }
    }

    @Test func resultsAssignedByKeyToAManagedListCopyItsMembers() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        try Self.addDogs(db)
        let older = db.objects(KVCDog.self).filter("age > 2")
        let owner = try db.write { db.create(KVCOwner.self, value: ["name": "Ann"]) }
        try db.write { owner["dogs"] = older }
        #expect(owner.dogs.map(\.name) == ["Fido", "Bo"])
        // A copy: the results changing leaves the list as it was.
        try db.write { older.first?.age = 0 }
        #expect(older.count == 1 && owner.dogs.count == 2)
    }

    @Test func linkingObjectsMutableSetsAndAnyCollectionsAssignByKeyAsCopies() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        try Self.addDogs(db)
        let all = db.objects(KVCDog.self)
        let ann = try db.write { db.create(KVCOwner.self, value: ["name": "Ann", "dogs": all]) }
        #expect(ann.dogs.count == 3)
        let bob = try db.write { db.create(KVCOwner.self, value: ["name": "Bob"]) }
        try db.write {
            bob.setValue(AnyObjectCollection(all.filter("age < 4")), forKey: "dogSet")
            ann["dogSet"] = bob.dogSet
            all[0]["pals"] = all[0].owners
        }
        #expect(Set(bob.dogSet.map(\.name)) == ["Rex", "Fido"])
        #expect(Set(ann.dogSet.map(\.name)) == ["Rex", "Fido"])
        #expect(all[0].pals.map(\.name) == ["Ann"])
        // Assigning a list its own members keeps them.
        try db.write { ann["dogs"] = ann.dogs }
        #expect(ann.dogs.map(\.name) == ["Rex", "Fido", "Bo"])
    }

    @Test func anUnmanagedObjectGetsItsOwnCopyOfAnAssignedList() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        try Self.addDogs(db)
        let managed = try db.write { db.create(KVCOwner.self, value: ["name": "Ann", "dogs": db.objects(KVCDog.self)]) }
        let copy = KVCOwner()
        copy["dogs"] = managed.dogs
        try #require(copy.dogs.database == nil && copy.dogs.count == 3)
        copy.dogs.append(KVCDog())
        #expect(managed.dogs.count == 3 && copy.dogs.count == 4)
        // Between unmanaged objects too: no list is shared.
        let other = KVCOwner()
        other.setValue(copy.dogs, forKey: "dogs")
        other.dogs.removeAll()
        #expect(copy.dogs.count == 4)
        // Object(value:) with a set and results.
        let made = KVCOwner(value: ["dogSet": db.objects(KVCDog.self), "scores": Set([4])])
        #expect(made.dogSet.count == 3 && Array(made.scores) == [4])
    }

    @Test func nsNullIsANilPrimaryKeyAndANilOptional() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        try db.write {
            db.create(KVCOptionalKey.self, value: ["id": NSNull(), "note": NSNull(), "value": 1])
            db.create(KVCOptionalKey.self, value: [5, "five", 5])
            db.create(KVCOptionalStringKey.self, value: [NSNull(), 7])
        }
        let nilKeyed = try #require(db.object(ofType: KVCOptionalKey.self, forPrimaryKey: NSNull()))
        #expect(nilKeyed.id == nil && nilKeyed.note == nil && nilKeyed.value == 1)
        #expect(db.object(ofType: KVCOptionalStringKey.self, forPrimaryKey: NSNull())?.value == 7)
        #expect(db.dynamicObject(ofType: "KVCOptionalKey", forPrimaryKey: NSNull())?["value"] as? Int == 1)
        // An update by a nil key finds the existing object.
        try db.write { db.create(KVCOptionalKey.self, value: ["id": NSNull(), "value": 2], update: .modified) }
        #expect(db.objects(KVCOptionalKey.self).count == 2 && nilKeyed.value == 2)
        let five = try #require(db.object(ofType: KVCOptionalKey.self, forPrimaryKey: 5))
        try db.write { five.setValue(NSNull(), forKey: "note") }
        #expect(five.note == nil)
        let unmanaged = KVCOptionalKey(value: ["id": 9, "note": "x"])
        unmanaged["note"] = NSNull()
        #expect(unmanaged.note == nil)
    }

    @Test func unknownKeysInAValueDictionaryAreIgnored() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        let dog = KVCDog(value: ["name": "Rex", "colour": "brown", "age": 2])
        #expect(dog.name == "Rex" && dog.age == 2)
        try db.write {
            db.create(KVCDog.self, value: ["name": "Bo", "unknown": [1, 2]])
            db.dynamicCreate("KVCDog", value: ["name": "Fido", "extra": true])
        }
        #expect(Set(db.objects(KVCDog.self).map(\.name)) == ["Bo", "Fido"])
    }
}
