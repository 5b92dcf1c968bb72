// The engine: one database file, its lock file and its mapping; how long it stays open.
//
// One engine exists per file per process (OpenFileRegistry.swift), because the file locks that
// coordinate processes belong to an open file description, and two in one process would
// exclude each other. Opening is in StorageEngine+Open.swift. The folders:
// - File/: the database file and its lock file (FileIO, FileHeader, DatabasePath, LockFile,
//   Checksum);
// - Pages/: the page format and in-memory nodes (Page, Node, Arena, PageSearch, PageVerifier);
// - Trees/: named B+trees and cursors;
// - Transactions/: read and write transactions, snapshots, savepoints, the write lock, and
//   the engine's ways to start them and to wait for versions;
// - Commit/: the commit (Commit.swift owns it), its layout, meta pages, grouped commits, the
//   commit log and its redo records;
// - Recovery/: crash recovery (CrashRecovery.swift) and a damaged commit log;
// - Space/: free space, the delete reserve, compaction;
// - Checks/: `verify()`, and the tolerant walk that reads what a damaged tree still holds.

#if canImport(Glibc)
import Dispatch
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A transactional, ordered key-value store in one file: named B+trees of byte strings,
/// multi-version concurrency (readers never block and never lock), one writer at a time across
/// threads and processes, and crash-safe copy-on-write commits.
///
/// ```swift
/// let engine = try StorageEngine.open(path: "/tmp/example.strata")
/// try engine.write { txn in
///     let tree = try txn.createTree(named: "people")
///     try txn.put(Array("Ada".utf8), forKey: Array("1".utf8), in: tree)
/// }
/// let name = try engine.read { txn in
///     try txn.tree(named: "people").flatMap { try txn.value(forKey: Array("1".utf8), in: $0) }
/// }
/// ```
public final class StorageEngine: @unchecked Sendable {
    // @unchecked: mutable state lives in `state` (a lock) or in the lock file's shared memory
    // (atomics); the rest is immutable after init. The file and lock objects are thread-safe.
    /// The database file's path.
    public let path: String
    /// The options the engine was opened with.
    public let options: StorageOptions
    /// The file's page size.
    public let pageSize: Int
    let file: any StorageFile
    /// The commit log (CommitLog.swift); nil for a read-only engine whose file has none, and
    /// for engines opened on a given file without one.
    let log: CommitLog?
    /// What this engine's opening gave up of a damaged commit log, when it was opened with
    /// `StorageOptions.commitLogRecovery` set to `.openAtLastGoodVersion` and found damage;
    /// nil otherwise (and for an engine another open in this process had already opened).
    public let commitLogRecoveryReport: CommitLogRecoveryReport?
    let lockFile: LockFile
    /// Called after each commit this engine publishes (`setLocalCommitObserver(_:)`). In a
    /// box: a function value kept directly in the generic `Locked` would gain two reabstraction
    /// thunks on every `withLock` (its inout write-back), each call going through a longer
    /// chain than the last.
    let localCommitObserver = Locked<LocalCommitObserver?>(nil)
    let writeLock: WriteLock
    let verifier: PageVerifier
    let base: UnsafeRawPointer
    let maximumPages: UInt64
    /// Its key in `OpenFileRegistry` (nil for an engine opened on a given file).
    private let registryKey: String?

