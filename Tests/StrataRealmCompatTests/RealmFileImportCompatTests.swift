// The invisible switch: an app written for RealmSwift opens its users' existing `.realm` files
// with `Realm(configuration:)`, as RealmSwift's own tests open files, and reads the data from
// the Strata file the first open imported it into.
import Foundation
import Testing
import StrataRealmCompat
import StrataRealmFile

/// The schema-v3 fixture's classes, as the app declares them.
class ImportedItem: Object {
    override class func className() -> String { "Item" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var price = 0.0
    @Persisted var tags: List<String>
}

class ImportedNote: Object {
    override class func className() -> String { "Note" }
    @Persisted var text = ""
    @Persisted var item: ImportedItem?
}

/// schema-v3 at version 4: `Item` gains `discounted`, set by the migration.
class ImportedItemV4: Object {
    override class func className() -> String { "Item" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var price = 0.0
    @Persisted var discounted = 0.0
    @Persisted var tags: List<String>
}

class ImportedNoteV4: Object {
    override class func className() -> String { "Note" }
    @Persisted var text = ""
    @Persisted var item: ImportedItemV4?
}

class ImportedPerson: Object {
    override class func className() -> String { "Person" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var score = 0.0
    @Persisted var active = false
    @Persisted var tags: List<String>
    @Persisted var friend: ImportedPerson?
}

@Suite struct RealmFileImportCompatTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("StrataRealmFileTests/Fixtures")

    /// A folder holding a copy of fixture `name` as `default.realm`.
    static func folder(with name: String) throws -> URL {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent(name + ".realm"), to: folder.appendingPathComponent("default.realm"))
        return folder
    }

    @Test func theFirstOpenImportsTheRealmFileAndLaterOpensUseTheStrataFile() throws {
        let folder = try Self.folder(with: "schema-v3")
        defer { try? FileManager.default.removeItem(at: folder) }
        let realmURL = folder.appendingPathComponent("default.realm")
        let original = try Data(contentsOf: realmURL)
        var config = Realm.Configuration(fileURL: realmURL, schemaVersion: 3, objectTypes: [ImportedItem.self, ImportedNote.self])
        config.maximumFileSize = 1 << 30
        do {
            let realm = try Realm(configuration: config)
            #expect(realm.configuration.fileURL == folder.appendingPathComponent("default.strata"))
            let items = realm.objects(ImportedItem.self).sorted(byKeyPath: "id")
            #expect(Array(items.map(\.name)) == ["apple", "bolt", "cable", "drill", "eraser"])
            #expect(items.first?.price == 3.75)
            #expect(Array(items[2].tags) == ["migrated", "bulk"])
            let notes = realm.objects(ImportedNote.self)
            #expect(notes.count == 2)
            #expect(notes.filter("text == 'added after the v3 migration'").first?.item?.name == "cable")
            try realm.write { realm.create(ImportedItem.self, value: ["id": 5, "name": "file", "price": 2.5]) }
        }
        #expect(try Data(contentsOf: realmURL) == original, "the Realm file is untouched")
        // Later opens use the Strata file: the write is there, nothing is imported again.
        let again = try Realm(configuration: config)
        #expect(again.objects(ImportedItem.self).count == 6)

        // Once the app is sure, the old file goes; the Strata file still opens.
        #expect(try RealmFileSwitch.removeImportedRealmFile(for: config))
        #expect(!FileManager.default.fileExists(atPath: realmURL.path))
        #expect(try Realm(configuration: config).objects(ImportedItem.self).count == 6)
    }

    @Test func theAppsMigrationBlockRunsAfterTheImportFromTheRealmFilesSchemaVersion() throws {
        let folder = try Self.folder(with: "schema-v3")
        defer { try? FileManager.default.removeItem(at: folder) }
        let seen = OldVersions()
        var config = Realm.Configuration(fileURL: folder.appendingPathComponent("default.realm"), schemaVersion: 4, migrationBlock: { migration, oldSchemaVersion in
            seen.append(oldSchemaVersion)
            migration.enumerateObjects(ofType: "Item") { old, new in
                new?["discounted"] = (old?["price"] as? Double ?? 0) * 0.5
            }
        }, objectTypes: [ImportedItemV4.self, ImportedNoteV4.self])
        config.maximumFileSize = 1 << 30
        let realm = try Realm(configuration: config)
        #expect(seen.values == [3])
        #expect(realm.object(ofType: ImportedItemV4.self, forPrimaryKey: 0)?.discounted == 1.875)
    }

