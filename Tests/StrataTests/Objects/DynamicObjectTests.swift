// The dynamic API: objects of types named at run time, read and written by property name, as
// RealmSwift's DynamicObject; queried with string predicates, observed, frozen and handed over;
// and a mixed value's object of a class this process never declared, read as a DynamicObject.

import Foundation
import Testing
@testable import Strata
@testable import StrataStore

final class Stamp: Object {
    @Persisted var label = ""
    @Persisted var at: Date
}

@Suite struct DynamicObjectTests {
    let folder = TemporaryFolder()

    /// A file of people, dogs and settings written through the model classes.
    func seeded() throws -> Database {
        let db = try Database(configuration: folder.configuration(objectTypes: [Person.self, Dog.self, Setting.self, Appliance.self]))
        try db.write {
            let rex = db.create(Dog.self, value: ["name": "Rex", "age": 3])
            db.create(Person.self, value: ["id": 1, "name": "Ann", "city": "Oslo", "dog": rex, "tags": ["a", "b"]])
            let bob = db.create(Person.self, value: ["id": 2, "name": "Bob", "city": "Rome"])
            bob.friends.append(db.object(ofType: Person.self, forPrimaryKey: 1)!)
            db.create(Setting.self, value: ["id": 1, "value": 42, "extras": ["k": "v"], "tags": [1, "x"]])
        }
        return db
    }

    @Test func valuesLinksAndCollectionsReadByName() throws {
        let db = try seeded()
        let people = db.dynamicObjects("Person")
        #expect(people.count == 2)
        let ann = try #require(db.dynamicObject(ofType: "Person", forPrimaryKey: 1))
        #expect(ann.typeName == "Person" && ann.isManaged)
        #expect(ann["name"] as? String == "Ann" && ann.city as? String == "Oslo")
        // Dog is one of the configuration's classes: the link reads as a Dog.
        let dog = try #require(ann.dog as? Dog)
        #expect(dog.name == "Rex" && dog["age"] as? Int == 3)
        #expect((ann.tags as? [Any?])?.compactMap { $0 as? String } == ["a", "b"])
        let bob = try #require(db.dynamicObject(ofType: "Person", forPrimaryKey: 2))
        #expect((bob.friends as? List<DynamicObject>)?.map { $0.name as? String } == ["Ann"])
        #expect(bob.dog == nil)
        // The typed object and the dynamic one are the same object.
        #expect(ann.isSameObject(as: db.object(ofType: Person.self, forPrimaryKey: 1)))
        let setting = try #require(db.dynamicObject(ofType: "Setting", forPrimaryKey: 1))
        #expect(setting["value"] as? Int == 42, "(`value` is a method: names that are members read by subscript; a mixed value reads as what it holds)")
        #expect((setting.extras as? [String: Any?])?["k"] as? MixedValue == .string("v"))
        #expect(setting.description.hasPrefix("Setting {"))
        #expect(db.dynamicObject(ofType: "Person", forPrimaryKey: 9) == nil)
    }

    @Test func stringPredicatesSortingAndObservation() throws {
        let db = try seeded()
        let inRome = db.dynamicObjects("Person").filter("city == %@", "Rome")
        #expect(inRome.count == 1 && inRome.first?.name as? String == "Bob")
        let sorted = db.dynamicObjects("Person").sorted(byKeyPath: "name", ascending: false)
        #expect(sorted.map { $0.name as? String } == ["Bob", "Ann"])
        var changes: [CollectionChange<Results<DynamicObject>>] = []
        let token = inRome.observe { changes.append($0) }
        try db.write { db.create(Person.self, value: ["id": 3, "name": "Cy", "city": "Rome"]) }
        #expect(changes.count == 2)
        if case .update(let results, _, let insertions, _) = changes.last {
            #expect(results.count == 2 && insertions == [1])
        } else {
            Issue.record("expected an update, got \(String(describing: changes.last))")
        }
        withExtendedLifetime(token) {}
    }

    @Test func writesThroughNamesReachTheTypedObjects() throws {
        let db = try seeded()
        let ann = try #require(db.dynamicObject(ofType: "Person", forPrimaryKey: 1))
        let bob = try #require(db.dynamicObject(ofType: "Person", forPrimaryKey: 2))
        try db.write {
            ann.city = "Paris"
            ann["tags"] = ["z"]
            bob.dog = ann.dog
            bob["friends"] = [ann, db.object(ofType: Person.self, forPrimaryKey: 2)!]
        }
        let typedAnn = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
        let typedBob = try #require(db.object(ofType: Person.self, forPrimaryKey: 2))
        #expect(typedAnn.city == "Paris" && Array(typedAnn.tags) == ["z"])
        #expect(typedBob.dog?.name == "Rex" && typedBob.friends.map(\.name) == ["Ann", "Bob"])
        // A value that does not fit is refused (as for typed objects' key-value access).
        let setting = try #require(db.dynamicObject(ofType: "Setting", forPrimaryKey: 1))
        try db.write {
            setting["value"] = MixedValue.string("now a string")
            setting["extras"] = ["a": 1, "b": nil]
        }
        let typed = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        #expect(typed.value == .string("now a string") && typed.extras["a"] == .int(1) && typed.extras["b"] == MixedValue.none)
    }

