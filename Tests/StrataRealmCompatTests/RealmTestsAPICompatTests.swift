// APIs RealmSwift's own unit tests use, written the way those tests use them: key-value coding
// of collections, aggregates read as NSNumber/NSDate, filtering by NSPredicate, the class-level
// schema questions, a migration object's key-value coding and `Object.hash`.
import Foundation
import Synchronization
import Testing
import StrataRealmCompat

class RTAItem: Object {
    @Persisted var stringCol = ""
    @Persisted var intCol = 0
    @Persisted var doubleCol = 0.0
    @Persisted var dateCol = Date(timeIntervalSince1970: 0)
    @Persisted var optIntCol: Int?
    @Persisted var linkCol: RTATarget?
}

class RTATarget: Object {
    @Persisted var id = 0
    @Persisted(originProperty: "linkCol") var sources: LinkingObjects<RTAItem>
}

class RTAOwner: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted(indexed: true) var city = ""
    @Persisted(indexed: true) var age = 0
    @Persisted var items: List<RTAItem>
    @Persisted var itemSet: MutableSet<RTAItem>
    var transientNote = ""
}

class RTAUnkeyed: Object {
    @Persisted var amount = 0
}

/// What a migration block saw, collected across its `@Sendable` boundary.
final class RTALog: Sendable {
    let values = Mutex<[Int]>([])
}

