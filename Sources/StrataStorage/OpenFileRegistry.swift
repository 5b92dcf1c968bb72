// The process-wide registry of open engines: one engine per database file per process.
//
// The file locks that coordinate processes (LockFile.swift) belong to an open file description;
// two engines on one file in one process would exclude each other. `open(path:)` therefore
// hands out the engine already open on a file, keyed by its canonical path.

#if canImport(Glibc)
import Dispatch
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The engines open in this process, by canonical path. An entry's engine is weak: its last
/// reference going away closes the files (`deinit`), and the entry goes once they are closed.
enum OpenFileRegistry {
    static let engines = Locked<[String: Weak]>([:])
    struct Weak { weak var engine: StorageEngine? }

    /// Removes the entry for `key` if it names `engine` or an engine already gone.
    static func remove(_ key: String, of engine: StorageEngine) {
        engines.withLock { registry in
            if registry[key]?.engine === engine || registry[key]?.engine == nil { registry[key] = nil }
        }
    }

    /// The key a file is registered under: its real path, or (when it does not exist yet) its
    /// directory's real path and its name.
    static func canonicalPath(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let directory = directoryPart(path)
        if let resolved = realpath(directory, nil) {
            defer { free(resolved) }
            return String(cString: resolved) + "/" + lastPathComponent(path)
        }
        return path
    }
}

extension StorageEngine {
    /// Opens the database at `path`, creating it if nothing is there (unless read-only).
    /// A lock file named `path + "-lock"` and the commit log `path + "-log"` are kept beside
    /// it. Opening the same file again in the same process returns the same engine.
    ///
    /// What is at `path` decides what happens, and nothing but a missing path is ever created
    /// over (DatabasePath.swift):
    /// - nothing: a new database is created there (written under a temporary name and renamed
    ///   onto the path only if it is still missing). A commit log left beside it (its database
    ///   file was deleted) is not erased: it is moved aside to `path + "-log.orphaned"`.
    /// - a regular file: it is opened. An empty one is initialised in place as a new database
    ///   (its owner, mode and attributes kept), unless its commit log holds commits:
    ///   `StorageError.emptyDatabaseWithCommitLog`, and nothing is changed.
    /// - a symbolic link to a regular file: that file is opened as above, with its lock file
    ///   and commit log beside it (not beside the link), so that openers through different links
    ///   share them. `path` on the engine is then the target's path.
    /// - anything else (a directory, a device, a FIFO, a socket, a dangling symbolic link, a
    ///   loop of symbolic links, a link to any of these): `StorageError.notARegularFile`, and
    ///   it is left as it was. A symbolic link or non-regular file at the lock file's or the
    ///   commit log's path is refused the same way.
    ///
    /// An open that fails removes the files it created (the lock file, a new log, a new
    /// database file) while no other process can have opened them. A read-only open never
    /// creates a database or a log.
    public static func open(path given: String, options: StorageOptions = StorageOptions()) throws -> StorageEngine {
        let resolved = try DatabasePath.resolve(given)
        if options.readOnly && !resolved.exists {
            throw StorageError.ioFailure(operation: "open \(given) read-only (no database there)", code: ENOENT)
        }
        let path = resolved.path
        let key = OpenFileRegistry.canonicalPath(path)
        // An engine found closing is kept alive until the lock is released, so that its last
        // reference (and its deinit, which takes the registry lock) never goes away inside it.
        var closing: StorageEngine?
        defer { withExtendedLifetime(closing) {} }
        while true {
            let opened = try OpenFileRegistry.engines.withLock { registry -> StorageEngine? in
                if let entry = registry[key] {
                    if let engine = entry.engine {
                        if engine.retainOpen() { return engine }
                        // It is releasing its files right now: wait for that, or the new
                        // engine's locks would collide with the ones it still holds.
                        engine.released.wait()
                        closing = engine
                    } else {
                        // Its last reference went away and its deinit is closing the files;
                        // the entry goes when they are closed. Try again after that.
                        return nil
                    }
                }
                let engine = try StorageEngine(path: path, lockPath: path + "-lock", options: options, file: nil, log: nil, registryKey: key)
                registry[key] = OpenFileRegistry.Weak(engine: engine)
                return engine
            }
            if let opened { return opened }
            sched_yield()
        }
    }
}
