// Every way RealmSwift code opens a Realm — on a queue, with `asyncOpen`, with `try await` on
// the main actor or on an actor — imports an existing `.realm` file on the first open, as the
// synchronous `Realm(configuration:)` does.
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import Strata
import StrataRealmCompat
import StrataRealmFile

/// Opens a configuration isolated to itself, as an app's actor opens its Realm.
actor ImportingActor {
    /// The names of the imported `Item` objects, in primary-key order.
    func itemNames(_ configuration: Realm.Configuration) async throws -> [String] {
        let realm = try await Realm(configuration: configuration, actor: self)
        return Array(realm.objects(ImportedItem.self).sorted(byKeyPath: "id").map(\.name))
    }

    /// Adds one `Item`.
    func addItem(id: Int, name: String, _ configuration: Realm.Configuration) async throws {
        let realm = try await Realm(configuration: configuration, actor: self)
        try realm.write { realm.create(ImportedItem.self, value: ["id": id, "name": name]) }
    }
}

@Suite struct RealmFileImportOpenFormsTests {
    static let importedNames = ["apple", "bolt", "cable", "drill", "eraser"]

    /// A configuration for a fresh copy of the schema-v3 fixture as `default.realm`.
    static func configuration() throws -> Realm.Configuration {
        let folder = try RealmFileImportCompatTests.folder(with: "schema-v3")
        var config = Realm.Configuration(fileURL: folder.appendingPathComponent("default.realm"), schemaVersion: 3,
                                         objectTypes: [ImportedItem.self, ImportedNote.self])
        config.maximumFileSize = 1 << 30
        return config
    }

    static func strataURL(_ config: Realm.Configuration) throws -> URL {
        RealmFileSwitch.strataFileURL(for: try #require(config.fileURL))
    }

    /// The names in the folder that an import leaves only while it runs or when it fails.
    static func importLeftovers(_ config: Realm.Configuration) throws -> [String] {
        let folder = try #require(config.fileURL).deletingLastPathComponent()
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("import") }
    }

    static func remove(_ config: Realm.Configuration) {
        if let folder = config.fileURL?.deletingLastPathComponent() { try? FileManager.default.removeItem(at: folder) }
    }

    /// Strata finds the switch by this name when an app's first open runs no code of the compat
    /// module (an async open of a configuration built with Strata's own initializer).
    @Test func strataFindsTheSwitchByNameWithoutTheAppInstallingIt() {
        let providers = DatabaseOpenResolver.providerNames.compactMap { _typeByName($0) as? any DatabaseOpenResolverProviding.Type }
        #expect(providers.count == 1)
    }

    @Test func aQueueConfinedOpenImportsTheRealmFile() throws {
        let config = try Self.configuration()
        defer { Self.remove(config) }
        let original = try Data(contentsOf: try #require(config.fileURL))
        let queue = DispatchQueue(label: "realm-import-queue")
        let names = try queue.sync { () throws -> [String] in
            let realm = try Realm(configuration: config, queue: queue)
            #expect(realm.configuration.fileURL == (try Self.strataURL(config)))
            return Array(realm.objects(ImportedItem.self).sorted(byKeyPath: "id").map(\.name))
        }
        #expect(names == Self.importedNames)
        #expect(try Data(contentsOf: try #require(config.fileURL)) == original, "the Realm file is untouched")
        #expect(try Self.importLeftovers(config).isEmpty)
    }

    @Test func asyncOpenImportsTheRealmFileBeforeItsCallback() async throws {
        let config = try Self.configuration()
        defer { Self.remove(config) }
        let queue = DispatchQueue(label: "realm-import-callbacks")
        let result: Result<[String], any Error> = await withCheckedContinuation { continuation in
            Realm.asyncOpen(configuration: config, callbackQueue: queue) { result in
                continuation.resume(returning: result.map { realm in
                    Array(realm.objects(ImportedItem.self).sorted(byKeyPath: "id").map(\.name))
                })
            }
        }
        #expect(try result.get() == Self.importedNames)
        #expect(FileManager.default.fileExists(atPath: try Self.strataURL(config).path))
    }

    @MainActor @Test func anAwaitedOpenOnTheMainActorImportsTheRealmFile() async throws {
        let config = try Self.configuration()
        defer { Self.remove(config) }
        let realm = try await Realm(configuration: config)
        #expect(realm.configuration.fileURL == (try Self.strataURL(config)))
        #expect(Array(realm.objects(ImportedItem.self).sorted(byKeyPath: "id").map(\.name)) == Self.importedNames)
        #expect(realm.objects(ImportedNote.self).count == 2)
    }

    @Test func anActorIsolatedOpenImportsTheRealmFileAndLaterOpensKeepItsWrites() async throws {
        let config = try Self.configuration()
        defer { Self.remove(config) }
        let actor = ImportingActor()
        #expect(try await actor.itemNames(config) == Self.importedNames)
        try await actor.addItem(id: 5, name: "file", config)
        // Every other open form now opens the Strata file, the write included: no second import.
        #expect(try await ImportingActor().itemNames(config) == Self.importedNames + ["file"])
        let queue = DispatchQueue(label: "realm-import-reopen")
        let count = try queue.sync { try Realm(configuration: config, queue: queue).objects(ImportedItem.self).count }
        #expect(count == 6)
    }

    @Test func twoConcurrentAsyncOpensImportTheFileOnce() async throws {
        let config = try Self.configuration()
        defer { Self.remove(config) }
        let first = ImportingActor(), second = ImportingActor()
        async let a = first.itemNames(config)
        async let b = second.itemNames(config)
        let (namesA, namesB) = try await (a, b)
        #expect(namesA == Self.importedNames)
        #expect(namesB == Self.importedNames)
        #expect(try Self.importLeftovers(config).isEmpty, "no import's temporary file or lock is left behind")
        // Both instances share one Strata file: a write through one is seen by the other actor.
        try await first.addItem(id: 9, name: "glue", config)
        #expect(try await second.itemNames(config) == Self.importedNames + ["glue"])
    }

    @Test func aFIFONamedRealmWithAKeyIsRefusedWithoutBlockingTheOpen() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-fifo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("default.realm")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        var config = Realm.Configuration(fileURL: fifo)
        config.encryptionKey = Data(repeating: 7, count: 64)
        config.allowsUnencryptedFile = true
        config.objectTypes = []
        #expect(throws: (any Error).self) { try Realm(configuration: config) }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("default.strata").path))
    }

    @Test func anAsyncOpenWithTheWrongKeyThrowsTheReadersErrorAndImportsNothing() async throws {
        let folder = try RealmFileImportCompatTests.folder(with: "encrypted")
        defer { try? FileManager.default.removeItem(at: folder) }
        var config = Realm.Configuration(fileURL: folder.appendingPathComponent("default.realm"))
        config.allowsUnencryptedFile = true
        config.objectTypes = []
        config.encryptionKey = Data(repeating: 7, count: 64)
        await #expect(throws: RealmFileError.wrongEncryptionKey) { _ = try await ImportingActor().itemNames(config) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["default.realm"])
    }
}
