// Key-value coding of an AnyRealmValue property as RealmSwift's own object tests use it:
// value(forKey:) and the subscript read the value the AnyRealmValue holds (a String, an Int,
// an object; nil when empty), and setting accepts both plain values and AnyRealmValue.
import Foundation
import Testing
import StrataRealmCompat

class KVCAnyHolder: Object {
    @Persisted var name = ""
    @Persisted var anyCol: AnyRealmValue
}

class KVCAnyTarget: Object {
    @Persisted var boolCol = false
}

@Suite struct AnyRealmValueKeyValueCodingTests {
    private func makeRealm(_ folder: URL) throws -> Realm {
        try Realm(configuration: Realm.Configuration(fileURL: folder.appendingPathComponent("kvc.strata"),
                                                     objectTypes: [KVCAnyHolder.self, KVCAnyTarget.self]))
    }

    private func withRealm(_ body: (Realm) throws -> Void) throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-kvc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(try makeRealm(folder))
    }

    @Test func testValueForKeyReadsTheHeldValueOfAManagedObject() throws {
        try withRealm { realm in
            let holder = try realm.write { realm.create(KVCAnyHolder.self, value: ["anyCol": "hello"]) }
            #expect(holder.value(forKey: "anyCol") as? String == "hello")
            #expect(holder["anyCol"] as? String == "hello")
            #expect(!(holder.value(forKey: "anyCol") is AnyRealmValue))
            try realm.write { holder.anyCol = .int(7) }
            #expect(holder.value(forKey: "anyCol") as? Int == 7)
            try realm.write { holder.anyCol = .none }
            #expect(holder.value(forKey: "anyCol") == nil)
        }
    }

    @Test func testSetValueForKeyAcceptsPlainValuesAndAnyRealmValue() throws {
        try withRealm { realm in
            let holder = try realm.write { realm.create(KVCAnyHolder.self) }
            try realm.write {
                holder.setValue("plain", forKey: "anyCol")
                #expect(holder.anyCol == .string("plain"))
                holder.setValue(AnyRealmValue.double(2.5), forKey: "anyCol")
                #expect(holder.anyCol == .double(2.5))
                holder["anyCol"] = 12
                #expect(holder["anyCol"] as? Int == 12)
                holder["anyCol"] = AnyRealmValue.bool(true)
                #expect(holder["anyCol"] as? Bool == true)
            }
        }
    }

    @Test func testObjectInAnyRealmValueReadsAsTheObject() throws {
        try withRealm { realm in
            let target = KVCAnyTarget()
            target.boolCol = true
            let holder = try realm.write { () -> KVCAnyHolder in
                let holder = realm.create(KVCAnyHolder.self)
                holder.setValue(target, forKey: "anyCol")
                return holder
            }
            let read = try #require(holder.value(forKey: "anyCol") as? KVCAnyTarget)
            #expect(read.isSameObject(as: realm.objects(KVCAnyTarget.self).first))
            #expect(read.boolCol)
            // Key paths through the collection's key-value coding walk into the held object.
            let flags = realm.objects(KVCAnyHolder.self).value(forKeyPath: "anyCol.boolCol") as? [Any]
            #expect(flags?.first as? Bool == true)
        }
    }

    @Test func testUnmanagedObjectReadsTheHeldValue() {
        let holder = KVCAnyHolder()
        holder.anyCol = .string("x")
        #expect(holder.value(forKey: "anyCol") as? String == "x")
        holder.setValue(3, forKey: "anyCol")
        #expect(holder.anyCol == .int(3))
        #expect(holder["anyCol"] as? Int == 3)
    }

    @Test func testCreatingFromAnotherObjectCopiesTheHeldValue() throws {
        try withRealm { realm in
            let source = KVCAnyHolder()
            source.anyCol = .string("copied")
            let copy = try realm.write { realm.create(KVCAnyHolder.self, value: source) }
            #expect(copy.anyCol == .string("copied"))
        }
    }
}
