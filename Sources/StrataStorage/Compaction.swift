// A compacted copy: one version written to a new file with nothing free, pages filled in key
// order.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension StorageEngine {
    /// Writes the newest version to a new database file at `destination`, as small as it can
    /// be: no free pages, no history, trees packed in key order. The copy is synced before this
    /// returns. Fails if `destination` exists.
    public func copyCompacted(to destination: String) throws {
        let source = try beginRead()
        defer { source.close() }
        try copyCompacted(from: source, to: destination)
    }

    /// Writes the version `source` reads (a read transaction of this engine) to a new database
    /// file at `destination`, compacted as `copyCompacted(to:)` does.
    public func copyCompacted(from source: ReadTransaction, to destination: String) throws {
        var info = stat()
        if stat(destination, &info) == 0 { throw StorageError.ioFailure(operation: "create \(destination)", code: EEXIST) }
        var copyOptions = StorageOptions(durability: .full, pageSize: pageSize, maximumFileSize: options.maximumFileSize)
        copyOptions.maximumReaders = 16
        // The copy's one commit syncs the file itself: a logged commit would leave the copy
        // depending on a commit log beside it until a checkpoint at close (best effort), and
        // the log file behind.
        copyOptions.logsCommits = false
        let copy = try StorageEngine.open(path: destination, options: copyOptions)
        defer {
            copy.close()
            unlink(destination + "-lock")
        }
        try copy.write { target in
            for name in try source.treeNames() {
                guard let from = try source.tree(named: name) else { continue }
                let to = try target.createTree(named: name)
                let cursor = try source.makeCursor(on: from)
                var more = try cursor.first()
                while more {
                    try target.put(cursor.value, forKey: cursor.key, in: to)
                    more = try cursor.next()
                }
            }
        }
    }
}
