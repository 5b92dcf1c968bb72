// RealmSwift's legacy `RealmProperty<T?>` / `RealmOptional<T>` properties named by Swift key
// paths (`observe(keyPaths: [\Person.age])`, `sorted(by: \.age.value)`) and made the primary
// key the way older RealmSwift models do it, by overriding `primaryKey()`.
import Foundation
import Testing
import StrataRealmCompat

class RPKOwner: Object {
    @Persisted var name = ""
    let age = RealmProperty<Int?>()
    let weight = RealmOptional<Double>()
}

class RPKDog: Object {
    @Persisted var name = ""
    @Persisted var owner: RPKOwner?
}

class RPKTag: Object {
    @Persisted var label = ""
    let number = RealmOptional<Int>()
    override class func primaryKey() -> String? { "number" }
}

class RPKLegacyStringKey: Object {
    @Persisted var code = ""
    @Persisted var title = ""
    override class func primaryKey() -> String? { "code" }
}

class RPKDeclaredKey: Object {
    @Persisted(primaryKey: true) var id = 0
}

class RPKMissingKey: Object {
    @Persisted var code = ""
    override class func primaryKey() -> String? { "identifier" }
}

class RPKTwoKeys: Object {
    @Persisted(primaryKey: true) var id = 0
    let number = RealmOptional<Int>()
    override class func primaryKey() -> String? { "number" }
}

@Suite("RealmProperty key paths and primaryKey() overrides (RealmSwift compat)")
struct RealmPropertyKeyPathCompatTests {
    private static func withRealm(_ types: [Object.Type] = [RPKOwner.self, RPKDog.self, RPKTag.self, RPKLegacyStringKey.self],
                                  _ body: (Realm) throws -> Void) throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-rpk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("test.realm"), objectTypes: types)
        try body(try Realm(configuration: configuration))
    }

    /// Collects the names of changed properties each notification reports.
    private final class ChangeLog {
        var names: [[String]] = []
    }

    @Test func observingTheKeyPathOfARealmPropertyReportsItsChanges() throws {
        try Self.withRealm { realm in
            let owner = try realm.write { realm.create(RPKOwner.self, value: ["name": "Ann", "age": 30]) }
            let log = ChangeLog()
            let token = owner.observe(keyPaths: [\RPKOwner.age]) { change in
                if case .change(_, let properties) = change { log.names.append(properties.map(\.name)) }
            }
            defer { token.invalidate() }
            try realm.write { owner.name = "Bea" }
            #expect(log.names.isEmpty)
            try realm.write { owner.age.value = 31 }
            #expect(log.names == [["age"]])
        }
    }

    @Test func observingTheValueKeyPathOfARealmOptionalReportsItsChanges() throws {
        try Self.withRealm { realm in
            let owner = try realm.write { realm.create(RPKOwner.self, value: ["name": "Ann"]) }
            let log = ChangeLog()
            let token = owner.observe(keyPaths: [\RPKOwner.weight.value]) { change in
                if case .change(_, let properties) = change { log.names.append(properties.map(\.name)) }
            }
            defer { token.invalidate() }
            try realm.write { owner.age.value = 4 }
            #expect(log.names.isEmpty)
            try realm.write { owner.weight.value = 70.5 }
            #expect(log.names == [["weight"]])
        }
    }

    @Test func sortingByTheValueKeyPathOrdersByTheStoredValue() throws {
        try Self.withRealm { realm in
            try realm.write {
                for (name, age) in [("b", 20), ("a", 35), ("c", 5)] {
                    realm.create(RPKOwner.self, value: ["name": name, "age": age])
                }
            }
            let owners = realm.objects(RPKOwner.self)
            #expect(owners.sorted(by: \.age.value).map(\.name) == ["c", "b", "a"])
            #expect(owners.sorted(by: \.age.value, ascending: false).map(\.name) == ["a", "b", "c"])
            #expect(owners.sorted(byKeyPath: "age").map(\.name) == ["c", "b", "a"])
        }
    }

    @Test func aKeyPathThroughALinkEndsAtTheLinkedRealmProperty() throws {
        try Self.withRealm { realm in
            try realm.write {
                for (dog, age) in [("Rex", 9), ("Ace", 2), ("Max", 5)] {
                    realm.create(RPKDog.self, value: ["name": dog, "owner": ["name": "owner of \(dog)", "age": age]])
                }
            }
            let dogs = realm.objects(RPKDog.self).sorted(by: \.owner?.age.value)
            #expect(dogs.map(\.name) == ["Ace", "Max", "Rex"])
        }
    }

    @Test func anOverriddenPrimaryKeyNamesARealmOptional() throws {
        #expect(RPKTag.primaryKey() == "number")
        #expect(RPKTag().objectSchema.primaryKeyProperty?.name == "number")
        let unmanaged = RPKTag()
        unmanaged.number.value = 1
        unmanaged.number.value = 0  // an unmanaged object's key may change
        #expect(unmanaged.number.value == 0)
        try Self.withRealm { realm in
            try realm.write {
                realm.create(RPKTag.self, value: ["label": "five", "number": 5])
                realm.create(RPKTag.self, value: ["label": "none"])
            }
            #expect(realm.object(ofType: RPKTag.self, forPrimaryKey: 5)?.label == "five")
            #expect(realm.object(ofType: RPKTag.self, forPrimaryKey: nil as Int?)?.label == "none")
            #expect(realm.object(ofType: RPKTag.self, forPrimaryKey: NSNull())?.label == "none")
            try realm.write {
                let replacement = RPKTag()
                replacement.number.value = 5
                replacement.label = "FIVE"
                realm.add(replacement, update: .modified)
            }
            #expect(realm.objects(RPKTag.self).count == 2)
            #expect(realm.object(ofType: RPKTag.self, forPrimaryKey: 5)?.label == "FIVE")
        }
    }

    @Test func anOverriddenPrimaryKeyNamesAPersistedProperty() throws {
        #expect(RPKLegacyStringKey.primaryKey() == "code")
        try Self.withRealm { realm in
            try realm.write {
                realm.create(RPKLegacyStringKey.self, value: ["code": "x1", "title": "first"])
                realm.create(RPKLegacyStringKey.self, value: ["code": "x1", "title": "second"], update: .modified)
            }
            #expect(realm.objects(RPKLegacyStringKey.self).count == 1)
            #expect(realm.object(ofType: RPKLegacyStringKey.self, forPrimaryKey: "x1")?.title == "second")
        }
    }

    @Test func aClassWithoutAnOverrideAnswersFromItsDeclaration() {
        #expect(RPKOwner.primaryKey() == nil)
        #expect(RPKDeclaredKey.primaryKey() == "id")
    }

    @Test func anOverrideNamingNoPropertyMakesTheClassUnusable() {
        #expect(throws: Realm.Error.self) {
            try Self.withRealm([RPKMissingKey.self]) { _ in }
        }
        #expect(RPKMissingKey.sharedSchema() == nil)
    }

    @Test func anOverrideNamingAnotherPropertyThanTheDeclaredKeyMakesTheClassUnusable() {
        #expect(throws: Realm.Error.self) {
            try Self.withRealm([RPKTwoKeys.self]) { _ in }
        }
    }
}