@Suite struct RealmTestsAPICompatTests {
    private static func realm(_ types: [ObjectBase.Type] = [RTAItem.self, RTATarget.self, RTAOwner.self]) throws -> Realm {
        try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "rta-\(UUID().uuidString)", objectTypes: types))
    }

    /// Three items (intCol 1, 2, 3; stringCol "1", "2", "3"), all in one owner's list and set.
    private static func populated() throws -> (Realm, RTAOwner) {
        let realm = try realm()
        let owner = RTAOwner(value: ["name": "o"])
        try realm.write {
            for i in 1...3 {
                let item = RTAItem(value: ["stringCol": "\(i)", "intCol": i, "doubleCol": Double(i) / 2,
                                           "dateCol": Date(timeIntervalSince1970: Double(i)),
                                           "optIntCol": (i == 2 ? nil : i) as Any, "linkCol": ["id": i * 10]])
                owner.items.append(item)
                owner.itemSet.insert(item)
            }
            realm.add(owner)
        }
        return (realm, owner)
    }

    // MARK: value(forKey:) / value(forKeyPath:) / setValue(_:forKey:)

    @Test func testValueForKeyOnResultsListLinkingObjectsAndAnyRealmCollection() throws {
        let (realm, owner) = try Self.populated()
        let results = realm.objects(RTAItem.self).sorted(byKeyPath: "intCol")
        #expect(results.value(forKey: "stringCol") as! [String] == ["1", "2", "3"])
        #expect(owner.items.value(forKey: "intCol") as! [Int] == [1, 2, 3])
        #expect(AnyRealmCollection(results).value(forKey: "stringCol") as! [String] == ["1", "2", "3"])
        #expect(results.value(forKey: "self") as! [RTAItem] == Array(results))
        // A nil reads as NSNull, a dotted key follows the link.
        let optionals = results.value(forKey: "optIntCol") as! [Any]
        #expect(optionals[1] is NSNull)
        #expect(optionals[0] as? Int == 1)
        #expect(results.value(forKey: "linkCol.id") as! [Int] == [10, 20, 30])
        let target = try #require(realm.objects(RTATarget.self).filter("id == 20").first)
        #expect(target.sources.value(forKey: "stringCol") as! [String] == ["2"])
        #expect((target.sources.value(forKeyPath: "@count") as! NSNumber?)?.intValue == 1)
        #expect(target.sources.filter(NSPredicate(value: true)).count == 1)
    }

    @Test func testValueForKeyOnMutableSetGivesASet() throws {
        let (_, owner) = try Self.populated()
        let values = try #require(owner.itemSet.value(forKey: "stringCol") as? NSSet)
        #expect(values as! Set<String> == ["1", "2", "3"])
        let objects = try #require(owner.itemSet.value(forKey: "self") as? NSSet)
        #expect(objects.count == 3)
        let union = try #require(owner.itemSet.value(forKeyPath: "@unionOfObjects.intCol") as? NSSet)
        #expect(union as! Set<Int> == [1, 2, 3])
        #expect((owner.itemSet.value(forKeyPath: "@count") as! NSNumber?)?.intValue == 3)
    }

    @Test func testValueForKeyOnAnyRealmCollectionOfASetGivesASet() throws {
        let (_, owner) = try Self.populated()
        let collection = AnyRealmCollection(owner.itemSet)
        #expect(collection.value(forKey: "stringCol") as! Set<String>? == ["1", "2", "3"])
        #expect(AnyRealmCollection(owner.items).value(forKey: "stringCol") as! [String]? == ["1", "2", "3"])
        #expect((collection.value(forKeyPath: "@count") as! NSNumber?)?.intValue == 3)
    }

    @Test func testValueForKeyPath() throws {
        let (realm, owner) = try Self.populated()
        let collection = realm.objects(RTAItem.self).sorted(byKeyPath: "intCol")
        #expect(collection.value(forKeyPath: "@unionOfObjects.stringCol") as! NSArray? == ["1", "2", "3"] as NSArray)
        #expect((collection.value(forKeyPath: "@count") as! NSNumber?)?.int64Value == 3)
        #expect((collection.value(forKeyPath: "@max.intCol") as! NSNumber?)?.int64Value == 3)
        #expect((collection.value(forKeyPath: "@min.intCol") as! NSNumber?)?.int64Value == 1)
        #expect((collection.value(forKeyPath: "@sum.intCol") as! NSNumber?)?.int64Value == 6)
        #expect((collection.value(forKeyPath: "@avg.intCol") as! NSNumber?)?.doubleValue == 2.0)
        #expect((collection.value(forKeyPath: "@max.dateCol") as! NSDate?) == NSDate(timeIntervalSince1970: 3))
        // Lists and sets answer the same way; the avg ignores the nil.
        #expect((owner.items.value(forKeyPath: "@sum.doubleCol") as! NSNumber?)?.doubleValue == 3.0)
        #expect((owner.itemSet.value(forKeyPath: "@avg.optIntCol") as! NSNumber?)?.doubleValue == 2.0)
        #expect((owner.items.value(forKeyPath: "stringCol") as! [String]) == ["1", "2", "3"])
        // No values: min/max/avg are nil, count and sum zero.
        let none = collection.filter("intCol > 10")
        #expect(none.value(forKeyPath: "@max.intCol") == nil)
        #expect(none.value(forKeyPath: "@avg.intCol") == nil)
        #expect((none.value(forKeyPath: "@sum.intCol") as! NSNumber?)?.int64Value == 0)
        #expect((none.value(forKeyPath: "@count") as! NSNumber?)?.int64Value == 0)
    }

    @Test func testSetValueForKey() throws {
        let (realm, owner) = try Self.populated()
        let results = realm.objects(RTAItem.self)
        try realm.write { results.setValue("hi there!", forKey: "stringCol") }
        #expect(results.map(\.stringCol) == ["hi there!", "hi there!", "hi there!"])
        try realm.write { owner.items.setValue(7, forKey: "intCol") }
        #expect(results.map(\.intCol) == [7, 7, 7])
        try realm.write { owner.itemSet.setValue(nil, forKey: "optIntCol") }
        #expect(results.allSatisfy { $0.optIntCol == nil })
        // Setting the property a query filters on still reaches every object it matched.
        let sevens = realm.objects(RTAItem.self).filter("intCol == 7")
        try realm.write { sevens.setValue(8, forKey: "intCol") }
        #expect(results.map(\.intCol) == [8, 8, 8])
    }

    @Test func testUnmanagedListKeyValueCoding() {
        let owner = RTAOwner()
        owner.items.append(objectsIn: [RTAItem(value: ["intCol": 4]), RTAItem(value: ["intCol": 6])])
        #expect(owner.items.value(forKey: "intCol") as! [Int] == [4, 6])
        #expect((owner.items.value(forKeyPath: "@max.intCol") as! NSNumber?)?.int64Value == 6)
        owner.items.setValue(1, forKey: "intCol")
        #expect(owner.items.map(\.intCol) == [1, 1])
    }

    // MARK: Aggregates as NSNumber / NSDate

    @Test func testMinMaxSumAsFoundationTypes() throws {
        let (realm, owner) = try Self.populated()
        let results = realm.objects(RTAItem.self)
        #expect((results.min(ofProperty: "intCol") as NSNumber?)?.intValue == 1)
        #expect((results.max(ofProperty: "doubleCol") as NSNumber?)?.doubleValue == 1.5)
        #expect((results.sum(ofProperty: "intCol") as NSNumber).intValue == 6)
        #expect((results.average(ofProperty: "doubleCol") as NSNumber?)?.doubleValue == 1.0)
        #expect(results.min(ofProperty: "dateCol") as NSDate? == NSDate(timeIntervalSince1970: 1))
        #expect(owner.items.max(ofProperty: "dateCol") as NSDate? == NSDate(timeIntervalSince1970: 3))
        #expect((owner.itemSet.max(ofProperty: "optIntCol") as NSNumber?)?.intValue == 3)
        #expect((AnyRealmCollection(owner.items).sum(ofProperty: "doubleCol") as NSNumber).doubleValue == 3.0)
        let empty = results.filter("intCol > 10")
        #expect(empty.min(ofProperty: "intCol") as NSNumber? == nil)
        #expect(empty.max(ofProperty: "dateCol") as NSDate? == nil)
        #expect((empty.sum(ofProperty: "intCol") as NSNumber).intValue == 0)
        // The typed forms still answer as before.
        #expect(results.sum(ofProperty: "intCol") as Int == 6)
    }

    // MARK: filter(NSPredicate)

    @Test func testFilterValuePredicate() throws {
        let (realm, owner) = try Self.populated()
        #expect(owner.items.filter(NSPredicate(value: true)).map(\.intCol) == [1, 2, 3])
        #expect(owner.items.filter(NSPredicate(value: false)).isEmpty)
        #expect(realm.objects(RTAItem.self).filter(NSPredicate(value: true)).count == 3)
        #expect(owner.itemSet.filter(NSPredicate(value: false)).count == 0)
        // The result is a live query: it can be refined and sees later commits.
        let all = owner.items.filter(NSPredicate(value: true))
        #expect(all.filter("intCol > 1").count == 2)
        try realm.write { owner.items.append(RTAItem(value: ["intCol": 9])) }
        #expect(all.count == 4)
        #expect(owner.items.index(matching: NSPredicate(value: true)) == 0)
        #expect(owner.items.index(matching: NSPredicate(value: false)) == nil)
    }

    // MARK: Class-level schema

    @Test func testSchemaHasPrimaryKey() {
        #expect(RTAOwner.primaryKey() == "name")
        #expect(RTAUnkeyed.primaryKey() == nil)
        #expect(Object.primaryKey() == nil)
    }

    @Test func testIndexedAndIgnoredProperties() {
        #expect(RTAOwner.indexedProperties() == ["city", "age"])
        #expect(RTAItem.indexedProperties() == [])
        // Every stored property declared without @Persisted; computed ones are not stored.
        #expect(RTAOwner.ignoredProperties() == ["transientNote"])
        #expect(RTAItem.ignoredProperties() == [])
        #expect(Object.ignoredProperties() == [])
        #expect(RTAOwner.sharedSchema()?["transientNote"] == nil)
    }

    @Test func testSharedSchema() throws {
        #expect(Object.sharedSchema() == nil)
        let schema = try #require(RTAOwner.sharedSchema())
        #expect(schema.className == "RTAOwner")
        #expect(schema.properties.map(\.name) == ["name", "city", "age", "items", "itemSet"])
        let realm = try Self.realm()
        try realm.write { realm.add(RTAOwner(value: ["name": "x"])) }
        let managed = try #require(realm.objects(RTAOwner.self).first)
        #expect(managed.objectSchema.properties.map(\.name) == schema.properties.map(\.name))
    }

    // MARK: Object.hash

    @Test func testEqualityForObjectTypeWithPrimaryKey() throws {
        let realm = try Self.realm()
        try realm.write { realm.add(RTAOwner(value: ["name": "a"])) }
        let first = try #require(realm.object(ofType: RTAOwner.self, forPrimaryKey: "a"))
        let second = try #require(realm.object(ofType: RTAOwner.self, forPrimaryKey: "a"))
        #expect(first !== second)
        #expect(first == second)
        #expect(first.hash == second.hash)
        let unmanaged = RTAOwner(value: ["name": "a"])
        #expect(unmanaged.hash == unmanaged.hash)
        #expect(unmanaged != first)
    }

    // MARK: MigrationObject key-value coding

    private static func record(_ log: RTALog, _ value: Any?) {
        log.values.withLock { $0.append(value as? Int ?? -1) }
    }

    @Test func testMigrationObjectSetValueForKeySubscriptAndDynamicMember() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fileURL = folder.appendingPathComponent("migration.strata")
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: fileURL, objectTypes: [RTAUnkeyed.self]))
            try realm.write { realm.create(RTAUnkeyed.self, value: ["amount": 1]) }
        }
        let seen = RTALog()
        let configuration = Realm.Configuration(fileURL: fileURL, schemaVersion: 1, migrationBlock: { migration, _ in
            migration.enumerateObjects(ofType: RTAUnkeyed.className()) { oldObject, newObject in
                guard let oldObject, let newObject else { return }
                Self.record(seen, oldObject.value(forKey: "amount"))
                newObject.setValue(10, forKey: "amount")
                Self.record(seen, newObject["amount"])
                newObject["amount"] = 20
                Self.record(seen, newObject.amount)
                newObject.amount = 30
                Self.record(seen, newObject.value(forKey: "amount"))
            }
        }, objectTypes: [RTAUnkeyed.self])
        let realm = try Realm(configuration: configuration)
        #expect(seen.values.withLock { $0 } == [1, 10, 20, 30])
        #expect(realm.objects(RTAUnkeyed.self).first?.amount == 30)
    }
}
