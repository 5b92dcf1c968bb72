// The invisible switch: an app that moved from RealmSwift to StrataRealmCompat opens its
// users' existing Realm files as before, and gets them imported into Strata files on the
// first open.
public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StrataRealmFile

/// How a configuration whose `fileURL` names a Realm file opens a Strata file instead.
///
/// When any open — `Realm()`, `Realm(configuration:)`, `Realm(configuration:queue:)`,
/// `try await Realm(configuration:)`, `try await Realm(configuration:actor:)`,
/// `Realm.asyncOpen` — names a `fileURL` that holds a Realm file (its
/// header has Realm's `T-DB` mark, or the configuration has an ``Database/Configuration/encryptionKey``
/// and the file ends in `.realm`), and the Strata file beside it (``strataFileURL(for:)``:
/// `default.realm` → `default.strata`) does not exist yet, the Realm file is imported into
/// that Strata file first (``RealmImport``: atomic, the Realm file never written), and the
/// Strata file is opened. Every later open of the same configuration opens the Strata file,
/// whether or not the Realm file is still there. The app's `schemaVersion` and migration block
/// then apply to the Strata file as usual: its schema version is the Realm file's.
///
/// Once the app is sure its data arrived, ``removeImportedRealmFile(for:)`` deletes the Realm
/// file and its companions.
public enum RealmFileSwitch {
    /// The Strata file a Realm file at `realmURL` is imported into: the same name with the
    /// extension `strata` (`default.realm` → `default.strata`; a name without `.realm` gets
    /// `.strata` appended).
    public static func strataFileURL(for realmURL: URL) -> URL {
        if realmURL.pathExtension == "realm" { return realmURL.deletingPathExtension().appendingPathExtension("strata") }
        return realmURL.appendingPathExtension("strata")
    }

    /// The configuration to open: `configuration` itself, or, when its file is (or was) a Realm
    /// file, the same configuration naming the Strata file, after importing the Realm file if
    /// that has not happened yet.
    ///
    /// - Throws: ``RealmImportError`` and ``RealmFileError`` when the Realm file cannot be
    ///   imported (nothing is left behind; the next open tries again).
    public static func resolve(_ configuration: Database.Configuration) throws -> Database.Configuration {
        // Before anything is imported: the import is where the data leaves the encrypted file.
        try configuration.checkEncryption()
        guard let url = configuration.fileURL, configuration.inMemoryIdentifier == nil else { return configuration }
        let strataURL = strataFileURL(for: url)
        let manager = FileManager.default
        let sourceExists = manager.fileExists(atPath: url.path)
        let isRealm = sourceExists && isRealmFile(url, encryptionKey: configuration.encryptionKey)
        if manager.fileExists(atPath: strataURL.path) {
            // Imported before: open the Strata file, whether or not the Realm file is still there.
            guard !sourceExists || isRealm else { return configuration }
        } else {
            guard isRealm else { return configuration }
            try importFile(url, to: strataURL, encryptionKey: configuration.encryptionKey)
        }
        var resolved = configuration
        resolved.fileURL = strataURL
        return resolved
    }

    /// Deletes the Realm file that `configuration` names and the files Realm keeps beside it
    /// (`.lock`, `.note`, `.management`), once it has been imported (the Strata file exists).
    /// Returns whether there was a Realm file to delete. Call it once the app is sure its data
    /// arrived (after its first successful write to the Strata file, say): until then, the Realm
    /// file is the way back.
    @discardableResult
    public static func removeImportedRealmFile(for configuration: Database.Configuration) throws -> Bool {
        guard let url = configuration.fileURL else { return false }
        guard FileManager.default.fileExists(atPath: strataFileURL(for: url).path),
              FileManager.default.fileExists(atPath: url.path),
              isRealmFile(url, encryptionKey: configuration.encryptionKey) else { return false }
        try FileManager.default.removeItem(at: url)
        for suffix in [".lock", ".note", ".management"] {
            let companion = URL(fileURLWithPath: url.path + suffix)
            if FileManager.default.fileExists(atPath: companion.path) { try FileManager.default.removeItem(at: companion) }
        }
        return true
    }

