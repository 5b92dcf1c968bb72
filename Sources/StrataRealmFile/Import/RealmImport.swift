public import Foundation
import StrataStorage
import StrataStore

/// Copies a Realm file into a new Strata file: the schema (``StrataSchemaMapping``), every
/// object with every value, links re-pointed at the copies, list order, sets, dictionaries,
/// embedded objects, and the schema version.
///
/// ```swift
/// let report = try RealmImport.importFile(at: realmURL, to: strataURL) { progress in
///     print(progress.className, progress.objectsCopied, "of", progress.objectCount)
/// }
/// ```
///
/// The import writes through the object store with the mapped schema at run time (the public
/// `Database.Configuration` takes model classes, which an importer does not have). It is
/// atomic: it writes a temporary file beside the destination (``temporaryURL(for:)``), syncs
/// it, and links it to the destination name only at the end (which fails rather than replace a
/// file that appeared meanwhile), then syncs the directory. A failure or a crash part way
/// leaves no destination; the next import removes the temporary file a crash left. The source
/// is opened read-only. Imports into one destination run one at a time, across processes
/// (``RealmImportLock``): a second one waits, then stops with
/// ``RealmImportError/destinationExists(path:)``.
///
/// Values are exact, with one limit of Strata's types: a Realm timestamp (seconds and
/// nanoseconds) becomes a `Date`, a `Double` of seconds, as RealmSwift also presents it, so
/// nanoseconds far from 2001 round to the nearest `Double`. Objects keep Realm's order but not
/// its object keys.
public enum RealmImport {
    /// How an import treats what Strata cannot hold.
    public struct Options: Sendable {
        /// The Realm file's 64-byte encryption key, if it is encrypted.
        public var encryptionKey: Data?
        /// Whether mixed values holding a nested list or dictionary are left out (and counted in
        /// ``RealmImportReport/skippedNestedCollections``) instead of imported as
        /// `MixedValue.list` and `.dictionary`. Off by default: nothing is dropped unless asked.
        public var skipNestedCollectionsInMixed: Bool

        /// Options; by default no key, and nested collections in mixed values imported.
        public init(encryptionKey: Data? = nil, skipNestedCollectionsInMixed: Bool = false) {
            self.encryptionKey = encryptionKey
            self.skipNestedCollectionsInMixed = skipNestedCollectionsInMixed
        }
    }

    /// Imports the Realm file at `source` into a new Strata file at `destination`.
    ///
    /// - Parameter progress: called as each class's objects are copied (every 1,000 objects
    ///   and at the end of each class). An error it throws stops the import (nothing is left
    ///   behind) and is rethrown: the way to cancel.
    /// - Throws: ``RealmImportError/destinationExists(path:)`` if `destination` exists,
    ///   ``RealmFileError`` if the source cannot be read (a wrong key, damage, another file
    ///   format), ``RealmFileError/unsupportedFeature(_:)`` for a schema Strata cannot hold,
    ///   and the other ``RealmImportError``s.
    @discardableResult
    public static func importFile(at source: URL, to destination: URL, options: Options = Options(),
                                  progress: ((RealmImportProgress) throws -> Void)? = nil) throws -> RealmImportReport {
        try refuseExisting(destination)
        let file: RealmFile
        if let key = options.encryptionKey {
            file = try RealmFile(url: source, encryptionKey: key)
        } else {
            file = try RealmFile(url: source)
        }
        return try importFile(file, to: destination, options: options, progress: progress)
    }

    /// Imports an opened Realm file into a new Strata file at `destination`.
    @discardableResult
    public static func importFile(_ file: RealmFile, to destination: URL, options: Options = Options(),
                                  progress: ((RealmImportProgress) throws -> Void)? = nil) throws -> RealmImportReport {
        try refuseExisting(destination)
        let lock = try RealmImportLock(destination: destination)
        defer { lock.release() }
        // Another import may have finished while this one waited for the lock.
        try refuseExisting(destination)
        let mapping = try StrataSchemaMapping(file.schema)
        let temporary = temporaryURL(for: destination)
        removeDatabaseFiles(at: temporary.path)
        do {
            var storageOptions = StorageOptions()
            // Every commit syncs the file itself, so the file alone holds the data when it is
            // renamed (no commit log to carry along).
            storageOptions.logsCommits = false
            let store: Store
            do {
                store = try Store.open(path: temporary.path, options: storageOptions, schema: mapping.schema,
                                       schemaVersion: file.schemaVersion ?? 0)
            } catch {
                throw RealmImportError.cannotWrite(path: destination.path, reason: "\(error)")
            }
            var report: RealmImportReport
            do {
                defer { store.close() }
                let session = try store.makeSession()
                defer { session.close() }
                var writer = RealmImportWriter(file: file, session: session, schema: store.schema, options: options)
                try writer.copyAll(progress: progress)
                report = writer.report
                report.schemaVersion = store.schemaVersion
            }
            try finish(temporary, at: destination)
            return report
        } catch {
            removeDatabaseFiles(at: temporary.path)
            throw error
        }
    }

    /// The temporary file an import into `destination` writes before renaming it: a hidden
    /// file beside it (`.NAME.importing`), so that the rename stays within one file system.
    public static func temporaryURL(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent("." + destination.lastPathComponent + ".importing")
    }

    private static func refuseExisting(_ destination: URL) throws {
        if FileManager.default.fileExists(atPath: destination.path) {
            throw RealmImportError.destinationExists(path: destination.path)
        }
    }

    /// Removes a Strata file and its companions (lock, commit log), ignoring what is missing.
    private static func removeDatabaseFiles(at path: String) {
        for name in DatabaseFiles(path: path).all {
            try? FileManager.default.removeItem(atPath: name)
        }
    }

    /// Syncs the finished temporary file, gives it the destination's name without replacing
    /// anything (a hard link, which fails if the name exists, then removing the temporary name),
    /// and syncs the directory so the new name survives a power loss.
    private static func finish(_ temporary: URL, at destination: URL) throws {
        try sync(path: temporary.path, directory: false)
        guard link(temporary.path, destination.path) == 0 else {
            let code = errno
            if code == EEXIST { throw RealmImportError.destinationExists(path: destination.path) }
            throw RealmImportError.cannotWrite(path: destination.path, reason: String(cString: strerror(code)))
        }
        removeDatabaseFiles(at: temporary.path)
        try sync(path: destination.deletingLastPathComponent().path, directory: true)
    }

    private static func sync(path: String, directory: Bool) throws {
        let descriptor = open(path, directory ? O_RDONLY | O_DIRECTORY : O_RDWR)
        guard descriptor >= 0 else {
            throw RealmImportError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw RealmImportError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
    }
}
