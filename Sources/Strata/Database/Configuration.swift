public import Foundation
public import StrataStorage
import Synchronization

/// Called when a database opens with a higher `schemaVersion` than its file has. It receives
/// the migration and the file's old schema version.
public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void

extension Database {
    /// Where a database lives and how it opens. A value type, safe to share across threads and
    /// actors.
    public struct Configuration: Sendable, CustomStringConvertible {
        /// The file (nil for an in-memory database). Setting it clears `inMemoryIdentifier`.
        ///
        /// Opening never replaces what this names: nothing there → a new database; a regular
        /// file → opened (an empty one initialised, unless its commit log holds commits:
        /// `invalidDatabase`); a symbolic link to a regular file → that file, with its lock file
        /// and log beside it; anything else (a directory, a device, a FIFO, a dangling link) →
        /// `fileAccess`, left as it was.
        public var fileURL: URL? {
            didSet { if fileURL != nil { _inMemoryIdentifier = nil } }
        }
        private var _inMemoryIdentifier: String?
        /// Names an in-memory database: instances with the same identifier share the data
        /// while at least one is open. Setting it clears `fileURL`.
        public var inMemoryIdentifier: String? {
            get { _inMemoryIdentifier }
            set {
                _inMemoryIdentifier = newValue
                if newValue != nil { fileURL = nil }
            }
        }
        /// Open the file read-only: writes are errors and the file is never modified.
        public var readOnly: Bool
        /// The version of the schema the code declares. Raise it whenever the models change,
        /// and handle the change in `migrationBlock`.
        public var schemaVersion: UInt64
        /// Runs when the file's schema version is lower than `schemaVersion`.
        public var migrationBlock: MigrationBlock?
        /// Delete the file's data instead of failing when its schema does not match.
        public var deleteIfMigrationNeeded: Bool
        /// Decides whether to compact the file when this process first opens it (RealmSwift's
        /// name and meaning): called with the file's size and the bytes its data takes, both in
        /// bytes; return true to compact. Compaction writes a copy of the data without free
        /// space and replaces the file with it, and happens only when no other process, and no
        /// other instance in this one, has the database open. Not called for in-memory or
        /// read-only databases (setting it with `readOnly` is an error at open). A crash during
        /// compaction leaves the old file or the new one, either with every commit.
        ///
        /// ```swift
        /// configuration.shouldCompactOnLaunch = { totalBytes, usedBytes in
        ///     totalBytes > 100 * 1024 * 1024 && Double(usedBytes) / Double(totalBytes) < 0.5
        /// }
        /// ```
        public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)?
        /// The object types this database holds; nil means every `Object` subclass the
        /// process has registered (see `Database.register(_:)`) or used.
        public var objectTypes: [Object.Type]? {
            get { _objectTypes?.types }
            set { _objectTypes = newValue.map(TypeList.init) }
        }
        private var _objectTypes: TypeList?
        /// Durability of commits: `.full` (default) survives power loss once a commit returns;
        /// `.none` survives process crashes only.
        public var durability: Durability
        /// The largest the file may grow, in bytes (default 1 TiB). This much address space is
        /// reserved (not allocated) when the file opens, so that the mapping never moves. Where
        /// the process has no free range that large (many databases open at once, sanitizers),
        /// the open reserves the largest power-of-two fraction that is free and still holds
        /// the file, and the file cannot grow past that while it stays open
        /// (`.addressSpaceExhausted`); set a lower value to make the limit explicit.
        public var maximumFileSize: UInt64 = StorageOptions().maximumFileSize
        /// The most versions of the file that snapshots may pin at once (nil or 0: no limit).
        ///
        /// Every instance pins the version it reads, and a frozen snapshot pins its version
        /// until the last reference to it goes away; pages that a pinned version can reach are
        /// not reused, so a forgotten snapshot makes the file grow with every commit. With a
        /// limit, starting a write whose commit would leave more versions pinned (in every
        /// process) than this throws `Database.Error` with code `.tooManyActiveVersions`
        /// instead. RealmSwift's name and meaning.
        public var maximumNumberOfActiveVersions: UInt?
        /// A database file copied to `fileURL` when the database opens and no file is there
        /// yet (a prepopulated database shipped with the app, made with
        /// `Database.writeCopy(toFile:)`). Ignored for in-memory databases. RealmSwift's name.
        public var seedFilePath: URL?
        /// What opening does when the file's commit log (the `-log` file beside it) is
        /// damaged rather than cut short by a crash: `.refuse` (the default) throws
        /// `Database.Error` with code `.invalidDatabase`, naming the last version the log holds
        /// intact and how many durable commits after it would be lost. `.openAtLastGoodVersion`
        /// opens at that version instead, giving those commits up, and erases the damaged log;
        /// `Database.commitLogRecoveryReport` then says what was given up. Needs write access.
        /// `strata recover FILE` does the same from the command line.
        public var commitLogRecovery: CommitLogRecovery = .refuse
        /// Check the whole file when this process first opens it: every page and tree, then
        /// every object against its table's counter and indexes (what `strata verify` checks).
        /// A damaged file then fails the open with `Database.Error` code `.invalidDatabase`
        /// instead of being found later, by a read that cannot throw and stops the process.
        /// The check reads the whole file, so the first open takes time in proportion to the
        /// file's size; off by default. Strata runs the same check on its own when a process
        /// stopped on damage in this file before (see <doc:DamagedFiles>). Ignored for
        /// in-memory databases.
        public var verifyOnOpen = false
        /// A layer above `Strata` that takes part in every open of this file (sync's client).
        /// Not compared by `==`: two configurations of one file with and without it name the
        /// same database.
        package var attachment: (any DatabaseAttachment)?
        /// The key of an encrypted Realm file that the first open imports (StrataRealmCompat's
        /// `encryptionKey`). Strata files are not encrypted, so a file-backed configuration
        /// with a key opens only when `allowsUnencryptedFile` is set (`checkEncryption()`).
        package var realmEncryptionKey: Data?
        /// Whether the app accepts that its file is stored unencrypted although the
        /// configuration gives an encryption key (false by default). Strata does not encrypt
        /// its files, so a configuration with a key (StrataRealmCompat's `encryptionKey`, which
        /// reads an encrypted Realm file on the first open) opens only when this is true: set it
        /// once the app protects the data another way (the platform's data protection, an
        /// encrypted volume) or does not need to.
        public var allowsUnencryptedFile = false