    /// Whether the file at `url` is a Realm file: a regular file with Realm's header mark, or
    /// (encrypted files show none) a regular file named `.realm` with a key given. Opened
    /// non-blocking, so a FIFO or device at the path never blocks the open; anything but a
    /// regular file is not a Realm file (and Strata's own open then reports it).
    static func isRealmFile(_ url: URL, encryptionKey: Data?) -> Bool {
        let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return false }
        if encryptionKey != nil && url.pathExtension == "realm" { return true }
        var header = [UInt8](repeating: 0, count: 24)
        guard pread(descriptor, &header, 24, 0) == 24 else { return false }
        return Array(header[16..<20]) == Array("T-DB".utf8)
    }

    /// One import at a time in this process, so two opens of a configuration do not race
    /// (the import itself also locks its destination across processes).
    private static let importing = Mutex(())

    private static func importFile(_ source: URL, to destination: URL, encryptionKey: Data?) throws {
        try importing.withLock { _ in
            guard !FileManager.default.fileExists(atPath: destination.path) else { return }
            do {
                try RealmImport.importFile(at: source, to: destination, options: .init(encryptionKey: encryptionKey))
            } catch RealmImportError.destinationExists {
                // Another process (an app extension, a second instance) imported the file
                // while this one waited for the import lock: its Strata file is complete.
            }
        }
    }
}

extension Database.Configuration {
    /// RealmSwift's `encryptionKey` (64 bytes): the key of the encrypted Realm file that the
    /// first open imports (``RealmFileSwitch``). Strata files are not encrypted, so a
    /// configuration with a key opens only when
    /// ``Database/Configuration/allowsUnencryptedFile`` is also set;
    /// otherwise opening it throws `Realm.Error` (`.invalidInput`) before anything is read or
    /// written.
    public var encryptionKey: Data? {
        get { realmEncryptionKey }
        set { realmEncryptionKey = newValue }
    }

    /// RealmSwift's memberwise configuration initializer, with its parameters in its order
    /// (`encryptionKey` has no default here, which tells this initializer from Strata's own;
    /// leave it out to call that one). `syncConfiguration` is a synced file's settings
    /// (``User/flexibleSyncConfiguration(initialSubscriptions:rerunOnOpen:)``), and
    /// `deleteRealmIfMigrationNeeded` is Strata's `deleteIfMigrationNeeded`. Strata files are
    /// not encrypted: a non-nil `encryptionKey` reads an encrypted Realm file imported on the
    /// first open, and the configuration opens only once ``allowsUnencryptedFile`` is set.
    public init(fileURL: URL? = Database.Configuration.defaultFileURL, inMemoryIdentifier: String? = nil,
                syncConfiguration: SyncConfiguration? = nil, encryptionKey: Data?, readOnly: Bool = false,
                schemaVersion: UInt64 = 0, migrationBlock: MigrationBlock? = nil, deleteRealmIfMigrationNeeded: Bool = false,
                shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)? = nil, objectTypes: [Object.Type]? = nil,
                seedFilePath: URL? = nil) {
        self.init(fileURL: fileURL, inMemoryIdentifier: inMemoryIdentifier, readOnly: readOnly, schemaVersion: schemaVersion,
                  migrationBlock: migrationBlock, deleteIfMigrationNeeded: deleteRealmIfMigrationNeeded,
                  shouldCompactOnLaunch: shouldCompactOnLaunch, objectTypes: objectTypes, seedFilePath: seedFilePath)
        self.encryptionKey = encryptionKey
        self.attachment = syncConfiguration
    }
}

extension Database {
    /// Opens `configuration`, importing the Realm file it names first when there is one
    /// (``RealmFileSwitch``): RealmSwift's `Realm(configuration:)`.
    public init(configuration: Configuration) throws {
        RealmFileSwitchResolverProvider.install()
        try self.init(configuration: configuration, queue: nil)
    }

    /// Opens the default configuration, importing its Realm file first when there is one
    /// (``RealmFileSwitch``): RealmSwift's `Realm()`.
    public init() throws {
        RealmFileSwitchResolverProvider.install()
        try self.init(configuration: .defaultConfiguration, queue: nil)
    }
}
