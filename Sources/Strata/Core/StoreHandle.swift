// One open store per file in this process, shared by every instance of that file (live and
// frozen, in every context): the registry that opens a file on its first use, runs what the
// first open runs (seed copy, compaction on launch, migration, the damage check), and closes
// the file when its last user goes.

import Foundation
import StrataStore
import StrataStorage

/// One open store per file in this process, shared by every instance of that file.
final class StoreHandle: @unchecked Sendable {  // guarded by `registry`
    let store: Store
    let key: String
    let path: String
    let inMemory: Bool
    /// Whether the first opener opened the file read-only: the engine was opened so.
    let readOnly: Bool
    private var users = 0
    /// Follows commits to the file for the auto-refreshing instances; started by the first.
    let watcher: VersionWatcher

    private init(store: Store, key: String, path: String, inMemory: Bool, readOnly: Bool) {
        self.store = store
        self.readOnly = readOnly
        self.key = key
        self.path = path
        self.inMemory = inMemory
        self.watcher = VersionWatcher(engine: store.engine)
    }

    private static let registry = Locked<[String: StoreHandle]>([:])

    /// The handle of the configuration's file, opening the file if this process has not yet.
    /// With `requiringSameAccess` (a `Database` open), a file open here with the other
    /// `readOnly` setting is an error, as in RealmSwift: one process opens a file one way.
    static func acquire(_ configuration: Database.Configuration, requiringSameAccess: Bool = false) throws(Database.Error) -> StoreHandle {
        let key = configuration.identity
        let path = configuration.path
        if configuration.readOnly && configuration.shouldCompactOnLaunch != nil && configuration.inMemoryIdentifier == nil {
            throw Database.Error(.invalidInput, "shouldCompactOnLaunch cannot be set for a read-only database: compacting writes the file. Remove it, or open the file writable.", path: path)
        }
        do {
            return try registry.withLock { handles throws -> StoreHandle in
                if let handle = handles[key] {
                    if requiringSameAccess, handle.readOnly != configuration.readOnly, !handle.inMemory {
                        throw Database.Error(.alreadyOpen, """
                            Cannot open \(path) with readOnly = \(configuration.readOnly): this process has it open with \
                            readOnly = \(handle.readOnly). Open every instance of a file with the same readOnly setting, or \
                            close the other instances first.
                            """, path: path)
                    }
                    handle.users += 1
                    return handle
                }
                try DatabaseCore.copySeedIfNeeded(configuration, path: path)
                try compactIfAsked(configuration, path: path)
                let store = try openStore(configuration, path: path)
                do { try checkAtOpen(store, configuration, path: path) } catch {
                    DatabaseLogger.report(.error, "\(error)")
                    store.close()
                    throw error
                }
                if let report = store.engine.commitLogRecoveryReport {
                    DatabaseLogger.report(.warn, "Opened \(path) at its last good version: \(report)")
                }
                DatabaseLogger.report(.info, "Opened \(path)\(configuration.readOnly ? " read-only" : "") at schema version \(store.schemaVersion) with \(store.schema.objectSchemas.count) types")
                let handle = StoreHandle(store: store, key: key, path: path, inMemory: configuration.inMemoryIdentifier != nil,
                                         readOnly: configuration.readOnly)
                handle.users = 1
                handles[key] = handle
                return handle
            }
        } catch let error as Database.Error {
            throw error
        } catch {
            throw Database.Error.wrap(error, path: path)
        }
    }

    /// One more user of an open handle (a frozen instance of an open instance's file).
    static func retain(_ handle: StoreHandle) {
        registry.withLock { _ in handle.users += 1 }
    }

    static func release(_ handle: StoreHandle) {
        registry.withLock { handles in
            handle.users -= 1
            guard handle.users == 0 else { return }
            handles[handle.key] = nil
            handle.watcher.stop()
            handle.store.close()
            DatabaseLogger.report(.info, "Closed \(handle.path)")
            if handle.inMemory { DatabaseFiles(path: handle.path).removeAllQuietly() }
        }
    }

