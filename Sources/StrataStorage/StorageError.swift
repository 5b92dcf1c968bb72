/// An error from the storage engine.
///
/// Every way a file can be wrong, and every way an operation can fail, has its own case, so
/// callers can tell a foreign file from a damaged one and a full disk from a misuse of the API.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file does not start with Strata's signature: it is some other kind of file.
    case notADatabase(path: String)
    /// The file was written by a newer (or unknown) format version this build cannot read.
    case unsupportedFormatVersion(found: UInt32, supported: UInt32)
    /// The file is shorter than its own metadata says it must be.
    case truncated(expectedBytes: UInt64, actualBytes: UInt64)
    /// The file's contents fail a checksum or a structural check. `page` is the page at fault,
    /// when there is one.
    case corrupted(page: UInt64?, reason: String)
    /// An operating-system call failed. `code` is the `errno` value (e.g. `ENOSPC`, `EIO`).
    case ioFailure(operation: String, code: Int32)
    /// The database would grow past `StorageOptions.maximumFileSize`.
    case fileTooLarge(limit: UInt64)
    /// A key is empty or longer than `StorageEngine.maximumKeySize`.
    case invalidKey(length: Int, maximum: Int)
    /// A tree name is empty or longer than 200 bytes of UTF-8.
    case invalidTreeName(String)
    /// The tree handle does not belong to a tree that exists in this transaction.
    case unknownTree(String)
    /// Every reader slot in the lock file is taken: too many snapshots are open at once.
    case tooManyReaders(limit: Int)
    /// The transaction has already been committed or rolled back.
    case transactionClosed
    /// The transaction was modified, or ended, after this cursor was made.
    case cursorInvalidated
    /// The engine has been closed.
    case engineClosed
    /// The lock file is not a Strata lock file, or belongs to an incompatible version.
    case lockFileInvalid(path: String)
    /// The database was opened read-only and the operation would modify it.
    case readOnly
    /// A test failpoint stopped the operation at the named step.
    case failpoint(String)
    /// The commit log at `path` continues version `logBase`, but the database file recovers to
    /// version `recovered`: the log belongs to another copy of the database (a file restored
    /// from a backup without its log, say). Move the log aside to open the file as it is.
    case commitLogMismatch(path: String, logBase: UInt64, recovered: UInt64)
    /// The database's commit log holds commits the file does not have yet, and replaying them
    /// needs write access: open the database writable once.
    case recoveryNeedsWriteAccess(path: String)
    /// The commit log at `path` is damaged, not just cut short by a crash: replay can reach
    /// version `lastGoodVersion`, but the log shows that durable commits followed it (a bad
    /// record with valid ones after it, a log shorter than it was, or a published commit the
    /// log no longer holds). `lostCommits` is how many later commits the log shows (at least;
    /// 0 when the damage hides how many). `reason` says what was found. Opening with
    /// `StorageOptions.commitLogRecovery` set to `.openAtLastGoodVersion` (or running
    /// `strata recover`) opens at `lastGoodVersion` and gives those commits up.
    case commitLogDamaged(path: String, lastGoodVersion: UInt64, lostCommits: UInt64, reason: String)
    /// `path` is not a regular file (or a symbolic link to one), so it is not opened as a
    /// database, and nothing there is replaced: it is `kind`, or a symbolic link to
    /// `linkTarget`, which is `kind`.
    case notARegularFile(path: String, kind: FileKind, linkTarget: String?)
    /// The database file at `path` is empty (or holds no database yet), but its commit log at
    /// `logPath` holds commits: the file was truncated or replaced. Nothing is changed; restore
    /// the file, or move the log aside to start a new database there.
    case emptyDatabaseWithCommitLog(path: String, logPath: String)

    public var description: String {
        switch self {
        case .notADatabase(let path): "\(path) is not a Strata database file"
        case .unsupportedFormatVersion(let found, let supported):
            "the file has format version \(found); this build reads version \(supported)"
        case .truncated(let expected, let actual):
            "the file is truncated: it needs \(expected) bytes but has \(actual)"
        case .corrupted(let page, let reason):
            if let page { "the file is corrupted at page \(page): \(reason)" } else { "the file is corrupted: \(reason)" }
        case .ioFailure(let operation, let code): "\(operation) failed: \(errnoDescription(code)) (errno \(code))"
        case .fileTooLarge(let limit): "the database would grow past its maximum size of \(limit) bytes"
        case .invalidKey(let length, let maximum): "a key must be 1...\(maximum) bytes long, not \(length)"
        case .invalidTreeName(let name): "'\(name)' is not a valid tree name (1 to 200 bytes of UTF-8)"
        case .unknownTree(let name): "no tree named '\(name)' in this transaction"
        case .tooManyReaders(let limit): "all \(limit) reader slots are in use; close some transactions or snapshots"
        case .transactionClosed: "the transaction has already been committed or rolled back"
        case .cursorInvalidated: "the cursor's transaction was modified or ended; make a new cursor"
        case .engineClosed: "the storage engine has been closed"
        case .lockFileInvalid(let path): "\(path) is not a valid Strata lock file"
        case .readOnly: "the database is open read-only"
        case .failpoint(let step): "failpoint triggered at \(step)"
        case .commitLogMismatch(let path, let logBase, let recovered):
            "the commit log \(path) continues version \(logBase), but the database file is at version \(recovered): the log belongs to another copy of the database; move it aside to open the file as it is"
        case .recoveryNeedsWriteAccess(let path):
            "the commit log \(path) holds commits the database file does not have yet; open the database writable once to replay them"
        case .commitLogDamaged(let path, let lastGood, let lost, let reason):
            "the commit log \(path) is damaged (\(reason)): its commits are intact only up to version \(lastGood), and "
                + (lost > 0 ? "at least \(lost) durable commit\(lost == 1 ? "" : "s") after it would be lost" : "an unknown number of commits after it may be lost")
                + "; to open the database at version \(lastGood) and give them up, open it with the commit log recovery option "
                + "(StorageOptions.commitLogRecovery = .openAtLastGoodVersion) or run `strata recover` on it"
        case .notARegularFile(let path, let kind, let target):
            if let target, kind == .danglingSymbolicLink || kind == .symbolicLink {
                "\(path) is \(kind) to \(target): a database is a regular file (or a symbolic link to one), and nothing else is opened or replaced"
            } else if let target {
                "\(path) is a symbolic link to \(target), which is \(kind): a database is a regular file (or a symbolic link to one), and nothing else is opened or replaced"
            } else {
                "\(path) is \(kind): a database is a regular file (or a symbolic link to one), and nothing else is opened or replaced"
            }
        case .emptyDatabaseWithCommitLog(let path, let logPath):
            "the database file \(path) is empty, but its commit log \(logPath) holds commits: the file was truncated or replaced; restore it (nothing was changed), or move the log aside to start a new database"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func errnoDescription(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
}
