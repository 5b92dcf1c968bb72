// RealmSwift's dynamic API over a file whose classes the process only partly registers, and
// `ObjectBase` in generic code, written as RealmSwift's own tests use them.

import Foundation
import Testing
import StrataRealmCompat

class CompatOwner: Object {
    @Persisted(primaryKey: true) var name = ""
}

class CompatKennel: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var owner: CompatOwner?
    @Persisted var owners: List<CompatOwner>
    @Persisted var tags: MutableSet<String>
    @Persisted var annex: CompatKennel?
}

class CompatBadge: EmbeddedObject {
    @Persisted var text = ""
}

class CompatBadgeHolder: Object {
    @Persisted var badge: CompatBadge?
}

@Suite struct DynamicObjectCompatTests {
    let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")

    func configuration(_ types: [ObjectBase.Type]) -> Realm.Configuration {
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("kennels.strata"), objectTypes: types)
        configuration.maximumFileSize = 1 << 30
        return configuration
    }

    @Test func aFileOpenedWithSomeOfItsClassesListsAndReadsAllOfThem() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let realm = try Realm(configuration: configuration([CompatOwner.self, CompatKennel.self]))
            try realm.write {
                let ann = realm.create(CompatOwner.self, value: ["name": "Ann"])
                let main = realm.create(CompatKennel.self, value: ["id": 1, "owner": ann, "owners": [ann], "tags": ["big"]])
                realm.create(CompatKennel.self, value: ["id": 2, "annex": main])
            }
        }
        let realm = try Realm(configuration: configuration([CompatOwner.self]))
        #expect(realm.schema.objectSchema.map(\.className).sorted() == ["CompatKennel", "CompatOwner"])
        let kennels = realm.dynamicObjects("CompatKennel")
        #expect(kennels.count == 2)
        let main = try #require(realm.dynamicObject(ofType: "CompatKennel", forPrimaryKey: 1))
        #expect((main["owner"] as? CompatOwner)?.name == "Ann")
        let owners = try #require(main["owners"] as? List<DynamicObject>)
        #expect(owners.count == 1 && owners[0]["name"] as? String == "Ann")
        let annex = try #require(realm.dynamicObject(ofType: "CompatKennel", forPrimaryKey: 2)?["annex"] as? DynamicObject)
        #expect(annex["id"] as? Int == 1)
        try realm.write {
            main.dynamicList("owners").removeAll()
            let created = realm.dynamicCreate("CompatKennel", value: ["id": 3, "owners": [realm.dynamicObject(ofType: "CompatOwner", forPrimaryKey: "Ann")!]])
            created["annex"] = main
        }
        #expect(owners.isEmpty)
        #expect(realm.dynamicObjects("CompatKennel").filter("annex.id == 1").count == 2)
    }

    @Test func objectBaseIsTheBaseGenericCodeConstrainsTo() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        func typeName<T: ObjectBase>(_ object: T) -> String { type(of: object).className() }
        #expect(typeName(CompatOwner()) == "CompatOwner")
        #expect(typeName(CompatBadge()) == "CompatBadge", "an EmbeddedObject is an ObjectBase")
        let realm = try Realm(configuration: configuration([CompatOwner.self, CompatKennel.self]))
        let owner = CompatOwner(value: ["name": "Ann"])
        try realm.write { realm.add(owner) }
        let base: ObjectBase = owner
        var changes: [ObjectChange<ObjectBase>] = []
        let token = base.observe { (change: ObjectChange<ObjectBase>) in changes.append(change) }
        try realm.write { realm.delete(owner) }
        #expect(changes.count == 1)
        if case .deleted = changes.first {} else { Issue.record("expected .deleted, got \(changes)") }
        token.invalidate()
    }
}
