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
        // lstat: a symbolic link (even a dangling one) is something there.
        if lstat(destination, &info) == 0 { throw StorageError.ioFailure(operation: "create \(destination)", code: EEXIST) }
        var copyOptions = StorageOptions(durability: .full, pageSize: pageSize, maximumFileSize: options.maximumFileSize)
        copyOptions.maximumReaders = 16
        // The copy's one commit syncs the file itself: a logged commit would leave the copy
        // depending on a commit log beside it until a checkpoint at close (best effort), and
        // the log file behind.
        copyOptions.logsCommits = false
        let copy = try StorageEngine.open(path: destination, options: copyOptions)
        defer {
            copy.close()
            unlink(DatabaseFiles(path: destination).lock)
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

/// The points of `StorageEngine.compactIfUnused` that tests stop at, as a crash there would.
public enum CompactionStep: String, Sendable, CaseIterable {
    /// The file is checkpointed and the compacted copy written and synced beside it.
    case copied
    /// The commit log is erased (the checkpointed file no longer needs it).
    case logErased
    /// The copy has replaced the file.
    case renamed
}

extension StorageEngine {
    /// Compacts the database file at `path` in place (RealmSwift's `shouldCompactOnLaunch`)
    /// when no process has the database open, this one included, and `decide(fileBytes,
    /// usedBytes)` returns true: `fileBytes` is the file's size, `usedBytes` what its data
    /// takes. Returns whether it compacted. Other processes that open the database meanwhile
    /// wait until it is done.
    ///
    /// Nothing is ever at risk: the file is first made self-contained (its commit log
    /// checkpointed), the compacted copy is written and synced beside it, the log is erased
    /// and the copy renamed over the file (the directory synced). A crash at any point leaves
    /// the old file or the new one, both with every commit; a copy left behind is removed by
    /// the next attempt. An error (a full disk, say) leaves the file as it was. The log is
    /// erased in place, not removed, so it keeps its allocated blocks (openers open it only
    /// under the lock file's flock, after this). Through a symbolic link, the regular file it
    /// leads to is compacted and the copy renamed onto that file, never onto the link; anything
    /// else at `path` is refused as `open(path:)` refuses it. `failpoint` (tests) runs after
    /// each step.
    public static func compactIfUnused(path: String, options: StorageOptions,
                                       decide: (_ fileBytes: UInt64, _ usedBytes: UInt64) throws -> Bool,
                                       failpoint: ((CompactionStep) throws -> Void)? = nil) throws -> Bool {
        guard !options.readOnly else { return false }
        // The file a symbolic link leads to, as `open(path:)` opens it: the copy is renamed onto
        // that regular file, never onto the link. Anything but a regular file is refused.
        let resolved = try DatabasePath.resolve(path)
        let path = resolved.path
        var info = stat()
        guard resolved.exists, stat(path, &info) == 0, info.st_size > 0 else { return false }
        let mode = info.st_mode & 0o7777
        // The lock file held exclusively excludes every other user, here and elsewhere: an
        // engine holds it shared for as long as it is open, and one that opens waits for it.
        let (lock, lockCreated) = try DatabasePath.openRegularFile(DatabaseFiles(path: path).lock, readOnly: false, create: true)
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            Glibc_close(lock)
            return false
        }
        // A lock file this call created goes again (under the exclusive flock: openers check
        // that the file they locked is still the one at its path, LockFile.init).
        defer {
            if lockCreated { unlink(DatabaseFiles(path: path).lock) }
            Glibc_close(lock)
        }
        let temporary = path + ".compacting"
        let privateLock = path + ".compacting-source-lock"
        for leftover in [temporary] + DatabaseFiles(path: temporary).engineCompanions + [privateLock] { unlink(leftover) }
        // The file and its log, through a lock file of their own (the real one is held above).
        let file = try PosixFile(path: path, create: false, maximumSize: options.maximumFileSize)
        let logFile: PosixFile?
        do {
            logFile = stat(logPath(for: path), &info) == 0
                ? try PosixFile(path: logPath(for: path), create: false, maximumSize: options.maximumFileSize) : nil
        } catch {
            file.close()
            throw error
        }
        let source: StorageEngine
        do {
            source = try StorageEngine.open(file: file, log: logFile, lockPath: privateLock, options: options)
        } catch {
            file.close()
            logFile?.close()
            unlink(privateLock)
            throw error
        }
        var sourceOpen = true
        defer {
            if sourceOpen { source.close() }
            unlink(privateLock)
        }
        let (fileBytes, usedBytes) = try source.spaceUsage()
        guard try decide(fileBytes, usedBytes) else { return false }
        do {
            try source.checkpoint()
            try source.copyCompacted(to: temporary)
            _ = chmod(temporary, mode)
        } catch {
            unlink(temporary)
            throw error
        }
        try failpoint?(.copied)
        source.close()
        sourceOpen = false
        if logFile != nil {
            // Checkpointed: the file, and so the copy, holds every commit in the log, whose
            // records are history. Erased (its first block zeroed, synced),
            // the new file opens with it as an empty log, as the old one would.
            do {
                let log = try PosixFile(path: logPath(for: path), create: false, maximumSize: options.maximumFileSize)
                defer { log.close() }
                try CommitLog(file: log).erase(at: 0)
            } catch {
                unlink(temporary)
                throw error
            }
        }
        try failpoint?(.logErased)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw StorageError.ioFailure(operation: "rename \(temporary) to \(path)", code: code)
        }
        syncDirectory(of: path)
        try failpoint?(.renamed)
        return true
    }

    /// The file's size and the bytes its data takes (every page not free), as of the newest
    /// version, with no snapshot pinning older ones.
    func spaceUsage() throws -> (fileBytes: UInt64, usedBytes: UInt64) {
        let transaction = try beginWrite()
        defer { transaction.rollback() }
        let space = transaction.freeSpace
        let free = space.reusablePageCount + space.pendingPageCount
        let used = space.pageCount > free ? space.pageCount - free : 0
        return (try file.size(), used * UInt64(pageSize))
    }

    /// Syncs the directory holding `path`, so that a rename or removal in it is durable.
    static func syncDirectory(of path: String) {
        let fd = openForSync(directoryPart(path))
        if fd >= 0 {
            _ = fsync(fd)
            Glibc_close(fd)
        }
    }
}