    /// Runs `body` with the handle of the file this process has open under `identity`, if any.
    static func withOpenHandle<R>(identity: String, _ body: (StoreHandle) -> R) -> R? {
        registry.withLock { handles in handles[identity].map(body) }
    }

    static func isOpen(_ configuration: Database.Configuration) -> Bool {
        registry.withLock { $0[configuration.identity] != nil }
    }

    /// Runs `shouldCompactOnLaunch` and compacts the file if it says so (see the property). The
    /// first open in this process: no instance here has the file open.
    private static func compactIfAsked(_ configuration: Database.Configuration, path: String) throws {
        guard let decide = configuration.shouldCompactOnLaunch, configuration.inMemoryIdentifier == nil, !configuration.readOnly else { return }
        let compacted = try StorageEngine.compactIfUnused(path: path, options: storageOptions(configuration)) { fileBytes, usedBytes in
            let yes = decide(Int(clamping: fileBytes), Int(clamping: usedBytes))
            DatabaseLogger.report(.debug, "shouldCompactOnLaunch for \(path) (\(fileBytes) bytes, \(usedBytes) used): \(yes)")
            return yes
        }
        if compacted { DatabaseLogger.report(.info, "Compacted \(path)") }
    }

    /// The engine's options for a configuration.
    private static func storageOptions(_ configuration: Database.Configuration) -> StorageOptions {
        var options = StorageOptions()
        options.durability = configuration.inMemoryIdentifier != nil ? .none : configuration.durability
        options.readOnly = configuration.readOnly
        options.maximumFileSize = configuration.maximumFileSize
        options.commitLogRecovery = configuration.commitLogRecovery
        return options
    }

    private static func openStore(_ configuration: Database.Configuration, path: String) throws -> Store {
        let options = storageOptions(configuration)
        if configuration.inMemoryIdentifier != nil {
            DatabaseFiles(path: path).removeAllQuietly()
        } else if !configuration.readOnly, let fileURL = configuration.fileURL, !fileExists(path) {
            // (When the file exists, so does its folder: the usual reopen skips this.)
            try? FileManager.default.createDirectory(atPath: fileURL.deletingLastPathComponent().path, withIntermediateDirectories: true)
        }
        let schema: Schema?
        // Without explicit object types, the schema is every model class this process has
        // used so far; classes used later are added to the file when first used.
        let types = configuration.objectTypes ?? ClassInfo.allKnown()
        schema = types.isEmpty ? nil : Schema(try ClassInfo.closure(of: types).map(\.schema))
        let policy: SchemaMismatchPolicy = configuration.deleteIfMigrationNeeded ? .deleteData : .migrate(renames: [:])
        let store: Store
        if configuration.readOnly && !FileManager.default.fileExists(atPath: path) {
            throw Database.Error(.fileNotFound, "Cannot open \(path) read-only: the file does not exist.", path: path)
        }
        let migration: ((StoreMigration) throws -> Void)? = configuration.migrationBlock.map { block in
            { context in
                DatabaseLogger.report(.info, "Migrating \(path) from schema version \(context.oldVersion) to \(configuration.schemaVersion)")
                let migration = Migration(context: context, databasePath: configuration.inMemoryIdentifier == nil ? path : nil)
                block(migration, context.oldVersion)
                // A store error the block met: the open fails and the migration rolls back.
                if let error = migration.failure.error { throw error }
            }
        }
        do {
            store = try Store.open(path: path, options: options, schema: schema, schemaVersion: configuration.schemaVersion,
                                   policy: policy, migration: migration)
        } catch {
            if case .schemaMismatch = error, configuration.deleteIfMigrationNeeded {
                DatabaseLogger.report(.info, "Deleting \(path): its schema needs a migration and deleteIfMigrationNeeded is set")
                try? FileManager.default.removeItem(atPath: path)
                return try Store.open(path: path, options: options, schema: schema, schemaVersion: configuration.schemaVersion, policy: policy)
            }
            throw error
        }
        return store
    }
}

/// Whether something exists at `path` (one `stat`, without Foundation's path handling).
private func fileExists(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0
}
