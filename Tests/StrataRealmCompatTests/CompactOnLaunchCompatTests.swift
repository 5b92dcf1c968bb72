// RealmSwift's shouldCompactOnLaunch as its documentation shows it, and a compaction that runs.
import Foundation
import Testing
import StrataRealmCompat

class CompatNote: Object {
    @Persisted var text = ""
}

@Suite struct CompactOnLaunchCompatTests {
    @Test func theDocumentedBlockCompilesAndACompactionKeepsTheData() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fileURL = folder.appendingPathComponent("notes.strata")
        // The documentation's block: compact files over 100 MB that are less than half used.
        var configuration = Realm.Configuration(fileURL: fileURL, shouldCompactOnLaunch: { totalBytes, usedBytes in
            let oneHundredMB = 100 * 1024 * 1024
            return (totalBytes > oneHundredMB) && (Double(usedBytes) / Double(totalBytes)) < 0.5
        }, objectTypes: [CompatNote.self])
        configuration.maximumFileSize = 1 << 30
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { for i in 0..<100 { realm.create(CompatNote.self, value: ["text": "note \(i)"]) } }
        }
        configuration.shouldCompactOnLaunch = { _, _ in true }
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(CompatNote.self).count == 100)
    }
}

// RealmSwift's file functions: a migration run on its own, and the schema version of a file.
@Suite struct FileFunctionCompatTests {
    @Test func performMigrationAndSchemaVersionAtURL() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fileURL = folder.appendingPathComponent("notes.strata")
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: fileURL, objectTypes: [CompatNote.self]))
            try realm.write { realm.create(CompatNote.self, value: ["text": "a"]) }
        }
        #expect(try schemaVersionAtURL(fileURL) == 0)
        let configuration = Realm.Configuration(fileURL: fileURL, schemaVersion: 1, migrationBlock: { migration, oldSchemaVersion in
            if oldSchemaVersion < 1 {
                migration.enumerateObjects(ofType: CompatNote.className()) { _, newObject in newObject?["text"] = "migrated" }
            }
        }, objectTypes: [CompatNote.self])
        try Realm.performMigration(for: configuration)
        #expect(try schemaVersionAtURL(fileURL) == 1)
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(CompatNote.self).first?.text == "migrated")
    }
}

// RealmSwift's dynamic API, as its documentation uses it.
@Suite struct DynamicCompatTests {
    @Test func dynamicObjectsByName() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "dynamic-compat-\(UUID().uuidString)", objectTypes: [CompatNote.self]))
        try realm.write {
            realm.create(CompatNote.self, value: ["text": "typed"])
            realm.dynamicCreate("CompatNote", value: ["text": "dynamic"])
        }
        let notes = realm.dynamicObjects("CompatNote").sorted(byKeyPath: "text")
        #expect(notes.map { $0["text"] as? String } == ["dynamic", "typed"])
        #expect(notes.filter("text == 'typed'").first?.text as? String == "typed")
    }
}