        public init(fileURL: URL? = Configuration.defaultFileURL, inMemoryIdentifier: String? = nil, readOnly: Bool = false,
                    schemaVersion: UInt64 = 0, migrationBlock: MigrationBlock? = nil, deleteIfMigrationNeeded: Bool = false,
                    shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)? = nil,
                    objectTypes: [Object.Type]? = nil, durability: Durability = .full, seedFilePath: URL? = nil) {
            self.fileURL = inMemoryIdentifier == nil ? fileURL : nil
            self._inMemoryIdentifier = inMemoryIdentifier
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.deleteIfMigrationNeeded = deleteIfMigrationNeeded
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self._objectTypes = objectTypes.map(TypeList.init)
            self.durability = durability
            self.seedFilePath = seedFilePath
        }

        /// The default file: `default.strata` in the app's Documents folder on Apple
        /// platforms, and in the current directory elsewhere.
        public static var defaultFileURL: URL {
            #if canImport(Darwin)
            let folder = FileManager.default.urls(for: .documentDirectory, in: .userDomainMask).first
                ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            #else
            let folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
            #endif
            return folder.appendingPathComponent("default.strata")
        }

        private static let defaultStorage = Locked(Configuration(fileURL: nil, inMemoryIdentifier: nil))
        private static let hasDefault = Atomic<Bool>(false)

        /// The configuration `Database()` uses. Defaults to `defaultFileURL`.
        public static var defaultConfiguration: Configuration {
            get { hasDefault.load(ordering: .acquiring) ? defaultStorage.withLock { $0 } : Configuration() }
            set {
                defaultStorage.withLock { $0 = newValue }
                hasDefault.store(true, ordering: .releasing)
            }
        }

        /// The file path the database uses (a private temporary file for in-memory ones).
        var path: String {
            if let fileURL { return fileURL.path }
            let identifier = (inMemoryIdentifier ?? "").unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? String($0) : "_" }.joined()
            return NSTemporaryDirectory() + "/strata-memory-\(getpid())-\(identifier).strata"
        }

        /// What identifies the file across configurations.
        var identity: String { inMemoryIdentifier.map { "memory:" + $0 } ?? (fileURL?.standardizedFileURL.path ?? "") }

        public var description: String {
            "Database.Configuration(\(inMemoryIdentifier.map { "inMemoryIdentifier: \($0)" } ?? "fileURL: \(fileURL?.path ?? "nil")"), schemaVersion: \(schemaVersion), readOnly: \(readOnly), durability: \(durability))"
        }
    }
}

extension Database.Configuration: Equatable {
    /// Two configurations are equal when they open the same file the same way.
    public static func == (lhs: Database.Configuration, rhs: Database.Configuration) -> Bool {
        lhs.fileURL == rhs.fileURL && lhs.inMemoryIdentifier == rhs.inMemoryIdentifier && lhs.readOnly == rhs.readOnly
            && lhs.schemaVersion == rhs.schemaVersion
    }
}

extension Database.Configuration {
    /// Whether an instance opened with `other` behaves exactly like one opened with this
    /// configuration (the instance cache reuses instances only then).
    func opensIdentically(to other: Database.Configuration) -> Bool {
        self == other && durability == other.durability && deleteIfMigrationNeeded == other.deleteIfMigrationNeeded
            && maximumFileSize == other.maximumFileSize
            && maximumNumberOfActiveVersions == other.maximumNumberOfActiveVersions
            && objectTypes.map { $0.map(ObjectIdentifier.init) } == other.objectTypes.map { $0.map(ObjectIdentifier.init) }
    }
}

/// Object types in a configuration. Class metatypes are immutable, so sharing them is safe.
struct TypeList: @unchecked Sendable {
    let types: [Object.Type]
}
