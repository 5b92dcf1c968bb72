// RealmSwift's `MigrationObject` is its `DynamicObject`: code typed for `Object` or
// `DynamicObject` takes a migration's objects. Written the way RealmSwift's ObjectTests use it
// (`testSetValueForKey`, `testSubscript`, `testDynamicMemberSubscript`): the same checks run
// through `setValue(_:forKey:)`/`value(forKey:)` and through the subscript, on an object
// typed as `Object` and `DynamicObject`.
import Foundation
import Synchronization
import Testing
import StrataRealmCompat

class MOCBool: Object {
    @Persisted var boolCol = false
}

class MOCNode: Object {
    @Persisted var name = ""
    @Persisted var next: MOCNode?
}

class MOCObject: Object {
    @Persisted var boolCol = false
    @Persisted var intCol = 0
    @Persisted var int8Col: Int8 = 0
    @Persisted var int32Col: Int32? = nil
    @Persisted var stringCol = ""
    @Persisted var anyCol: AnyRealmValue
    @Persisted var objectCol: MOCBool?
    @Persisted var arrayCol: List<MOCBool>
    @Persisted var setCol: MutableSet<MOCBool>
}

/// The failed checks a migration block made, collected across its `@Sendable` boundary.
final class MOCFailures: Sendable {
    let messages = Mutex<[String]>([])

    func check(_ condition: Bool, _ message: String) {
        if !condition { messages.withLock { $0.append(message) } }
    }
}

