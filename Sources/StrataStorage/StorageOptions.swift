/// How hard a commit works to survive failures.
public enum Durability: Sendable, Hashable {
    /// Once a commit returns, it survives a process crash and a power loss or OS crash.
    /// The default.
    case full
    /// Commits never sync. A commit survives a crash of the process (the operating system
    /// still holds the written pages) but a power loss or OS crash may lose recent commits
    /// or, in the worst case, leave a file that only an older commit can be read from or
    /// none at all. It can also leave a newest version that reads as a mix of versions: a
    /// page a commit rewrote may keep the older, valid contents it held before, which reads
    /// cannot tell apart; `StorageEngine.verify()` reports such a file. After a power loss,
    /// verify a database written with `.none` before trusting it, or rebuild it. Use for
    /// caches and data that can be rebuilt.
    case none
}

/// Options for opening a `StorageEngine`.
public struct StorageOptions: Sendable, Hashable {
    /// Commit durability; `.full` by default.
    public var durability: Durability
    /// Page size for a new file (4096, 8192, 16384 or 65536). An existing file keeps the page
    /// size it was created with.
    public var pageSize: Int
    /// The largest the file may grow. The engine reserves this much address space (not memory)
    /// for its read-only mapping, 1 TiB by default; in a process with no free range that large
    /// it reserves the largest power-of-two fraction that is free and still holds the file, and
    /// that lower limit holds while the file stays open (a commit past it fails with
    /// `StorageError.fileTooLarge`).
    public var maximumFileSize: UInt64
    /// Open without ever writing the database file. Writes fail with `StorageError.readOnly`.
    public var readOnly: Bool
    /// How many snapshots may be open at once across all processes sharing the file.
    public var maximumReaders: Int
    /// A hook called at each step of a commit, for fault-injection tests. It may throw to fail
    /// the commit at that step, or end the process to simulate a crash there.
    public var failpoint: (@Sendable (CommitStep) throws -> Void)?
    /// With `.full` durability, make small commits durable through the commit log
    /// (`<path>-log`): their pages are written to the database file without a sync, and their
    /// changes to the log with one block and one sync. Larger commits, and the commit after a
    /// log generation fills up, sync the database file instead. On by default. Whatever this
    /// says, opening a database whose log holds commits the file lacks replays them.
    public var logsCommits: Bool
    /// Let logged commits (see `logsCommits`) store their pages into the database file through a
    /// writable shared mapping instead of a write call per stretch of pages, where that is safe:
    /// on Linux, on tmpfs only, and only into pages this process has already written once with
    /// a write call (so they are allocated and a store can neither run out of space nor pass
    /// the end of the file). Pages are visible and made durable exactly as written pages are;
    /// only the system calls go. On by default; elsewhere it does nothing. Not on ext4: a store
    /// through a mapping dirties a whole large folio of its page cache where a write marks only
    /// the blocks it wrote, so syncs would write back many times the data committed. Readers
    /// always use a read-only mapping.
    public var writesInPlace: Bool
    /// What opening does when the commit log is damaged rather than cut short by a crash
    /// (`StorageError.commitLogDamaged`, and `StorageError.commitLogMismatch` for a log of
    /// another copy of the database): `.refuse` by default.
    public var commitLogRecovery: CommitLogRecovery

    /// Creates options; every parameter has the default described on its property.
    public init(durability: Durability = .full, pageSize: Int = 4096, maximumFileSize: UInt64 = 1 << 40,
                readOnly: Bool = false, maximumReaders: Int = 1022) {
        self.durability = durability
        self.pageSize = pageSize
        self.maximumFileSize = maximumFileSize
        self.readOnly = readOnly
        self.maximumReaders = maximumReaders
        self.failpoint = nil
        self.logsCommits = true
        self.writesInPlace = true
        self.commitLogRecovery = .refuse
    }

    static let validPageSizes: Set<Int> = [4096, 8192, 16384, 65536]

    public static func == (lhs: StorageOptions, rhs: StorageOptions) -> Bool {
        lhs.durability == rhs.durability && lhs.pageSize == rhs.pageSize && lhs.maximumFileSize == rhs.maximumFileSize
            && lhs.readOnly == rhs.readOnly && lhs.maximumReaders == rhs.maximumReaders
            && lhs.logsCommits == rhs.logsCommits && lhs.writesInPlace == rhs.writesInPlace
            && lhs.commitLogRecovery == rhs.commitLogRecovery
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(durability)
        hasher.combine(pageSize)
        hasher.combine(maximumFileSize)
        hasher.combine(readOnly)
        hasher.combine(maximumReaders)
        hasher.combine(logsCommits)
        hasher.combine(writesInPlace)
        hasher.combine(commitLogRecovery)
    }
}

/// The steps of a commit, in order, at which a failpoint can stop it.
public enum CommitStep: String, Sendable, CaseIterable {
    /// The transaction's pages are laid out and about to be written.
    case beforeDataWrite
    /// The file is about to grow past its previous end.
    case beforeGrowth
    /// All data pages are written, nothing synced yet.
    case afterDataWrite
    /// Two-sync commits: the data pages are about to be synced.
    case beforeDataSync
    /// Two-sync commits: the data pages are synced.
    case afterDataSync
    /// The meta page is about to be written.
    case beforeMetaWrite
    /// The meta page is written but not synced.
    case afterMetaWrite
    /// The final sync is about to run.
    case beforeFinalSync
    /// The commit is durable but not yet visible to other transactions.
    case afterFinalSync
    /// Logged commits: the record is about to go to the log (the first write of the commit:
    /// the database file's pages follow it).
    case beforeLogWrite
    /// Logged commits: the record and the database file's pages are written, nothing synced.
    case beforeLogSync
    /// Logged commits: the log is synced (the commit is durable), not yet visible.
    case afterLogSync

    /// The steps only logged commits reach.
    public var isLogStep: Bool { self == .beforeLogWrite || self == .beforeLogSync || self == .afterLogSync }
}
