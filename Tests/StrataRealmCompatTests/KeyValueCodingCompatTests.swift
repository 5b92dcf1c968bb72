// RealmSwift's key-value coding of collections, NSNull keys, extra dictionary keys and
// aggregates of unmanaged lists, compiled against the RealmSwift names.
import Foundation
import Testing
import StrataRealmCompat

class CompatKVCDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

class CompatKVCOwner: Object {
    @Persisted(primaryKey: true) var id: Int?
    @Persisted var dogs: List<CompatKVCDog>
    @Persisted var dogSet: MutableSet<CompatKVCDog>
}

@Suite struct KeyValueCodingCompatTests {
    private static func realm() throws -> (Realm, URL) {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("kvc.strata"),
                                                deleteRealmIfMigrationNeeded: false,
                                                objectTypes: [CompatKVCDog.self, CompatKVCOwner.self])
        configuration.maximumFileSize = 1 << 30
        return (try Realm(configuration: configuration), folder)
    }

    @Test func testAssignResultsAndAnyRealmCollectionToListByKey() throws {
        let (realm, folder) = try Self.realm()
        defer { try? FileManager.default.removeItem(at: folder) }
        try realm.write {
            realm.create(CompatKVCDog.self, value: ["name": "Rex", "age": 2, "notAProperty": 1])
            realm.create(CompatKVCDog.self, value: ["name": "Bo", "age": 4])
            let owner = realm.create(CompatKVCOwner.self, value: ["id": NSNull(), "dogs": realm.objects(CompatKVCDog.self)])
            owner["dogSet"] = AnyRealmCollection(realm.objects(CompatKVCDog.self).filter("age > 3"))
        }
        let owner = try #require(realm.object(ofType: CompatKVCOwner.self, forPrimaryKey: NSNull()))
        #expect(owner.dogs.map(\.name) == ["Rex", "Bo"])
        #expect(owner.dogSet.map(\.name) == ["Bo"])
    }

    @Test func testUnmanagedListAggregates() {
        let owner = CompatKVCOwner()
        owner.dogs.append(objectsIn: [CompatKVCDog(value: ["age": 2]), CompatKVCDog(value: ["age": 4])])
        #expect(owner.dogs.sum(ofProperty: "age") as Int == 6)
        #expect(owner.dogs.average(ofProperty: "age") as Double? == 3)
        #expect(owner.dogs.max(of: \.age) == 4)
    }
}
