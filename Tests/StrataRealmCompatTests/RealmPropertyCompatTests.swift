// RealmSwift's legacy `RealmProperty<T?>` and `RealmOptional<T>` properties, used the way
// RealmSwift's ObjectTests and its optional-property tests use them: `.value` on unmanaged
// and managed objects, through a temporary (`results.first?.age.value`), key-value coding,
// nil, creating from a dictionary, freezing, queries and notifications.
import Foundation
import Testing
import StrataRealmCompat

class RPCDog: Object {
    @Persisted var name = ""
}

class RPCPerson: Object {
    @Persisted var name = ""
    let age = RealmProperty<Int?>()
    @Persisted var nickname: String?
    let weight = RealmOptional<Double>()
    let mood = RealmProperty<AnyRealmValue>()
    @Persisted var dogs: List<RPCDog>
}

class RPCLinkProperty: Object {
    @Persisted var name = ""
    let dog = RealmProperty<RPCDog?>()
}

@Suite("RealmProperty and RealmOptional (RealmSwift compat)")
struct RealmPropertyCompatTests {
    private static func withRealm(_ body: (Realm) throws -> Void) throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-rpc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("test.realm"),
                                                objectTypes: [RPCPerson.self, RPCDog.self])
        try body(try Realm(configuration: configuration))
    }

    @Test func unmanagedPropertiesStartNilAndHoldTheirValue() {
        let person = RPCPerson()
        #expect(person.age.value == nil)
        #expect(person.weight.value == nil)
        #expect(person.mood.value == .none)
        person.age.value = 3
        person.weight.value = 1.5
        person.mood.value = .string("calm")
        #expect(person.age.value == 3)
        #expect(person.weight.value == 1.5)
        #expect(person.mood.value == .string("calm"))
        person.age.value = nil
        #expect(person.age.value == nil)
    }

    @Test func addingAnUnmanagedObjectStoresTheValues() throws {
        try Self.withRealm { realm in
            let person = RPCPerson()
            person.name = "Ann"
            person.age.value = 30
            person.weight.value = 61.5
            person.mood.value = .int(7)
            person.nickname = "A"
            person.dogs.append(RPCDog(value: ["Rex"]))
            try realm.write { realm.add(person) }
            // The same property instances now read the stored values.
            #expect(person.age.value == 30)
            #expect(person.weight.value == 61.5)
            #expect(person.mood.value == .int(7))
            // The persisted properties declared around them keep their own columns.
            #expect(person.nickname == "A")
            #expect(person.dogs.map(\.name) == ["Rex"])
            let stored = try #require(realm.objects(RPCPerson.self).first)
            #expect(stored.age.value == 30)
            #expect(stored.nickname == "A")
        }
    }

    @Test func valueReadThroughATemporaryObject() throws {
        try Self.withRealm { realm in
            try realm.write { realm.create(RPCPerson.self, value: ["name": "Bo", "age": 41]) }
            // The object from `first` is a temporary that Swift may release before `.value`.
            #expect(realm.objects(RPCPerson.self).first?.age.value == 41)
            try realm.write { realm.objects(RPCPerson.self).first!.age.value = 42 }
            #expect(realm.objects(RPCPerson.self).first?.age.value == 42)
            try realm.write { realm.objects(RPCPerson.self).first?.age.value = nil }
            #expect(realm.objects(RPCPerson.self).first?.age.value == nil)
        }
    }

    @Test func propertyOutlivingItsObjectStaysLive() throws {
        try Self.withRealm { realm in
            try realm.write { realm.create(RPCPerson.self, value: ["name": "Cy", "age": 5]) }
            let age = realm.objects(RPCPerson.self).first!.age
            #expect(age.value == 5)
            try realm.write { age.value = 6 }
            #expect(age.value == 6)
            #expect(realm.objects(RPCPerson.self).first?.age.value == 6)
            try realm.write { realm.objects(RPCPerson.self).first!.age.value = 9 }
            #expect(age.value == 9)
        }
    }

    @Test func eachObjectOfAnIterationKeepsItsOwnProperty() throws {
        try Self.withRealm { realm in
            try realm.write {
                for index in 0..<20 { realm.create(RPCPerson.self, value: ["name": "p\(index)", "age": index]) }
            }
            var properties: [RealmProperty<Int?>] = []
            for person in realm.objects(RPCPerson.self).sorted(byKeyPath: "name") { properties.append(person.age) }
            let expected = (0..<20).map { "p\($0)" }.sorted().map { Int($0.dropFirst())! }
            #expect(properties.map(\.value) == expected)
        }
    }

    @Test func keyValueCodingReadsAndWritesTheProperty() throws {
        let unmanaged = RPCPerson(value: ["name": "Di", "age": 12, "weight": 40.0])
        #expect(unmanaged.value(forKey: "age") as? Int == 12)
        #expect(unmanaged["weight"] as? Double == 40.0)
        unmanaged.setValue(nil, forKey: "age")
        #expect(unmanaged.age.value == nil)
        unmanaged.setValue(13, forKey: "age")
        #expect(unmanaged.age.value == 13)
        try Self.withRealm { realm in
            try realm.write { realm.add(unmanaged) }
            #expect(unmanaged.value(forKey: "age") as? Int == 13)
            try realm.write { unmanaged.setValue(NSNull(), forKey: "age") }
            #expect(unmanaged.age.value == nil)
            #expect(unmanaged.value(forKey: "age") as? Int == nil)
            try realm.write { unmanaged["age"] = 14 }
            #expect(unmanaged.age.value == 14)
        }
    }

    @Test func frozenObjectKeepsItsVersionsValue() throws {
        try Self.withRealm { realm in
            let person = try realm.write { realm.create(RPCPerson.self, value: ["name": "Ed", "age": 1, "weight": 2.5]) }
            let frozen = person.freeze()
            try realm.write { person.age.value = 2 }
            #expect(frozen.age.value == 1)
            #expect(frozen.weight.value == 2.5)
            #expect(person.age.value == 2)
            #expect(frozen.thaw()?.age.value == 2)
        }
    }

    @Test func queriesFilterOnTheProperty() throws {
        try Self.withRealm { realm in
            try realm.write {
                realm.create(RPCPerson.self, value: ["name": "a", "age": 10])
                realm.create(RPCPerson.self, value: ["name": "b", "age": 20])
                realm.create(RPCPerson.self, value: ["name": "c"])
            }
            #expect(realm.objects(RPCPerson.self).filter("age > 15").map(\.name) == ["b"])
            #expect(realm.objects(RPCPerson.self).filter("age == nil").map(\.name) == ["c"])
            #expect(realm.objects(RPCPerson.self).max(ofProperty: "age") as Int? == 20)
        }
    }

    @Test func observationReportsTheChangedProperty() throws {
        try Self.withRealm { realm in
            let person = try realm.write { realm.create(RPCPerson.self, value: ["name": "Fi", "age": 1]) }
            var changes: [PropertyChange] = []
            let token = person.observe(keyPaths: ["age"]) { change in
                if case .change(_, let properties) = change { changes += properties }
            }
            defer { token.invalidate() }
            try realm.write { person.age.value = 2 }
            #expect(changes.map(\.name) == ["age"])
            #expect(changes.first?.newValue as? Int == 2)
        }
    }

    @Test func aRealmPropertyOfALinkIsRejected() {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-rpc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("test.realm"),
                                                objectTypes: [RPCLinkProperty.self, RPCDog.self])
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: configuration) }
    }
}