@Suite("MigrationObject as DynamicObject (RealmSwift compat)")
struct MigrationObjectCompatTests {
    /// Runs `block` on the migrated `MOCObject` (as a new, writable migration object) of a
    /// file written at version 0, then returns the object the migration left.
    private static func withMigrationObject(_ block: @escaping @Sendable (MigrationObject, Migration) -> Void) throws -> MOCObject? {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-moc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fileURL = folder.appendingPathComponent("migration.strata")
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: fileURL, objectTypes: [MOCObject.self, MOCBool.self]))
            try realm.write { realm.create(MOCObject.self) }
        }
        let configuration = Realm.Configuration(fileURL: fileURL, schemaVersion: 1, migrationBlock: { migration, _ in
            migration.enumerateObjects(ofType: MOCObject.className()) { _, newObject in
                if let newObject { block(newObject, migration) }
            }
        }, objectTypes: [MOCObject.self, MOCBool.self])
        let realm = try Realm(configuration: configuration)
        guard let object = realm.objects(MOCObject.self).first else { return nil }
        return MOCObject(value: object)
    }

    /// The checks of RealmSwift's `dynamicSetAndTestAllTypes`, for the properties `MOCObject` has.
    private static func setAndTestAllTypes(_ setter: (DynamicObject, Any?, String) -> Void,
                                           getter: (DynamicObject, String) -> Any?,
                                           object: DynamicObject, boolObject: DynamicObject,
                                           _ failures: MOCFailures) {
        setter(object, true, "boolCol")
        failures.check(getter(object, "boolCol") as? Bool == true, "boolCol")
        setter(object, 321, "intCol")
        failures.check(getter(object, "intCol") as? Int == 321, "intCol")
        setter(object, Int8(1), "int8Col")
        failures.check(getter(object, "int8Col") as? Int8 == 1, "int8Col reads as the declared Int8")
        setter(object, Int32(321), "int32Col")
        failures.check(getter(object, "int32Col") as? Int32? == 321, "int32Col reads as the declared Int32?")
        setter(object, "z", "stringCol")
        failures.check(getter(object, "stringCol") as? String == "z", "stringCol")
        setter(object, "hello", "anyCol")
        failures.check(getter(object, "anyCol") as? String == "hello", "anyCol string")

        setter(object, boolObject, "anyCol")
        let anyLinked = getter(object, "anyCol") as? DynamicObject
        failures.check(anyLinked == boolObject, "anyCol reads the linked object as a DynamicObject equal to it")
        failures.check(anyLinked?["boolCol"] as? Bool == true, "anyCol's object by subscript")
        failures.check(anyLinked?.boolCol as? Bool == true, "anyCol's object by dynamic member")

        setter(object, boolObject, "objectCol")
        let linked = getter(object, "objectCol") as? DynamicObject
        failures.check(linked == boolObject, "objectCol reads the linked object as a DynamicObject equal to it")
        failures.check(linked?.boolCol as? Bool == true, "objectCol's object by dynamic member")

        setter(object, [boolObject], "arrayCol")
        let list = getter(object, "arrayCol") as? List<DynamicObject>
        failures.check(list?.count == 1 && list?.first == boolObject, "arrayCol reads as a List<DynamicObject> of the object")
        list?.removeAll()
        setter(object, list, "arrayCol")
        failures.check((getter(object, "arrayCol") as? List<DynamicObject>)?.count == 0, "arrayCol written from an emptied List")
        setter(object, [boolObject], "arrayCol")
        setter(object, nil, "arrayCol")
        failures.check((getter(object, "arrayCol") as? List<DynamicObject>)?.count == 0, "arrayCol emptied by nil")

        setter(object, [boolObject, boolObject], "setCol")
        let set = getter(object, "setCol") as? MutableSet<DynamicObject>
        failures.check(set?.count == 1 && set?[0] == boolObject, "setCol reads as a MutableSet<DynamicObject> of the one object")
        set?.removeAll()
        setter(object, set, "setCol")
        failures.check((getter(object, "setCol") as? MutableSet<DynamicObject>)?.count == 0, "setCol written from an emptied MutableSet")
    }

    @Test func testSetValueForKeyOnAMigrationObjectTypedAsObject() throws {
        let failures = MOCFailures()
        let migrated = try Self.withMigrationObject { migrationObject, migration in
            let setter: (Object, Any?, String) -> Void = { object, value, key in object.setValue(value, forKey: key) }
            let getter: (Object, String) -> Any? = { object, key in object.value(forKey: key) }
            let boolObject = migration.create("MOCBool", value: [true])
            Self.setAndTestAllTypes(setter, getter: getter, object: migrationObject, boolObject: boolObject, failures)
            setter(migrationObject, [boolObject], "arrayCol")
        }
        #expect(failures.messages.withLock { $0 } == [])
        #expect(migrated?.int8Col == 1)
        #expect(migrated?.int32Col == 321)
        #expect(migrated?.objectCol?.boolCol == true)
        #expect(migrated?.arrayCol.count == 1)
        #expect(migrated?.anyCol.object(MOCBool.self)?.boolCol == true)
    }

    @Test func testSubscriptOnAMigrationObjectTypedAsObject() throws {
        let failures = MOCFailures()
        let migrated = try Self.withMigrationObject { migrationObject, migration in
            let setter: (Object, Any?, String) -> Void = { object, value, key in object[key] = value }
            let getter: (Object, String) -> Any? = { object, key in object[key] }
            let boolObject = migration.create("MOCBool", value: [true])
            Self.setAndTestAllTypes(setter, getter: getter, object: migrationObject, boolObject: boolObject, failures)
        }
        #expect(failures.messages.withLock { $0 } == [])
        #expect(migrated?.stringCol == "z")
        #expect(migrated?.setCol.count == 0)
    }

    @Test func testDynamicMemberSubscriptOnAMigrationObject() throws {
        let failures = MOCFailures()
        _ = try Self.withMigrationObject { migrationObject, migration in
            let boolObject = migration.create("MOCBool", value: [true])
            migrationObject.anyCol = boolObject
            failures.check(migrationObject.anyCol as? DynamicObject == boolObject, "anyCol link")
            migrationObject.objectCol = boolObject
            failures.check(migrationObject.objectCol as? DynamicObject == boolObject, "objectCol link")
            migrationObject.anyCol = 12345
            failures.check(migrationObject.anyCol as? Int == 12345, "anyCol int")
            failures.check(migrationObject.typeName == "MOCObject", "typeName")
        }
        #expect(failures.messages.withLock { $0 } == [])
    }

    @Test func testOldAndNewMigrationObjectsOfOneObjectAreNotEqual() throws {
        let failures = MOCFailures()
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-moc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fileURL = folder.appendingPathComponent("migration.strata")
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: fileURL, objectTypes: [MOCBool.self]))
            try realm.write { realm.create(MOCBool.self, value: [true]) }
        }
        let configuration = Realm.Configuration(fileURL: fileURL, schemaVersion: 1, migrationBlock: { migration, _ in
            var seen: [DynamicObject] = []
            migration.enumerateObjects(ofType: "MOCBool") { oldObject, newObject in
                guard let oldObject, let newObject else { return failures.check(false, "both sides present") }
                failures.check(oldObject != newObject, "old != new")
                failures.check(Set([oldObject, newObject, oldObject]).count == 2, "hash follows ==")
                seen.append(newObject)
            }
            migration.enumerateObjects(ofType: "MOCBool") { _, newObject in
                failures.check(newObject.map { seen.contains($0) } == true, "a second enumeration's new object equals the first's")
            }
        }, objectTypes: [MOCBool.self])
        _ = try Realm(configuration: configuration)
        #expect(failures.messages.withLock { $0 } == [])
    }

    @Test func testDescriptionOfMigrationObjectsInALinkCycleIsBounded() throws {
        let failures = MOCFailures()
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-moc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fileURL = folder.appendingPathComponent("migration.strata")
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: fileURL, objectTypes: [MOCNode.self]))
            try realm.write {
                let a = realm.create(MOCNode.self, value: ["name": "a"])
                let b = realm.create(MOCNode.self, value: ["name": "b", "next": a])
                a.next = b
            }
        }
        let configuration = Realm.Configuration(fileURL: fileURL, schemaVersion: 1, migrationBlock: { migration, _ in
            migration.enumerateObjects(ofType: "MOCNode") { oldObject, _ in
                guard let oldObject else { return }
                let text = oldObject.description
                failures.check(text.hasPrefix("MOCNode {\n\tname = "), "description starts with the type and first property: \(text)")
                failures.check(text.contains("<Maximum depth exceeded>"), "the cycle ends at the depth bound")
            }
        }, objectTypes: [MOCNode.self])
        _ = try Realm(configuration: configuration)
        #expect(failures.messages.withLock { $0 } == [])
    }
}