    @Test func aDynamicObjectIsObservedLikeAnyObject() throws {
        let db = try seeded()
        let ann = try #require(db.dynamicObject(ofType: "Person", forPrimaryKey: 1))
        var changes: [ObjectChange<DynamicObject>] = []
        let token = ann.observe { changes.append($0) }
        try db.write { db.object(ofType: Person.self, forPrimaryKey: 1)!.city = "Bergen" }
        guard case .change(let object, let properties) = changes.first else {
            Issue.record("expected a change, got \(changes)")
            return
        }
        #expect(object.city as? String == "Bergen")
        #expect(properties.map(\.name) == ["city"] && properties.first?.newValue as? String == "Bergen")
        try db.write { db.delete(db.object(ofType: Person.self, forPrimaryKey: 1)!) }
        if case .deleted = changes.last {} else { Issue.record("expected a deletion, got \(String(describing: changes.last))") }
        withExtendedLifetime(token) {}
    }

    @Test func dynamicCreateInsertsAndUpdates() throws {
        let db = try seeded()
        let made = try db.write { db.dynamicCreate("Person", value: ["id": 7, "name": "Dee", "tags": ["q"]]) }
        #expect(made.typeName == "Person" && made.city as? String == "")
        #expect(db.object(ofType: Person.self, forPrimaryKey: 7)?.tags.first == "q")
        let dog = try db.write { db.dynamicCreate("Dog", value: ["Fido", 5]) }  // an array, in property order
        #expect(dog.name as? String == "Fido" && db.objects(Dog.self).count == 2)
        try db.write {
            db.dynamicCreate("Person", value: ["id": 7, "city": "Nice"], update: .modified)
            db.dynamicCreate("Person", value: ["id": 2, "dog": dog], update: .all)
        }
        #expect(db.object(ofType: Person.self, forPrimaryKey: 7)?.city == "Nice")
        #expect(db.object(ofType: Person.self, forPrimaryKey: 7)?.name == "Dee", "unnamed properties are kept by an update")
        #expect(db.object(ofType: Person.self, forPrimaryKey: 2)?.dog?.name == "Fido")
        // A date not given is the model class's default.
        let stampDB = try Database(configuration: folder.configuration("stamps.strata", objectTypes: [Stamp.self]))
        let stamp = try stampDB.write { stampDB.dynamicCreate("Stamp", value: ["label": "x"]) }
        #expect(stamp.at as? Date == Stamp().at && stampDB.objects(Stamp.self).first?.at == Stamp().at)
        try db.write { db.delete(made) }
        #expect(made.isInvalidated && db.object(ofType: Person.self, forPrimaryKey: 7) == nil)
    }

    @Test func frozenAndHandedOver() async throws {
        let db = try seeded()
        let ann = try #require(db.dynamicObject(ofType: "Person", forPrimaryKey: 1))
        let frozen = ann.freeze()
        try db.write { ann.name = "Anna" }
        #expect(frozen.isFrozen && frozen.name as? String == "Ann" && ann.name as? String == "Anna")
        #expect(frozen.thaw()?.name as? String == "Anna")
        let frozenPeople = db.dynamicObjects("Person").freeze()
        #expect(frozenPeople.count == 2 && frozenPeople.thaw()?.count == 2)
        // Across threads, as a reference resolved by another instance.
        let configuration = db.configuration
        let reference = ThreadSafeReference(to: ann)
        let results = ThreadSafeReference(to: db.dynamicObjects("Person").filter("name BEGINSWITH 'B'"))
        let names = try await Task.detached {
            let other = try Database(configuration: configuration)
            let resolved = other.resolve(reference)
            let found = other.resolve(results)
            return [resolved?.name as? String, found?.first?.name as? String]
        }.value
        #expect(names == ["Anna", "Bob"])
    }

    /// A type named `name` with one property, `label`, made through the store, and a setting
    /// whose mixed value holds one of its objects.
    func fileWithAStoreMadeType(_ name: String) throws -> Database.Configuration {
        let configuration = folder.configuration(objectTypes: [Setting.self, Appliance.self])
        do {
            let db = try Database(configuration: configuration)
            try db.write { db.create(Setting.self, value: ["id": 1]) }
        }
        let store = try Store.open(path: configuration.path, schema: nil)
        defer { store.close() }
        let session = try store.makeSession()
        defer { session.close() }
        try session.beginWrite()
        try session.addTables([ObjectSchema(name: name, properties: [PropertySchema(name: "label", kind: .string)])])
        let doohickeys = try #require(session.table(named: name))
        let doohickey = try doohickeys.insert([.string("gizmo")])
        let settings = try #require(session.table(named: "Setting"))
        let key = try #require(try settings.allKeys().first)
        let index = try #require(settings.schema.propertyIndex(named: "value"))
        try settings.set(.typedLink(table: doohickeys.tableID, key: doohickey), for: key, property: index)
        try session.commit()
        return configuration
    }

    @Test func aMixedValuesObjectOfAnUndeclaredClassIsADynamicObject() throws {
        let db = try Database(configuration: try fileWithAStoreMadeType("Doohickey"))
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        let doohickey = try #require(setting.value.object(DynamicObject.self))
        #expect(doohickey.typeName == "Doohickey" && doohickey.label as? String == "gizmo")
        #expect(db.dynamicObjects("Doohickey").count == 1)
    }

    @Test func aMixedValuesObjectOfAClassThatDoesNotFitTheFileIsADynamicObject() throws {
        // This process knows a class named Gadget (SectionedResultsTests), with other properties.
        #expect(try ClassInfo.of(Gadget.self).schema.properties.map(\.name) != ["label"])
        let db = try Database(configuration: try fileWithAStoreMadeType("Gadget"))
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        let gadget = try #require(setting.value.object(DynamicObject.self))
        #expect(gadget.typeName == "Gadget" && gadget.label as? String == "gizmo")
    }
}