    @Test func anEncryptedRealmFileIsImportedWithTheConfigurationsKey() throws {
        let folder = try Self.folder(with: "encrypted")
        defer { try? FileManager.default.removeItem(at: folder) }
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixtures.appendingPathComponent("encrypted.json"))) as? [String: Any])
        let hex = try #require(manifest["encryption_key_hex"] as? String)
        var key = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            key.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        var config = Realm.Configuration(fileURL: folder.appendingPathComponent("default.realm"))
        config.maximumFileSize = 1 << 30
        // The Strata file the Realm file is imported into is not encrypted: the app says it knows.
        config.allowsUnencryptedFile = true
        // The file's own schema: no model classes (other tests' classes are known in this process).
        config.objectTypes = []
        let strataFile = folder.appendingPathComponent("default.strata")
        var wrong = key
        wrong[40] ^= 1
        config.encryptionKey = wrong
        #expect(throws: RealmFileError.wrongEncryptionKey) { try Realm(configuration: config) }
        #expect(!FileManager.default.fileExists(atPath: strataFile.path))
        // With the right key the file is decrypted and imported whole, the mixed values holding
        // nested lists and dictionaries (AnyRealmValue.list/.dictionary) included.
        config.encryptionKey = key
        config.schemaVersion = 1  // the Realm file's
        let realm = try Realm(configuration: config)
        #expect(FileManager.default.fileExists(atPath: strataFile.path))
        let mixed = realm.dynamicObjects("MixedValues")
        #expect(mixed.count > 0)
        let lists = mixed.compactMap { $0["value"] as? List<AnyRealmValue> }
        let dictionaries = mixed.compactMap { $0["value"] as? Map<String, AnyRealmValue> }
        #expect(!lists.isEmpty || !dictionaries.isEmpty)
    }

    @Test func aCrashMidImportLeavesNoStrataFileAndTheNextLaunchStartsOver() throws {
        let folder = try Self.folder(with: "people-50k")
        defer { try? FileManager.default.removeItem(at: folder) }
        let realmURL = folder.appendingPathComponent("default.realm")
        let strataURL = RealmFileSwitch.strataFileURL(for: realmURL)
        // What a crash part way leaves: the import's temporary file, half written.
        let partial = RealmImport.temporaryURL(for: strataURL)
        try Data(repeating: 0x5A, count: 64 * 1024).write(to: partial)
        #expect(!FileManager.default.fileExists(atPath: strataURL.path))
        var config = Realm.Configuration(fileURL: realmURL, schemaVersion: 1, objectTypes: [ImportedPerson.self])
        config.maximumFileSize = 1 << 30
        let realm = try Realm(configuration: config)
        #expect(realm.objects(ImportedPerson.self).count == 44_961)
        #expect(realm.objects(ImportedPerson.self).filter("friend != nil").count > 20_000)
        #expect(!FileManager.default.fileExists(atPath: partial.path))
    }

    @Test func aDamagedRealmFileFailsTheOpenWithATypedErrorAndLeavesItAsItWas() throws {
        let folder = try Self.folder(with: "schema-v3")
        defer { try? FileManager.default.removeItem(at: folder) }
        let realmURL = folder.appendingPathComponent("default.realm")
        var bytes = try Data(contentsOf: realmURL)
        for offset in 24..<bytes.count { bytes[offset] = 0xFF }
        try bytes.write(to: realmURL)
        let config = Realm.Configuration(fileURL: realmURL, schemaVersion: 3, objectTypes: [ImportedItem.self, ImportedNote.self])
        #expect(throws: RealmFileError.self) { try Realm(configuration: config) }
        #expect(try Data(contentsOf: realmURL) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["default.realm"])
    }

    @Test func aStrataFileNamedRealmOpensAsItIs() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-import-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var config = Realm.Configuration(fileURL: folder.appendingPathComponent("app.realm"), objectTypes: [CompatNote.self])
        config.maximumFileSize = 1 << 30
        do {
            let realm = try Realm(configuration: config)
            try realm.write { realm.create(CompatNote.self, value: ["text": "kept"]) }
        }
        let realm = try Realm(configuration: config)
        #expect(realm.configuration.fileURL?.lastPathComponent == "app.realm")
        #expect(realm.objects(CompatNote.self).first?.text == "kept")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("app.strata").path))
    }
}

/// The versions a migration block saw (the block is `@Sendable`).
final class OldVersions: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [UInt64] = []
    func append(_ version: UInt64) { lock.lock(); seen.append(version); lock.unlock() }
    var values: [UInt64] { lock.lock(); defer { lock.unlock() }; return seen }
}
