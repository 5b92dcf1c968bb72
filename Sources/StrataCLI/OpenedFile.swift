// Opening an existing database file for the commands that read it: the checks made before an
// engine opens it, and the engine with its object store when it has one.

import Foundation
import StrataStorage
import StrataStore

/// Refuses a missing path, a directory and an empty file before an engine opens them.
func checkIsDatabaseFile(_ path: String) throws(CommandFailure) {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw CommandFailure(path: path, "no such file")
    }
    guard !isDirectory.boolValue else { throw CommandFailure(path: path, "is a directory, not a database file") }
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    if size == 0 { throw CommandFailure(path: path, "the file is empty, not a database") }
}

/// Opens an existing database file read-only. The checks before the engine opens it keep a
/// missing path or a directory from getting a lock file created beside it, and word the
/// common mistakes plainly.
func openEngine(_ path: String) throws(CommandFailure) -> StorageEngine {
    try checkIsDatabaseFile(path)
    do {
        return try StorageEngine.open(path: path, options: StorageOptions(readOnly: true))
    } catch {
        throw CommandFailure(path: path, error)
    }
}

/// The object store of an opened engine file, as it is in the file (no schema asked for); nil
/// for a plain engine file. Once it opens, the store owns the engine (closing it closes the
/// engine); when it throws, the caller still owns the engine.
func openStore(on engine: StorageEngine) throws(StoreError) -> Store? {
    do { return try Store.open(engine: engine, schema: nil) } catch .notAnObjectDatabase { return nil }
}

/// An engine file opened read-only, with its object store when it has one. Close it when done.
struct OpenedFile {
    let path: String
    let engine: StorageEngine
    /// nil for a plain engine file: trees without Strata's object schema.
    let store: Store?

    init(_ path: String) throws(CommandFailure) {
        self.path = path
        engine = try openEngine(path)
        do {
            store = try openStore(on: engine)
        } catch {
            engine.close()
            throw CommandFailure(path: path, error)
        }
    }

    /// A session reading the newest version.
    func makeSession() throws(CommandFailure) -> StoreSession? {
        guard let store else { return nil }
        do { return try store.makeSession() } catch { throw CommandFailure(path: path, error) }
    }

    func close() {
        // The store owns the engine once it opened: closing it closes the engine.
        if let store { store.close() } else { engine.close() }
    }
}
