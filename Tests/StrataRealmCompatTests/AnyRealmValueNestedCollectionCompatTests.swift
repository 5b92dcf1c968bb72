// AnyRealmValue holding nested collections (RealmSwift 10.51's .list and .dictionary), used as
// RealmSwift's own mixed-collection tests use them: built with fromArray/fromDictionary or from
// a List/Map, assigned to unmanaged and managed objects, read with listValue/dictionaryValue,
// changed in place inside a write, observed, frozen, and queried by path.
import Foundation
import Testing
import StrataRealmCompat

class MixedCollectionHolder: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var anyValue: AnyRealmValue
    @Persisted var anyList: List<AnyRealmValue>
    @Persisted var anyMap: Map<String, AnyRealmValue>
}

@Suite struct AnyRealmValueNestedCollectionCompatTests {
    private func withRealm(_ body: (Realm) throws -> Void) throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-nested-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: Realm.Configuration(fileURL: folder.appendingPathComponent("nested.strata"),
                                                                 objectTypes: [MixedCollectionHolder.self]))
        try body(realm)
    }

    @Test func testListInAnyRealmValueOnUnmanagedAndManagedObject() throws {
        try withRealm { realm in
            let subList = List<AnyRealmValue>()
            subList.append(objectsIn: [.int(1), .string("hello"), .none])
            let object = MixedCollectionHolder()
            object.anyValue = .list(subList)
            #expect(object.anyValue.listValue?[0] == .int(1))
            #expect(object.anyValue.listValue?.count == 3)
            try realm.write { realm.add(object) }
            let managed = realm.object(ofType: MixedCollectionHolder.self, forPrimaryKey: 0)!
            #expect(managed.anyValue.listValue?[1] == .string("hello"))
            #expect(managed.anyValue.listValue?[2] == AnyRealmValue.none)
            #expect(managed.anyValue.dictionaryValue == nil)
        }
    }

    @Test func testDictionaryInAnyRealmValueOnUnmanagedAndManagedObject() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyValue = AnyRealmValue.fromDictionary(["key1": .string("hello"), "key2": .bool(false)])
            #expect(object.anyValue.dictionaryValue?["key1"] == .string("hello"))
            try realm.write { realm.add(object) }
            #expect(object.anyValue.dictionaryValue?["key2"] == .bool(false))
            #expect(object.anyValue.dictionaryValue?.count == 2)
            #expect(object.anyValue.listValue == nil)
        }
    }

    @Test func testNestedCollectionsInsideAnyRealmValue() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyValue = AnyRealmValue.fromArray([
                .fromDictionary(["key": .fromArray([.int(1), .fromDictionary(["deep": .string("value")])])]),
                .fromArray([.double(2.5)]),
            ])
            try realm.write { realm.add(object) }
            let deep = object.anyValue.listValue?[0].dictionaryValue?["key"]?.listValue?[1].dictionaryValue?["deep"]
            #expect(deep == .string("value"))
            #expect(object.anyValue.listValue?[1].listValue?[0] == .double(2.5))
        }
    }

    @Test func testMutatingNestedCollectionsOfManagedObjectPersists() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyValue = AnyRealmValue.fromArray([.int(1)])
            try realm.write { realm.add(object) }
            try realm.write {
                object.anyValue.listValue?.append(.string("two"))
                object.anyValue.listValue?[0] = .int(10)
            }
            #expect(object.anyValue.listValue.map(Array.init) == [.int(10), .string("two")])
            try realm.write { object.anyValue = AnyRealmValue.fromDictionary(["a": .int(1)]) }
            try realm.write {
                object.anyValue.dictionaryValue?["b"] = .fromArray([.bool(true)])
                object.anyValue.dictionaryValue?.removeObject(for: "a")
            }
            #expect(object.anyValue == AnyRealmValue.fromDictionary(["b": .fromArray([.bool(true)])]))
            realm.refresh()
            let again = realm.object(ofType: MixedCollectionHolder.self, forPrimaryKey: 0)!
            #expect(again.anyValue.dictionaryValue?["b"]?.listValue?[0] == .bool(true))
        }
    }

    @Test func testNestedCollectionsInListAndMapOfAnyRealmValue() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyList.append(AnyRealmValue.fromArray([.int(1), .int(2)]))
            object.anyMap["nested"] = AnyRealmValue.fromDictionary(["x": .string("y")])
            try realm.write { realm.add(object) }
            #expect(object.anyList[0].listValue?.count == 2)
            #expect(object.anyMap["nested"]?.dictionaryValue?["x"] == .string("y"))
        }
    }

    @Test func testObserveNestedCollectionChangeReportsProperty() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyValue = AnyRealmValue.fromArray([.int(1)])
            try realm.write { realm.add(object) }
            var changed: [String] = []
            let token = object.observe(keyPaths: ["anyValue"]) { change in
                if case .change(_, let properties) = change { changed += properties.map(\.name) }
            }
            try realm.write { object.anyValue.listValue?.append(.int(2)) }
            #expect(changed == ["anyValue"])
            token.invalidate()
        }
    }

    @Test func testFrozenObjectNestedCollectionIsFrozen() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyValue = AnyRealmValue.fromDictionary(["k": .fromArray([.int(1)])])
            try realm.write { realm.add(object) }
            let frozen = object.freeze()
            #expect(frozen.anyValue.dictionaryValue?.isFrozen == true)
            #expect(frozen.anyValue.dictionaryValue?["k"]?.listValue?.isFrozen == true)
            try realm.write { object.anyValue.dictionaryValue?["k"] = .int(2) }
            #expect(frozen.anyValue.dictionaryValue?["k"]?.listValue?[0] == .int(1))
        }
    }

    @Test func testQueryNestedCollectionsInAnyRealmValue() throws {
        try withRealm { realm in
            try realm.write {
                realm.create(MixedCollectionHolder.self, value: ["_id": 1, "anyValue": AnyRealmValue.fromArray([.int(1), .string("a")])])
                realm.create(MixedCollectionHolder.self, value: ["_id": 2, "anyValue": AnyRealmValue.fromDictionary(["key": .string("a")])])
                realm.create(MixedCollectionHolder.self, value: ["_id": 3, "anyValue": AnyRealmValue.string("a")])
            }
            let objects = realm.objects(MixedCollectionHolder.self)
            #expect(objects.filter("anyValue[0] == 1").map(\._id) == [1])
            #expect(objects.filter("anyValue['key'] == 'a'").map(\._id) == [2])
            #expect(objects.filter("anyValue[*] == 'a'").map(\._id).sorted() == [1, 2])
            #expect(objects.filter("anyValue.@size == 2").map(\._id) == [1])
            #expect(objects.filter("anyValue.@type == 'string'").map(\._id) == [3])
            #expect(objects.where { $0.anyValue[0] == .int(1) }.map(\._id) == [1])
            #expect(objects.where { $0.anyValue["key"] == .string("a") }.map(\._id) == [2])
            #expect(objects.where { $0.anyValue.any == .string("a") }.map(\._id).sorted() == [1, 2])
        }
    }
}