    struct State {
        var latestMeta: MetaPage
        var mappedBytes: UInt64
        var knownFileSize: UInt64
        var freeSpaceCache: FreeSpaceCache?
        var serial: UInt64 = 0
        var openCount = 1
        var activeTransactions = 0
        var closing = false
        var closed = false
        var poisoned: StorageError?
        /// The writer's arena, kept between write transactions (there is one writer at a time).
        var spareArena: Arena?
        /// Grouped commits: see GroupedCommits.swift.
        var group = GroupState(openedAt: 0)
        /// State of the generator for chain tokens (SplitMix64, seeded from the system).
        var tokenState: UInt64 = {
            var system = SystemRandomNumberGenerator()
            return system.next()
        }()
    }
    let state: Locked<State>
    /// The free space the last commit of this engine left, for the next write transaction. A
    /// named struct, not a tuple: an optional tuple is copied and tested through the runtime's
    /// generic tuple witnesses, at every publish and begin.
    struct FreeSpaceCache {
        var txid: UInt64
        var space: FreeSpace
        var chain: [PageNumber]
    }
    /// Serialises syncs of grouped commits (GroupedCommits.swift); counts them. (Not a
    /// `Locked<Void>`: a zero-size value shares its address with the mutex pointer, and the
    /// thread sanitizer then reports the pointer's load before locking as a race.)
    let syncGate = Locked<UInt64>(0)
    /// The room kept past the end of the file for deletes on a full volume (SpaceReserve.swift).
    let spaceReserve = SpaceReserve()

    /// Opens the files (`openFiles`, StorageEngine+Open.swift) and replays what the commit log
    /// holds after a crash. Reached through `open(path:)` (OpenFileRegistry.swift) and
    /// `open(file:log:lockPath:options:)`.
    init(path: String, lockPath: String, options: StorageOptions, file given: (any StorageFile)?,
                 log givenLog: (any StorageFile)?, registryKey: String?) throws {
        guard StorageOptions.validPageSizes.contains(options.pageSize) else {
            throw StorageError.corrupted(page: nil, reason: "invalid page size option \(options.pageSize)")
        }
        self.path = path
        self.options = options
        self.registryKey = registryKey
        let opened = try Self.openFiles(path: path, lockPath: lockPath, options: options, file: given, log: givenLog)
        let pageSize = opened.pageSize
        self.file = opened.file
        self.log = opened.log
        self.commitLogRecoveryReport = opened.gaveUp
        self.lockFile = opened.lockFile
        self.pageSize = pageSize
        self.base = opened.base
        self.maximumPages = min(options.maximumFileSize, opened.file.mappableLength ?? .max) / UInt64(pageSize)
        self.verifier = PageVerifier(maximumPages: maximumPages)
        self.writeLock = WriteLock(descriptor: opened.lockFile.descriptor, wanted: opened.lockFile.writeLockWanted,
                                   wantSignal: opened.lockFile.writeLockWantSignal)
        var state = State(latestMeta: opened.meta, mappedBytes: max(opened.size, UInt64(3 * pageSize)), knownFileSize: opened.size)
        state.group = GroupState(openedAt: opened.meta.txid)
        self.state = Locked(state)
        // The first opener after a crash: the commits durable only in the log are replayed
        // before any other process may open the file (CrashRecovery.swift).
        if let replay = opened.replay {
            do {
                try replayLog(replay)
                if opened.gaveUp != nil { try endDamagedGeneration() }
            } catch {
                opened.lockFile.restoreInheritedPublication()
                abandon()
                throw error
            }
            opened.lockFile.endInitialisation()
        }
    }

    // MARK: Closing

