// RealmSwift's `Realm.Configuration(…, encryptionKey:, …)` initializer, and what a key means for
// Strata, whose files are not encrypted: a configuration with a key opens only once the app
// accepts an unencrypted file (`allowsUnencryptedFile`), and is refused with a typed error,
// before anything is imported or created, otherwise.
import Foundation
import Testing
import StrataRealmCompat

class EKCItem: Object {
    @Persisted var name = ""
}

@Suite("Configuration encryptionKey (RealmSwift compat)")
struct EncryptionKeyCompatTests {
    private static let key = Data((0..<64).map { UInt8($0) })

    private static func folder() throws -> URL {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-ekc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func theInitializerTakesRealmSwiftsParametersInItsOrder() {
        let url = URL(fileURLWithPath: "/tmp/ekc.realm")
        let config = Realm.Configuration(fileURL: url, inMemoryIdentifier: nil, syncConfiguration: nil, encryptionKey: Self.key,
                                         readOnly: true, schemaVersion: 3, migrationBlock: nil, deleteRealmIfMigrationNeeded: false,
                                         shouldCompactOnLaunch: nil, objectTypes: [EKCItem.self], seedFilePath: nil)
        #expect(config.fileURL == url)
        #expect(config.encryptionKey == Self.key)
        #expect(config.readOnly)
        #expect(config.schemaVersion == 3)
        #expect(config.objectTypes?.count == 1)
        #expect(!config.allowsUnencryptedFile)
        let memory = Realm.Configuration(inMemoryIdentifier: "ekc", encryptionKey: nil, deleteRealmIfMigrationNeeded: true)
        #expect(memory.inMemoryIdentifier == "ekc")
        #expect(memory.fileURL == nil)
        #expect(memory.deleteRealmIfMigrationNeeded)
    }

    @Test func theKeyBelongsToTheConfigurationValue() {
        let url = URL(fileURLWithPath: "/tmp/ekc-value.realm")
        var config = Realm.Configuration(fileURL: url, encryptionKey: Self.key)
        // Another configuration of the same file does not pick the key up …
        #expect(Realm.Configuration(fileURL: url).encryptionKey == nil)
        // … and the key stays with the value when its file changes.
        config.fileURL = URL(fileURLWithPath: "/tmp/ekc-other.realm")
        #expect(config.encryptionKey == Self.key)
        config.encryptionKey = nil
        #expect(config.encryptionKey == nil)
    }

    @Test func aKeyWithoutAcceptingAnUnencryptedFileIsRefused() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("app.strata")
        let config = Realm.Configuration(fileURL: url, encryptionKey: Self.key, objectTypes: [EKCItem.self])
        do {
            _ = try Realm(configuration: config)
            Issue.record("a configuration with an encryption key opened an unencrypted file")
        } catch let error as Realm.Error {
            #expect(error.code == .invalidInput)
            #expect(error.message.contains("allowsUnencryptedFile"))
        }
        #expect(!FileManager.default.fileExists(atPath: url.path))
        // Every way of opening checks it, not only Realm(configuration:).
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: config, queue: nil) }
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test func acceptingAnUnencryptedFileOpensIt() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var config = Realm.Configuration(fileURL: folder.appendingPathComponent("app.strata"), encryptionKey: Self.key,
                                         objectTypes: [EKCItem.self])
        config.allowsUnencryptedFile = true
        let realm = try Realm(configuration: config)
        try realm.write { realm.create(EKCItem.self, value: ["stored"]) }
        #expect(realm.objects(EKCItem.self).map(\.name) == ["stored"])
    }

    @Test func anEncryptedRealmFileIsNotImportedWithoutAcceptingAnUnencryptedFile() throws {
        let folder = try RealmFileImportCompatTests.folder(with: "encrypted")
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = Realm.Configuration(fileURL: folder.appendingPathComponent("default.realm"), encryptionKey: Self.key)
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: config) }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("default.strata").path))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("default.realm").path))
    }
}
