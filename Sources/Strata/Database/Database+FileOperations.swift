public import Foundation
import StrataStorage
import StrataStore

// Whole-file operations RealmSwift offers besides opening: a compacted copy of a database
// (`writeCopy(toFile:)`, `writeCopy(configuration:)`), the schema version of a file
// (`schemaVersion(at:)`), a migration run without opening an instance (`performMigration`),
// and a seed file copied into place the first time a database opens
// (`Configuration.seedFilePath`).

extension Database {
    /// Writes a compacted copy of the database to `fileURL`: the version this instance reads
    /// (a frozen instance's own version; call `refresh()` first for the newest), with no free
    /// space and no history, synced before this returns. Open the copy as any database file,
    /// or ship it as a `seedFilePath`.
    ///
    /// The copy holds committed data only, so this throws inside a write transaction (where
    /// RealmSwift would include the uncommitted changes). Throws `fileExists` when `fileURL`
    /// exists. `encryptionKey` must be nil: Strata does not encrypt files.
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
        core.verify("writeCopy(toFile:)")
        let destination = fileURL.path
        guard encryptionKey == nil else {
            throw Error(.invalidInput, "Strata does not encrypt files; call writeCopy(toFile:) without an encryption key.", path: destination)
        }
        guard !isInWriteTransaction else {
            throw Error(.invalidInput, "writeCopy(toFile:) copies committed data only; commit or cancel the write transaction first.", path: destination)
        }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw Error(.fileExists, "Cannot write a copy to \(destination): the file exists.", path: destination)
        }
        do {
            try core.session.copyCompacted(to: destination)
        } catch {
            // Damage is in the file copied from; anything else concerns the copy.
            throw Error.wrap(error, path: DamageMarker.isCorruption(error) ? core.configuration.path : destination)
        }
    }

    /// Writes a compacted copy of the database to `configuration`'s file, as
    /// ``writeCopy(toFile:encryptionKey:)`` does; open the copy with that configuration. Throws
    /// `invalidInput` for an in-memory configuration (it names no file) and `fileExists` when
    /// the file exists.
    public func writeCopy(configuration: Configuration) throws {
        guard let fileURL = configuration.fileURL else {
            throw Error(.invalidInput, "writeCopy(configuration:) writes to the configuration's fileURL; an in-memory configuration has none.", path: configuration.path)
        }
        try writeCopy(toFile: fileURL)
    }

    /// Runs `configuration`'s migration on its file now, without keeping an instance open:
    /// what the first instance to open the file would otherwise do (creating the file if
    /// there is none). Call it to choose when a long migration runs, before any instance of
    /// the file is open in this process; while one is, this throws `alreadyOpen` (the
    /// migration ran when that instance opened). Errors are those opening would throw, such
    /// as `schemaMismatch` for a configuration whose `schemaVersion` is lower than the file's.
    public static func performMigration(for configuration: Configuration = .defaultConfiguration) throws {
        let path = configuration.path
        guard configuration.inMemoryIdentifier == nil else {
            throw Error(.invalidInput, "An in-memory database has no file to migrate: it starts empty with the configuration's schema.", path: path)
        }
        guard !StoreHandle.isOpen(configuration) else {
            throw Error(.alreadyOpen, "Cannot migrate \(path) while it is open in this process: its migration ran when it opened. Call performMigration(for:) before opening the file.", path: path)
        }
        let handle = try StoreHandle.acquire(configuration)
        StoreHandle.release(handle)
    }

    /// The schema version of the database file at `fileURL`, read without opening it for
    /// objects (and without changing it). Throws `fileNotFound` when there is no such file.
    /// `encryptionKey` must be nil: Strata does not encrypt files.
    public static func schemaVersion(at fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
        let path = fileURL.path
        guard encryptionKey == nil else {
            throw Error(.invalidInput, "Strata does not encrypt files; call schemaVersion(at:) without an encryption key.", path: path)
        }
        if let version = StoreHandle.openSchemaVersion(path: fileURL.standardizedFileURL.path) { return version }
        guard FileManager.default.fileExists(atPath: path) else {
            throw Error(.fileNotFound, "Cannot read the schema version of \(path): the file does not exist.", path: path)
        }
        var options = StorageOptions()
        options.readOnly = true
        do {
            let store = try Store.open(path: path, options: options, schema: nil)
            defer { store.close() }
            return store.schemaVersion
        } catch {
            throw Error.wrap(error, path: path)
        }
    }
}

extension StoreHandle {
    /// The schema version of a file this process has open, if it has.
    static func openSchemaVersion(path identity: String) -> UInt64? {
        withOpenHandle(identity: identity) { $0.store.schemaVersion }
    }
}

extension DatabaseCore {
    /// Copies the configuration's seed file (and its commit log, if it has one) to the
    /// database's path when nothing is there yet (not even a symbolic link or something else
    /// opening will refuse: the seed is never copied over or through anything).
    static func copySeedIfNeeded(_ configuration: Database.Configuration, path: String) throws(Database.Error) {
        var info = stat()
        guard let seed = configuration.seedFilePath, configuration.inMemoryIdentifier == nil,
              lstat(path, &info) != 0 && errno == ENOENT else { return }
        guard FileManager.default.fileExists(atPath: seed.path) else {
            throw Database.Error(.fileNotFound, "The seed file \(seed.path) does not exist.", path: seed.path)
        }
        do {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let seedLog = DatabaseFiles(path: seed.path).log
            var copiedLog = false
            if FileManager.default.fileExists(atPath: seedLog) {
                try FileManager.default.copyItem(atPath: seedLog, toPath: DatabaseFiles(path: path).log)
                copiedLog = true
            }
            do {
                try FileManager.default.copyItem(atPath: seed.path, toPath: path)
            } catch {
                // The log copied above is no use without its file.
                if copiedLog { try? FileManager.default.removeItem(atPath: DatabaseFiles(path: path).log) }
                throw error
            }
        } catch {
            // Another opener (another process) may have copied it first.
            if FileManager.default.fileExists(atPath: path) { return }
            throw Database.Error(.fileAccess, "Cannot copy the seed file \(seed.path) to \(path): \(error)", path: path)
        }
    }
}
