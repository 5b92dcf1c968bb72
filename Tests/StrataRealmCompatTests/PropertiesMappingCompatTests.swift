// RealmSwift's custom column names (`propertiesMapping()`), used as RealmSwift's own tests use
// them: the schema's `name` and `columnName`, queries by either name, and a migration whose old
// objects answer to the stored names and new objects to the Swift names.
import Foundation
import Synchronization
import Testing
import StrataRealmCompat

let compatCustomMapping: [String: String] = ["pk": "custom_pk", "intCol": "custom_intCol",
                                             "stringCol": "custom_stringCol", "objectCol": "custom_objectCol"]

class CompatCustomColumnObject: Object {
    @Persisted(primaryKey: true) var pk: ObjectId
    @Persisted var intCol = 0
    @Persisted var stringCol = ""
    @Persisted var objectCol: CompatCustomColumnObject?

    override class func propertiesMapping() -> [String: String] { compatCustomMapping }
}

/// The same stored type as `CompatCustomColumnObject` before its properties were mapped.
class CompatCustomColumnObjectV0: Object {
    override class func className() -> String { "CompatCustomColumnObject" }
    @Persisted(primaryKey: true) var custom_pk: ObjectId
    @Persisted var custom_intCol = 0
    @Persisted var custom_stringCol = ""
    @Persisted var custom_objectCol: CompatCustomColumnObjectV0?
}

@Suite struct PropertiesMappingCompatTests {
    private static func configuration(_ folder: URL, version: UInt64 = 0, types: [Object.Type],
                                      migration: MigrationBlock? = nil) -> Realm.Configuration {
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("mapping.strata"), schemaVersion: version,
                                                migrationBlock: migration, objectTypes: types)
        configuration.maximumFileSize = 1 << 30
        return configuration
    }

    private static func folder() -> URL {
        URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
    }

    @Test func testCustomColumnNameSchema() {
        let schema = CompatCustomColumnObject().objectSchema
        for property in schema.properties {
            #expect(compatCustomMapping[property.name] == property.columnName)
        }
        #expect(schema.properties.map(\.name) == ["pk", "intCol", "stringCol", "objectCol"])
    }

    @Test func testCustomColumnResultsQueriesBySwiftAndColumnName() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: Self.configuration(folder, types: [CompatCustomColumnObject.self]))
        let primaryKey = ObjectId.generate()
        try realm.write {
            let linked = realm.create(CompatCustomColumnObject.self, value: ["pk": ObjectId.generate(), "intCol": 2])
            realm.create(CompatCustomColumnObject.self, value: ["pk": primaryKey, "intCol": 1, "stringCol": "a", "objectCol": linked])
        }
        let results = realm.objects(CompatCustomColumnObject.self)
        #expect(results.filter("intCol == 1").count == 1)
        #expect(results.filter("custom_intCol == 1").count == 1)
        #expect(results.filter("objectCol.intCol == 2").count == 1)
        #expect(results.where { $0.stringCol == "a" }.first?.pk == primaryKey)
        #expect(results.index(matching: "stringCol == 'a'") != nil)
        #expect(results.sorted(byKeyPath: "intCol", ascending: false).first?.intCol == 2)
        #expect(realm.object(ofType: CompatCustomColumnObject.self, forPrimaryKey: primaryKey)?.intCol == 1)
        #expect(results.distinct(by: ["intCol"]).count == 2)
        #expect(results.sum(ofProperty: "intCol") as Int == 3)
        #expect(results.sum(ofProperty: "custom_intCol") as Int == 3)
    }

    @Test func testCustomColumnMigration() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let realm = try Realm(configuration: Self.configuration(folder, types: [CompatCustomColumnObjectV0.self]))
            try realm.write {
                realm.create(CompatCustomColumnObjectV0.self, value: ["custom_pk": ObjectId.generate(), "custom_intCol": 123, "custom_stringCol": "s"])
            }
        }
        // Mapping the Swift names onto the stored names keeps the columns: the schema version
        // changes only because the class did, and the data stays.
        let checked = Mutex(false)
        let realm = try Realm(configuration: Self.configuration(folder, version: 1, types: [CompatCustomColumnObject.self]) { migration, _ in
            migration.enumerateObjects(ofType: "CompatCustomColumnObject") { oldObject, newObject in
                guard let oldObject, let newObject else { return }
                #expect(oldObject["custom_intCol"] as? Int == 123)
                #expect(newObject["intCol"] as? Int == 123)
                #expect(newObject["stringCol"] as? String == "s")
                checked.withLock { $0 = true }
            }
        })
        #expect(checked.withLock { $0 })
        #expect(realm.objects(CompatCustomColumnObject.self).first?.intCol == 123)
    }
}