    /// Counts another opener of this engine (`open(path:)`, OpenFileRegistry.swift); false when
    /// its files are already released.
    func retainOpen() -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            // An engine whose last opener closed it while transactions were still running is
            // reopened rather than replaced: a second engine on the same file in this process
            // would collide with this one's locks.
            if state.closing { state.closing = false }
            state.openCount += 1
            return true
        }
    }

    /// Closes this use of the engine. The file is released when every opener has closed it and
    /// the last transaction has ended. The last close in the last process to have the file open
    /// checkpoints (see `checkpoint()`), so the next open has no commit log to replay.
    public func close() {
        // (The newest version may be another process's logged commit this engine never read:
        // `checkpoint()` looks at the published one.)
        let last = state.withLock { !$0.closing && $0.openCount == 1 && $0.activeTransactions == 0 }
        if last && log != nil && !options.readOnly && lockFile.tryExclusive() {
            // Best effort: the log keeps every commit durable whatever happens here.
            try? checkpoint()
            lockFile.endInitialisation()
        }
        let finalize = state.withLock { state -> Bool in
            guard !state.closing else { return false }
            state.openCount -= 1
            guard state.openCount == 0 else { return false }
            state.closing = true
            return state.activeTransactions == 0
        }
        if finalize { release(force: false) }
    }

    /// Releases the file; unless `force`d (by deinit), only if the engine is still closing with
    /// no transaction left (it may have been reopened meanwhile).
    private func release(force: Bool) {
        let proceed = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            guard force || (state.closing && state.activeTransactions == 0) else { return false }
            state.closed = true
            return true
        }
        guard proceed else { return }
        // Before the lock file is unmapped: the write lock's listener reads it.
        writeLock.shutdown()
        lockFile.wakeWaiters()
        lockFile.close()
        file.close()
        log?.file.close()
        released.leave()
        if let registryKey { OpenFileRegistry.remove(registryKey, of: self) }
    }

    /// Entered at init and left once the files are released (see `open`).
    let released: DispatchGroup = {
        let group = DispatchGroup()
        group.enter()
        return group
    }()

    deinit { release(force: true) }

    /// Counts a transaction starting (the engine is not released while any runs); returns its
    /// serial. Throws `engineClosed` once the engine is closing.
    func beginTransaction() throws -> UInt64 {
        try state.withLock { state in
            guard !state.closing else { throw StorageError.engineClosed }
            state.activeTransactions += 1
            state.serial += 1
            return state.serial
        }
    }

    /// Counts a transaction ending; the last one of a closing engine releases the files.
    func endTransaction() {
        let finalize = state.withLock { state -> Bool in
            state.activeTransactions -= 1
            return state.closing && state.activeTransactions == 0
        }
        if finalize { release(force: false) }
    }

    // MARK: Versions

    /// The newest committed version visible to new transactions.
    public var latestVersion: UInt64 { lockFile.publishedTxid }

    /// Number of snapshots currently pinning a version, in every process.
    public var activeReaderCount: Int { lockFile.activeReaderCount() }

    /// The oldest version a live reader (in any process) has pinned, or nil when none is.
    /// Layers above keep per-version history back to this version.
    public var oldestPinnedVersion: UInt64? { lockFile.oldestPinnedVersion() }

    /// The meta of version `txid`, or nil when that version is no longer the newest (its slot
    /// may have been reused).
    func meta(for txid: UInt64) throws -> MetaPage? {
        if let cached = state.withLock({ $0.latestMeta.txid == txid ? $0.latestMeta : nil }) { return cached }
        let page = lockFile.publishedMetaPage
        try ensureMapped(page + 1)
        guard let meta = MetaPage.decode(base + Int(page) * pageSize, pageSize: pageSize, at: page),
              meta.txid == txid else { return nil }
        try ensureMapped(meta.pageCount)
        state.withLock { if $0.latestMeta.txid < meta.txid { $0.latestMeta = meta } }
        return meta
    }

    /// Records that the file is at least `end` bytes long because this engine has just written
    /// up to there, so that `ensureMapped` need not ask the file system.
    func noteWritten(through end: UInt64) {
        state.withLock { if $0.knownFileSize < end { $0.knownFileSize = end } }
    }

    /// Makes sure the mapping covers `pages` and the file really is that long (so no access
    /// through the mapping can fault).
    func ensureMapped(_ pages: UInt64) throws {
        let needed = pages * UInt64(pageSize)
        try state.withLock { state in
            if state.knownFileSize < needed {
                state.knownFileSize = try file.size()
                guard state.knownFileSize >= needed else {
                    throw StorageError.truncated(expectedBytes: needed, actualBytes: state.knownFileSize)
                }
            }
            if state.mappedBytes < needed {
                _ = try file.map(length: needed)
                state.mappedBytes = needed
            }
        }
    }
}
