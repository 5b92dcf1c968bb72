// What an open finds at a database's path, and the only ways the engine opens, creates and
// renames files there.
//
// Invariants (StorageEngine.open(path:) and compaction rely on them):
// - Nothing but a missing path, or the database's own regular file, is ever created over or
//   renamed onto. A new database is written under a temporary name and renamed onto its path
//   with a rename that fails if anything appeared there (`strata_rename_noreplace`, or a hard
//   link where the file system cannot do that).
// - A symbolic link at the database's path is followed deliberately: if it leads to a regular
//   file, the engine opens that file, with its lock file and commit log beside it, so that
//   openers through different links share one lock file. Anything else (a device, a FIFO, a
//   socket, a directory, a dangling link, a loop of links) is refused with
//   `StorageError.notARegularFile` and left as it was.
// - The lock file and the commit log are opened without following a symbolic link and
//   without blocking (`O_NOFOLLOW | O_NONBLOCK`), and only if they are regular files: a FIFO
//   or a link planted at `db-lock` or `db-log` is refused, not followed or waited on. A
//   device is refused from `lstat` alone, before it is opened (opening one can have effects).
// - A file counts as created by an open only when that open's `O_CREAT | O_EXCL` made it: only
//   such files are removed when the open fails (see StorageEngine.init and LockFile.init).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CStrataSystem

/// What a path names when it is not a regular file: the reason `StorageError.notARegularFile`
/// gives for refusing to open it.
public enum FileKind: String, Sendable, Equatable, CustomStringConvertible {
    /// A directory.
    case directory
    /// A character device, such as `/dev/null`.
    case characterDevice
    /// A block device (a disk or a partition).
    case blockDevice
    /// A FIFO (named pipe).
    case fifo
    /// A Unix-domain socket.
    case socket
    /// A symbolic link (where none is followed: the lock file's and the commit log's paths).
    case symbolicLink
    /// A symbolic link whose target does not exist.
    case danglingSymbolicLink
    /// A symbolic link that leads back to itself, or through too many links.
    case symbolicLinkLoop
    /// Anything else the system reports.
    case other

    /// The kind in words, with its article ("a character device").
    public var description: String {
        switch self {
        case .directory: "a directory"
        case .characterDevice: "a character device"
        case .blockDevice: "a block device"
        case .fifo: "a FIFO"
        case .socket: "a socket"
        case .symbolicLink: "a symbolic link"
        case .danglingSymbolicLink: "a dangling symbolic link"
        case .symbolicLinkLoop: "a symbolic-link loop"
        case .other: "not a regular file"
        }
    }
}

enum DatabasePath {
    /// A database path as the engine opens it.
    struct Resolved: Equatable {
        /// The path to open: the given one, or the regular file a symbolic link there leads to.
        var path: String
        /// Whether a regular file is there (otherwise nothing is).
        var exists: Bool
    }

    /// Resolves `path` for opening a database: a missing path or a regular file as it is; a
    /// symbolic link (through any number of links) to a regular file as that file's real path.
    /// Throws `notARegularFile` for anything else. Looks only (`lstat`, `realpath`): opens nothing.
    static func resolve(_ path: String) throws -> Resolved {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            guard code == ENOENT else { throw StorageError.ioFailure(operation: "lstat \(path)", code: code) }
            return Resolved(path: path, exists: false)
        }
        if isRegular(info) { return Resolved(path: path, exists: true) }
        guard kind(of: info) == .symbolicLink else { throw StorageError.notARegularFile(path: path, kind: kind(of: info), linkTarget: nil) }
        guard let resolved = realpath(path, nil) else {
            let code = errno
            switch code {
            case ENOENT: throw StorageError.notARegularFile(path: path, kind: .danglingSymbolicLink, linkTarget: linkContents(path))
            case ELOOP: throw StorageError.notARegularFile(path: path, kind: .symbolicLinkLoop, linkTarget: nil)
            default: throw StorageError.ioFailure(operation: "resolve the symbolic link \(path)", code: code)
            }
        }
        let target = String(cString: resolved)
        free(resolved)
        guard lstat(target, &info) == 0 else {
            // The target went away after it was resolved.
            throw StorageError.notARegularFile(path: path, kind: .danglingSymbolicLink, linkTarget: target)
        }
        guard isRegular(info) else { throw StorageError.notARegularFile(path: path, kind: kind(of: info), linkTarget: target) }
        return Resolved(path: target, exists: true)
    }

    /// Whether a regular file is at `path` (false: nothing is), without following a symbolic
    /// link: anything else there is refused with `notARegularFile`.
    static func regularFileExists(_ path: String) throws -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            guard code == ENOENT else { throw StorageError.ioFailure(operation: "lstat \(path)", code: code) }
            return false
        }
        guard isRegular(info) else { throw StorageError.notARegularFile(path: path, kind: kind(of: info), linkTarget: nil) }
        return true
    }

    /// Opens the regular file at `path` (read-only or for reading and writing), creating it
    /// when `create` and nothing is there. Never follows a symbolic link at `path`, never
    /// blocks on a FIFO and never opens a device: anything but a regular file is refused with
    /// `notARegularFile`. A missing file without `create` is `ioFailure` with `ENOENT`. Returns
    /// the descriptor and whether this call created the file.
    static func openRegularFile(_ path: String, readOnly: Bool, create: Bool) throws -> (descriptor: Int32, created: Bool) {
        let flags = (readOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
        // Each pass looks, then opens what it saw; another process creating or removing the
        // file between the two sends it round again (rarely more than once).
        for _ in 0..<64 {
            var info = stat()
            if lstat(path, &info) == 0 {
                // Refused from lstat alone: a device is never opened.
                guard isRegular(info) else { throw StorageError.notARegularFile(path: path, kind: kind(of: info), linkTarget: nil) }
                let fd = open(path, flags)
                if fd < 0 {
                    let code = errno
                    if code == ENOENT { continue }  // removed since
                    throw openFailure(path, code: code)
                }
                try checkRegular(fd, path: path)
                return (fd, false)
            }
            let code = errno
            guard code == ENOENT else { throw StorageError.ioFailure(operation: "lstat \(path)", code: code) }
            guard create else { throw StorageError.ioFailure(operation: "open \(path)", code: ENOENT) }
            // O_EXCL: creates a new file or fails; it neither follows a link nor opens what is there.
            let fd = open(path, flags | O_CREAT | O_EXCL, 0o644)
            if fd >= 0 {
                try checkRegular(fd, path: path)
                return (fd, true)
            }
            let failure = errno
            if failure == EEXIST { continue }  // created since
            throw StorageError.ioFailure(operation: "create \(path)", code: failure)
        }
        throw StorageError.ioFailure(operation: "open \(path) (it keeps appearing and disappearing)", code: EAGAIN)
    }

    /// Renames `temporary` onto `path` only if nothing is there (atomically: something that
    /// appears at `path` meanwhile is never replaced). Falls back to a hard link and removing
    /// `temporary` where the file system cannot rename that way. On failure `temporary` is left
    /// for the caller to remove.
    static func renameIntoMissing(_ temporary: String, _ path: String) throws {
        let code = strata_rename_noreplace(temporary, path)
        if code == 0 { return }
        guard code == EINVAL || code == ENOSYS || code == ENOTSUP || code == EOPNOTSUPP else {
            throw StorageError.ioFailure(operation: "rename \(temporary) to \(path) (only where nothing is)", code: code)
        }
        guard link(temporary, path) == 0 else {
            throw StorageError.ioFailure(operation: "link \(temporary) to \(path) (only where nothing is)", code: errno)
        }
        unlink(temporary)
    }

    /// Whether `descriptor` and `path` name the same file: the lock file an opener waited on is
    /// still the one at its path (a failed first open may remove the one it created).
    static func sameFile(_ descriptor: Int32, _ path: String) -> Bool {
        var opened = stat()
        var named = stat()
        guard fstat(descriptor, &opened) == 0, lstat(path, &named) == 0 else { return false }
        return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
    }

    /// Whether the commit log at `path` holds anything a database could need: its first block
    /// (where every generation starts) is not all zeros. A missing, empty or zeroed log holds
    /// nothing. Opens the log read-only as `openRegularFile` does (never through a link).
    static func logHoldsRecords(at path: String) throws -> Bool {
        let fd: Int32
        do {
            fd = try openRegularFile(path, readOnly: true, create: false).descriptor
        } catch StorageError.ioFailure(_, let code) where code == ENOENT {
            return false
        }
        defer { Glibc_close(fd) }
        var block = [UInt8](repeating: 0, count: Int(CommitLog.blockSize))
        var done = 0
        while done < block.count {
            let n = block.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StorageError.ioFailure(operation: "read \(path)", code: errno)
            }
            if n == 0 { break }
            done += n
        }
        return block[..<done].contains { $0 != 0 }
    }

    /// Whether a commit log holds anything a database could need (as `logHoldsRecords(at:)`).
    static func holdsRecords(_ log: any StorageFile) throws -> Bool {
        let size = try log.size()
        guard size > 0 else { return false }
        var block = [UInt8](repeating: 0, count: Int(min(size, CommitLog.blockSize)))
        try block.withUnsafeMutableBytes { try log.read(into: $0, at: 0) }
        return block.contains { $0 != 0 }
    }

    /// Moves a commit log whose database file is missing aside, to `<log>.orphaned` (or
    /// `<log>.orphaned-2`, `-3`, … when that is taken), never replacing anything; returns the
    /// new path. Its records can only be replayed onto the database file they continue, which
    /// is gone: kept, not erased, for whoever restores that file.
    static func moveOrphanedLog(at path: String) throws -> String {
        for attempt in 1...1000 {
            let target = attempt == 1 ? path + ".orphaned" : path + ".orphaned-\(attempt)"
            do {
                try renameIntoMissing(path, target)
                return target
            } catch StorageError.ioFailure(_, let code) where code == EEXIST {
                continue
            }
        }
        throw StorageError.ioFailure(operation: "move the orphaned commit log \(path) aside", code: EEXIST)
    }

    /// Whether the database file holds nothing: empty, or holding only what an interrupted
    /// initialisation in place writes first (the first meta of a new database, checksummed:
    /// version 0, no data pages; see `StorageEngine.writeInitialContents`). Initialising such a
    /// file loses nothing. Anything else, however short, is opened (and refused) as it is: a
    /// file of zeros too, which Strata never writes as a database (it may be a database a file
    /// system lost the contents of, and is not changed).
    static func isUninitialised(_ file: any StorageFile) throws -> Bool {
        let size = try file.size()
        if size == 0 { return true }
        guard let largest = StorageOptions.validPageSizes.max(), size <= UInt64(3 * largest) else { return false }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        for pageSize in StorageOptions.validPageSizes where bytes.count >= 2 * pageSize {
            guard !bytes[..<pageSize].contains(where: { $0 != 0 }), !bytes[(2 * pageSize)...].contains(where: { $0 != 0 }) else { continue }
            let meta = bytes.withUnsafeBytes { MetaPage.decode($0.baseAddress! + pageSize, pageSize: pageSize, at: 1) }
            if let meta, meta.txid == 0, meta.pageCount == FileHeader.firstDataPage, !meta.isLogged { return true }
        }
        return false
    }

    // MARK: Kinds

    private static func isRegular(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFREG }

    static func kind(of info: stat) -> FileKind {
        switch info.st_mode & S_IFMT {
        case S_IFDIR: .directory
        case S_IFCHR: .characterDevice
        case S_IFBLK: .blockDevice
        case S_IFIFO: .fifo
        case S_IFSOCK: .socket
        case S_IFLNK: .symbolicLink
        default: .other
        }
    }

    /// What the symbolic link at `path` points to, as written in it.
    private static func linkContents(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Makes sure an opened descriptor is a regular file (the path may have changed between
    /// `lstat` and `open`), and clears `O_NONBLOCK` (which regular files ignore anyway).
    private static func checkRegular(_ fd: Int32, path: String) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            Glibc_close(fd)
            throw StorageError.ioFailure(operation: "fstat \(path)", code: code)
        }
        guard isRegular(info) else {
            Glibc_close(fd)
            throw StorageError.notARegularFile(path: path, kind: kind(of: info), linkTarget: nil)
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    }

    /// The error for an `open` of a path `lstat` just found to be a regular file.
    private static func openFailure(_ path: String, code: Int32) -> StorageError {
        // With O_NOFOLLOW, ELOOP means a link took the file's place.
        if code == ELOOP { return .notARegularFile(path: path, kind: .symbolicLink, linkTarget: linkContents(path)) }
        return .ioFailure(operation: "open \(path)", code: code)
    }
}

/// The directory part of a path ("." when there is none).
func directoryPart(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let prefix = String(path[..<slash])
    return prefix.isEmpty ? "/" : prefix
}

/// The last component of a path.
func lastPathComponent(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[path.index(after: slash)...])
}

/// Opens a directory (or file) read-only, to fsync it. At file scope, where `open` is the C
/// function rather than `StorageEngine.open`.
func openForSync(_ path: String) -> Int32 { open(path, O_RDONLY | O_CLOEXEC) }