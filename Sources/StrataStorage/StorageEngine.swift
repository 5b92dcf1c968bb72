// The engine: one database file, its lock file, the mapping, and the commit path.
//
// One engine exists per file per process (the registry in `open(path:)` shares it), because
// the file locks that coordinate processes belong to an open file description, and two in one
// process would exclude each other.

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
    /// box: a function value kept directly in the generic `Locked` gained two reabstraction
    /// thunks on every `withLock` (its inout write-back), so each call went through a longer
    /// chain than the last.
    let localCommitObserver = Locked<LocalCommitObserver?>(nil)
    let writeLock: WriteLock
    let verifier: PageVerifier
    let base: UnsafeRawPointer
    let maximumPages: UInt64
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
    /// generic tuple witnesses, which showed at every publish and begin.
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

    // MARK: Opening

    private static let registry = Locked<[String: Weak]>([:])
    private struct Weak { weak var engine: StorageEngine? }

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
        let key = canonicalPath(path)
        // An engine found closing is kept alive until the lock is released, so that its last
        // reference (and its deinit, which takes the registry lock) never goes away inside it.
        var closing: StorageEngine?
        defer { withExtendedLifetime(closing) {} }
        while true {
            let opened = try registry.withLock { registry -> StorageEngine? in
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
                registry[key] = Weak(engine: engine)
                return engine
            }
            if let opened { return opened }
            sched_yield()
        }
    }

    /// Opens a database stored in `file` (for example a simulated disk in tests), with its
    /// lock file at `lockPath` and its commit log in `log` (without one, every durable commit
    /// syncs the database file). Not shared through the registry.
    public static func open(file: any StorageFile, log: (any StorageFile)? = nil, lockPath: String,
                            options: StorageOptions = StorageOptions()) throws -> StorageEngine {
        try StorageEngine(path: lockPath, lockPath: lockPath, options: options, file: file, log: log, registryKey: nil)
    }

    /// The path of the commit log of the database at `path`.
    public static func logPath(for path: String) -> String { path + "-log" }

    private init(path: String, lockPath: String, options: StorageOptions, file given: (any StorageFile)?,
                 log givenLog: (any StorageFile)?, registryKey: String?) throws {
        guard StorageOptions.validPageSizes.contains(options.pageSize) else {
            throw StorageError.corrupted(page: nil, reason: "invalid page size option \(options.pageSize)")
        }
        self.path = path
        self.options = options
        self.registryKey = registryKey
        var opened: (any StorageFile)? = given
        var recovered: MetaPage?
        // The log beside a database file is opened only under the lock file's flock (by the
        // first opener in the closure below, by others after it), so a log that the first
        // opener moves aside or removes is never one another process holds open.
        var log: CommitLog? = try givenLog.map { try CommitLog(file: $0) }
        let logPath = given == nil ? Self.logPath(for: path) : path + " (commit log)"
        let createsLog = options.durability == .full && options.logsCommits
        var replay: ReplayPlan?
        var gaveUp: CommitLogRecoveryReport?
        // Files this open created, removed if its initialisation fails: nobody else can have
        // them open (they would need the flock, which is exclusive until then).
        var createdFiles: [String] = []
        // Whether this open made the log beside an existing database (it had none).
        var logCreated = false
        let lockFile: LockFile
        do {
            lockFile = try LockFile(path: lockPath, slotCount: options.maximumReaders, removeOnFailure: { createdFiles }) { lockFile in
                // We are the only process with the database open.
                var created = false
                if given == nil {
                    let creation = try Self.createIfNeeded(path: path, logPath: logPath, options: options)
                    created = creation != .none
                    if creation == .createdFile { createdFiles.append(path) }
                    opened = try PosixFile(path: path, create: false, readOnly: options.readOnly, maximumSize: options.maximumFileSize,
                                       writesInPlace: options.writesInPlace)
                    let logFile = try Self.openLog(at: logPath, readOnly: options.readOnly, create: createsLog)
                    log = logFile?.log
                    if logFile?.created == true { createdFiles.append(logPath); logCreated = true }
                } else if try given!.size() == 0 {
                    // A log with records belongs to a database this empty file is not (any more).
                    if let log, try DatabasePath.holdsRecords(log.file) {
                        throw StorageError.emptyDatabaseWithCommitLog(path: path, logPath: logPath)
                    }
                    try Self.writeInitialContents(to: given!, pageSize: options.pageSize)
                    created = true
                }
                let meta = try Self.recover(file: opened!, path: path)
                recovered = meta
                lockFile.publish(meta.txid, metaPage: meta.selfPage)
                if let log {
                    // A new database starts a new log. Nothing to erase: `createIfNeeded` (or
                    // the check above) found the log holding no records, or moved it aside.
                    if created {
                        // Best effort: if the zeros cannot all be written (a full disk), the
                        // log grows as commits need it, as it does for a database created
                        // before this existed.
                        // The header records the log's length once its zeros are synced: a
                        // log found shorter later was cut (FileHeader.swift).
                        if (try? log.preallocate()) == true { try FileHeader.recordLogLength(CommitLog.capacity, in: opened!) }
                    } else {
                        // A log made now (the database was copied without its own) is checked
                        // against nothing, and made as long as the header says logs are here.
                        let expected = logCreated ? 0 : try FileHeader.logLength(of: opened!)
                        (replay, gaveUp) = try Self.assessLogAtOpen(log, logPath: logPath, recovered: meta, file: opened!, path: path,
                                                                    lockFile: lockFile, options: options, expectedLength: expected)
                        if logCreated { try Self.keepLogLength(log, file: opened!) }
                    }
                } else if given == nil && !created {
                    // No log beside the file: fine, unless the lock file shows one was in use.
                    (replay, gaveUp) = try Self.assessLogAtOpen(nil, logPath: logPath, recovered: meta, file: opened!, path: path,
                                                                lockFile: lockFile, options: options, expectedLength: 0)
                }
                return replay != nil
            }
        } catch {
            log?.file.close()
            if given == nil { opened?.close() }
            throw error
        }
        do {
            // Not the first opener: the log is opened now, under the shared flock.
            if given == nil && !lockFile.initialisedByThisProcess {
                log = try Self.openLog(at: logPath, readOnly: options.readOnly, create: createsLog)?.log
            }
            if opened == nil {
                opened = try PosixFile(path: path, create: false, readOnly: options.readOnly, maximumSize: options.maximumFileSize,
                                       writesInPlace: options.writesInPlace)
            }
            let file = opened!
            let size = try file.size()
            var header = [UInt8](repeating: 0, count: FileHeader.size)
            try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
            let pageSize = try header.withUnsafeBytes { try FileHeader.decode($0.baseAddress!, fileSize: size, path: path) }
            let base = try file.map(length: max(size, UInt64(3 * pageSize)))
            let meta: MetaPage
            if let recovered {
                meta = recovered
            } else {
                let published = lockFile.publishedTxid
                let page = lockFile.publishedMetaPage
                guard page < size / UInt64(pageSize),
                      let m = MetaPage.decode(base + Int(page) * pageSize, pageSize: pageSize, at: page), m.txid == published else {
                    throw StorageError.corrupted(page: page, reason: "published version \(published) has no valid meta")
                }
                meta = m
            }
            self.file = file
            self.log = log
            self.commitLogRecoveryReport = gaveUp
            self.lockFile = lockFile
            self.pageSize = pageSize
            self.base = base
            self.maximumPages = options.maximumFileSize / UInt64(pageSize)
            self.verifier = PageVerifier(maximumPages: maximumPages)
            self.writeLock = WriteLock(descriptor: lockFile.descriptor, wanted: lockFile.writeLockWanted,
                                       wantSignal: lockFile.writeLockWantSignal)
            var state = State(latestMeta: meta, mappedBytes: max(size, UInt64(3 * pageSize)), knownFileSize: size)
            state.group = GroupState(openedAt: meta.txid)
            self.state = Locked(state)
        } catch {
            opened?.close()
            log?.file.close()
            // Only the lock file: another process may have used a database or log this open
            // created once the flock was shared.
            lockFile.removeIfCreated()
            lockFile.close()
            throw error
        }
        if let replay {
            do {
                try replayLog(replay)
                if gaveUp != nil { try endDamagedGeneration() }
            } catch {
                lockFile.restoreInheritedPublication()
                abandon()
                throw error
            }
            lockFile.endInitialisation()
        }
    }

    /// Opens the commit log beside a database, creating it when `create` (an engine that logs
    /// commits) unless read-only; otherwise only if it exists (it may hold commits to replay).
    /// Also says whether this call created the file.
    private static func openLog(at path: String, readOnly: Bool, create: Bool) throws -> (log: CommitLog, created: Bool)? {
        let file: PosixFile
        do {
            file = try PosixFile(path: path, create: create && !readOnly, readOnly: readOnly, maximumSize: CommitLog.capacity + CommitLog.growthStep)
        } catch StorageError.ioFailure(_, let code) where code == ENOENT && (readOnly || !create) {
            return nil
        }
        do {
            return (try CommitLog(file: file), file.created)
        } catch {
            file.close()
            if file.created { unlink(path) }
            throw error
        }
    }

    /// Gives up an engine whose opening failed after it was built: releases its files (the
    /// deinit then finds nothing to do).
    private func abandon() {
        state.withLock { $0.closed = true }
        writeLock.shutdown()
        lockFile.removeIfCreated()
        lockFile.close()
        file.close()
        log?.file.close()
        released.leave()
    }

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

    /// How `createIfNeeded` found the database file.
    enum Creation: Equatable {
        /// A database was there: nothing was written.
        case none
        /// Nothing was there: a new file was created.
        case createdFile
        /// A regular file holding no database yet was initialised in place.
        case initialisedInPlace
    }

    /// Makes sure a database is at `path`, for the first opener (under the exclusive flock):
    /// - nothing there: creates it atomically (written under a temporary name, synced, renamed
    ///   onto the path only if that is still missing, the directory synced), so a crash leaves
    ///   either no file or a complete empty database. A commit log beside it that holds records
    ///   (its database file was deleted) is moved aside first, never erased.
    /// - a regular file holding no database yet (`DatabasePath.isUninitialised`: empty, say,
    ///   made by the app): initialised in place, so its owner, mode and attributes stay; but
    ///   if its commit log holds records, `emptyDatabaseWithCommitLog` and nothing changes.
    /// - any other regular file: nothing (it is opened as it is).
    /// Anything else at `path` (a link put there since `open(path:)` resolved it) is refused.
    private static func createIfNeeded(path: String, logPath: String, options: StorageOptions) throws -> Creation {
        let noDatabase = StorageError.ioFailure(operation: "open \(path) read-only (no database there)", code: ENOENT)
        if try DatabasePath.regularFileExists(path) {
            let file = try PosixFile(path: path, create: false, readOnly: options.readOnly, maximumSize: UInt64(16 * options.pageSize))
            defer { file.close() }
            guard try DatabasePath.isUninitialised(file) else { return .none }
            if options.readOnly { throw noDatabase }
            if try DatabasePath.logHoldsRecords(at: logPath) {
                throw StorageError.emptyDatabaseWithCommitLog(path: path, logPath: logPath)
            }
            try writeInitialContents(to: file, pageSize: options.pageSize, headerLast: true)
            return .initialisedInPlace
        }
        if options.readOnly { throw noDatabase }
        if try DatabasePath.logHoldsRecords(at: logPath) { _ = try DatabasePath.moveOrphanedLog(at: logPath) }
        let temporary = path + ".creating-\(getpid())"
        unlink(temporary)  // left by a process with this pid that stopped while creating
        let file = try PosixFile(path: temporary, create: true, maximumSize: UInt64(16 * options.pageSize))
        do {
            try writeInitialContents(to: file, pageSize: options.pageSize)
            file.close()
        } catch {
            file.close()
            unlink(temporary)
            throw error
        }
        do {
            try DatabasePath.renameIntoMissing(temporary, path)
        } catch {
            unlink(temporary)
            throw error
        }
        syncDirectory(of: path)
        return .createdFile
    }

    /// Writes a new database's three pages (header, first meta, empty slot) and syncs them.
    /// With `headerLast` (a file initialised in place, which no rename makes appear whole), the
    /// meta pages are written and synced before the header: a crash between the two leaves a
    /// file `DatabasePath.isUninitialised` still recognises, never a header without its meta.
    static func writeInitialContents(to file: any StorageFile, pageSize: Int, headerLast: Bool = false) throws {
        let image = UnsafeMutableRawPointer.allocate(byteCount: 3 * pageSize, alignment: 4096)
        defer { image.deallocate() }
        image.initializeMemory(as: UInt8.self, repeating: 0, count: 3 * pageSize)
        FileHeader.encode(pageSize: pageSize, into: image)
        var meta = MetaPage(txid: 0, catalogRoot: 0, pageCount: FileHeader.firstDataPage, freeListHead: 0,
                            freeListPages: 0, flags: 0, freeListBirth: 0, written: [])
        // A random token (unused: nothing is announced) makes each database's first meta, and so
        // its checksum, its own: a commit log names its base by txid and that checksum, so a
        // log can never be replayed onto another new database.
        var system = SystemRandomNumberGenerator()
        meta.nextToken = system.next() | 1
        meta.encode(into: image + pageSize, pageSize: pageSize)
        if headerLast {
            try file.write([UnsafeRawBufferPointer(start: image + pageSize, count: 2 * pageSize)], at: UInt64(pageSize))
            try file.synchronize()
            try file.write([UnsafeRawBufferPointer(start: image, count: pageSize)], at: 0)
        } else {
            try file.write([UnsafeRawBufferPointer(start: image, count: 3 * pageSize)], at: 0)
        }
        try file.synchronize()
    }

    /// Finds the newest meta whose commit completed (see MetaPage.swift).
    static func recover(file: any StorageFile, path: String) throws -> MetaPage {
        let size = try file.size()
        var header = [UInt8](repeating: 0, count: FileHeader.size)
        try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        let pageSize = try header.withUnsafeBytes { try FileHeader.decode($0.baseAddress!, fileSize: size, path: path) }
        guard size >= UInt64(3 * pageSize) else { throw StorageError.truncated(expectedBytes: UInt64(3 * pageSize), actualBytes: size) }
        let base = try file.map(length: size)
        let filePages = size / UInt64(pageSize)
        // A logged meta is never adopted: its commit is durable in the commit log, and only
        // there (see CommitLog.swift).
        let anchors = [PageNumber(1), 2].compactMap { MetaPage.decode(base + Int($0) * pageSize, pageSize: pageSize, at: $0) }
            .filter { !$0.isLogged }
            .sorted { $0.txid > $1.txid }
        if anchors.isEmpty { throw StorageError.corrupted(page: 1, reason: "neither meta page is valid") }
        var truncation: StorageError?
        var ceiling = UInt64.max  // states at or above this txid belong to a newer anchor
        for anchor in anchors {
            guard anchor.txid < ceiling else { continue }
            // The anchor and the records chained from it, newest first.
            var states = [anchor]
            var current = anchor
            while current.nextPage != 0, current.nextPage < filePages, states.count <= MetaPage.chainCapacity {
                guard let record = MetaPage.decode(base + Int(current.nextPage) * pageSize, pageSize: pageSize, at: current.nextPage),
                      record.token == current.nextToken, record.txid == current.txid + 1,
                      record.anchorSlot == UInt32(anchor.selfPage), record.txid < ceiling
                else { break }
                states.append(record)
                current = record
            }
            var failures = 0
            for (position, meta) in states.enumerated().reversed() {
                let newest = position == states.count - 1
                // Grouped commits (GroupedCommits.swift) may be incomplete, several at once; so
                // may the newest commit, and a commit after grouped ones depends on them.
                let followsGroup = position > 0 && states[position - 1].isGrouped
                let mayFail = newest || meta.isGrouped
                let needed = meta.pageCount * UInt64(pageSize)
                if needed > size {
                    // Past the end: a lost extension of the unfinished newest commit (every page
                    // past the end is one it wrote) or of unsynced grouped commits, or a file cut
                    // short.
                    let excused = meta.isGrouped || (newest && (coversTail(meta, from: filePages) || followsGroup))
                    if !excused {
                        truncation = truncation ?? .truncated(expectedBytes: needed, actualBytes: size)
                        break
                    }
                    failures += 1
                    continue
                }
                if verifyWritten(meta, base: base, pageSize: pageSize)
                    && groupBeforeIsComplete(states[..<position], after: meta.syncedThrough, base: base, pageSize: pageSize, fileSize: size) {
                    return meta
                }
                if !mayFail {
                    throw StorageError.corrupted(page: meta.selfPage, reason: "the commits of versions \(meta.txid) and \(meta.txid + 1) both fail their checksums")
                }
                failures += 1
            }
            if let truncation { throw truncation }
            ceiling = anchor.txid
        }
        if let truncation { throw truncation }
        throw StorageError.corrupted(page: nil, reason: "the newest commits' pages fail their checksums")
    }

    /// Whether the grouped commits just before a state that were not yet synced when it was
    /// written (the grouped tail of `earlier` after `syncedThrough`) all hold what they listed:
    /// the state's tree may use their pages.
    private static func groupBeforeIsComplete(_ earlier: ArraySlice<MetaPage>, after syncedThrough: UInt64,
                                              base: UnsafeRawPointer, pageSize: Int, fileSize: UInt64) -> Bool {
        for meta in earlier.reversed() {
            guard meta.isGrouped, meta.txid > syncedThrough else { return true }
            guard meta.pageCount * UInt64(pageSize) <= fileSize, verifyWritten(meta, base: base, pageSize: pageSize) else { return false }
        }
        return true
    }

    /// Whether the pages [from, pageCount) all belong to runs the meta lists.
    private static func coversTail(_ meta: MetaPage, from first: UInt64) -> Bool {
        var page = first
        var runs = meta.written
        if meta.isRecord { runs.append(MetaPage.WrittenRun(page: meta.selfPage, checksum: 0, pages: 1)) }
        guard !meta.written.isEmpty else { return false }
        runs.sort { $0.page < $1.page }
        while page < meta.pageCount {
            guard let run = runs.first(where: { $0.page <= page && page < $0.page + UInt64($0.pages) }) else { return false }
            page = run.page + UInt64(run.pages)
        }
        return true
    }

    /// Every page a one-sync commit listed holds exactly what that commit wrote.
    static func verifyWritten(_ meta: MetaPage, base: UnsafeRawPointer, pageSize: Int) -> Bool {
        for run in meta.written {
            let page = PageView(base: base + Int(run.page) * pageSize)
            guard page.number == run.page, page.txid == meta.txid, page.storedChecksum == run.checksum else { return false }
            guard crc32c(page.base + 4, count: Int(run.pages) * pageSize - 4) == run.checksum else { return false }
        }
        return true
    }

    // MARK: Closing

    private func retainOpen() -> Bool {
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
        if let registryKey {
            Self.registry.withLock { registry in
                if registry[registryKey]?.engine === self || registry[registryKey]?.engine == nil { registry[registryKey] = nil }
            }
        }
    }

    /// Entered at init and left once the files are released (see `open`).
    private let released: DispatchGroup = {
        let group = DispatchGroup()
        group.enter()
        return group
    }()

    deinit { release(force: true) }

    private func beginTransaction() throws -> UInt64 {
        try state.withLock { state in
            guard !state.closing else { throw StorageError.engineClosed }
            state.activeTransactions += 1
            state.serial += 1
            return state.serial
        }
    }

    private func endTransaction() {
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
    private func meta(for txid: UInt64) throws -> MetaPage? {
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
    private func noteWritten(through end: UInt64) {
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

    // MARK: Read transactions

    /// Starts a read transaction on the newest version.
    public func beginRead() throws -> ReadTransaction {
        let serial = try beginTransaction()
        do {
            let slot = try lockFile.acquireSlot()
            for _ in 0..<1000 {
                let txid = lockFile.pinPublished(slot: slot)
                if let meta = try meta(for: txid) {
                    return ReadTransaction(engine: self, snapshot: Snapshot(base: base, pageSize: pageSize, meta: meta, verifier: verifier), slot: slot, serial: serial)
                }
            }
            lockFile.releaseSlot(slot)
            throw StorageError.corrupted(page: nil, reason: "could not read a stable meta page")
        } catch {
            endTransaction()
            throw error
        }
    }

    /// A read transaction on the version `meta` describes, which the calling writer is about to
    /// publish (a logged commit opens it while the disk writes its record, so that its caller
    /// need not begin one after the sync: `WriteTransaction.readsAfterCommit`). Pinning a
    /// version not yet published holds back nothing older; the transaction is used only once
    /// the commit is published, and closed if it is not.
    func openRead(committing meta: MetaPage) throws -> ReadTransaction {
        let serial = try beginTransaction()
        do {
            let slot = try lockFile.acquireSlot()
            lockFile.pin(slot: slot, txid: meta.txid)
            return ReadTransaction(engine: self, snapshot: Snapshot(base: base, pageSize: pageSize, meta: meta, verifier: verifier), slot: slot, serial: serial)
        } catch {
            endTransaction()
            throw error
        }
    }

    /// Starts a read transaction on the version `other` reads, which must still be open (its
    /// pin keeps that version's pages from reuse while the new one pins it too). Frozen
    /// snapshots use this to keep the version of the instance they were taken from.
    public func beginRead(sameVersionAs other: ReadTransaction) throws -> ReadTransaction {
        guard !other.isClosed else { throw StorageError.transactionClosed }
        let serial = try beginTransaction()
        do {
            let slot = try lockFile.acquireSlot()
            lockFile.pin(slot: slot, txid: other.version)
            return ReadTransaction(engine: self, snapshot: other.snapshot, slot: slot, serial: serial)
        } catch {
            endTransaction()
            throw error
        }
    }

    func releaseReader(slot: Int) {
        lockFile.releaseSlot(slot)
        endTransaction()
    }

    /// Runs `body` in a read transaction on the newest version.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        let transaction = try beginRead()
        defer { transaction.close() }
        return try body(transaction)
    }

    // MARK: Write transactions

    /// Starts the write transaction, blocking the calling thread while another writer (in
    /// this or another process) holds the lock.
    public func beginWrite() throws -> WriteTransaction {
        guard !options.readOnly else { throw StorageError.readOnly }
        let serial = try beginTransaction()
        do {
            try writeLock.acquire()
        } catch {
            endTransaction()
            throw error
        }
        return try makeWrite(serial: serial)
    }

    /// Starts the write transaction, suspending (without blocking a thread) while another
    /// writer holds the lock.
    public func beginWrite() async throws -> WriteTransaction {
        guard !options.readOnly else { throw StorageError.readOnly }
        let serial = try beginTransaction()
        do {
            try await writeLock.acquire()
        } catch {
            endTransaction()
            throw error
        }
        return try makeWrite(serial: serial)
    }

    func beginTransactionForCallback() throws -> UInt64 { try beginTransaction() }
    func endTransactionForCallback() { endTransaction() }
    func makeWriteForCallback(serial: UInt64) throws -> WriteTransaction { try makeWrite(serial: serial) }

    private func makeWrite(serial: UInt64) throws -> WriteTransaction {
        do {
            if let poisoned = state.withLock({ $0.poisoned }) { throw poisoned }
            let published = lockFile.publishedTxid
            guard let meta = try meta(for: published) else {
                throw StorageError.corrupted(page: lockFile.publishedMetaPage, reason: "published version \(published) has no valid meta")
            }
            try settleForeignGroup(base: meta)
            let snapshot = Snapshot(base: base, pageSize: pageSize, meta: meta, verifier: verifier)
            let (space, chain) = try loadFreeSpace(snapshot)
            // Pages freed by earlier commits become reusable when the commit lays out its
            // pages (`WriteTransaction.releaseFreedPages`), not here: nothing allocates before.
            return WriteTransaction(engine: self, snapshot: snapshot, freeSpace: space, freeListPages: chain, serial: serial)
        } catch {
            writeLock.release()
            endTransaction()
            throw error
        }
    }

    func takeArena() -> Arena {
        state.withLock { state in
            defer { state.spareArena = nil }
            return state.spareArena ?? Arena()
        }
    }

    func returnArena(_ arena: Arena) {
        state.withLock { $0.spareArena = arena }
    }

    /// How many nodes kept from a commit later transactions took instead of reading their
    /// pages (`Arena.takeKept`; for tests). Zero while a write transaction holds the arena.
    var keptNodesTaken: Int { state.withLock { $0.spareArena?.keptTaken ?? 0 } }

    /// A random, nonzero token for the next commit record (see MetaPage.swift). Tokens only
    /// need to be unpredictable to stale pages, so a seeded generator is enough, and it spares
    /// a system call per commit.
    func nextToken() -> UInt64 {
        state.withLock { state in
            state.tokenState &+= 0x9E37_79B9_7F4A_7C15
            var z = state.tokenState
            z = (z ^ (z >> 30)) &* 0xBF58_476C_E5B9_E1D5
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return (z ^ (z >> 31)) | 1
        }
    }

    func endWrite() {
        writeLock.release()
        endTransaction()
    }

    private func loadFreeSpace(_ snapshot: Snapshot) throws -> (FreeSpace, [PageNumber]) {
        let meta = snapshot.meta
        // Taken out of the cache, not copied: the transaction then owns the only reference to
        // its arrays and changes them in place (no copy on its first change, and nothing to
        // free when the commit puts its own back). A transaction that does not commit leaves
        // the cache empty, and the next one decodes the pages.
        if let cache = state.withLock({ $0.freeSpaceCache.take() }), cache.txid == meta.txid {
            return (cache.space, cache.chain)
        }
        if !meta.freeList.isEmpty {
            return (try FreeSpace.decode(meta.freeList, pageCount: meta.pageCount, firstPage: meta.selfPage), [])
        }
        var bytes: [UInt8] = []
        var chain: [PageNumber] = []
        var page = meta.freeListHead
        for _ in 0..<meta.freeListPages {
            let view = try snapshot.page(page)
            guard view.kindRaw == PageKind.freeList.rawValue else {
                throw StorageError.corrupted(page: page, reason: "expected a free-list page")
            }
            chain.append(page)
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: view.base + PageLayout.headerSize, count: FreeSpace.payloadPerPage(pageSize)))
            page = view.aux
        }
        let space = try FreeSpace.decode(bytes, pageCount: meta.pageCount, firstPage: meta.freeListHead)
        return (space, chain)
    }

    /// Runs `body` in a write transaction and commits it when `body` returns; rolls back and
    /// rethrows when `body` throws.
    public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        try Self.run(try beginWrite(), body)
    }

    /// Async form of `write(_:)`: waits for the write lock without blocking a thread.
    public func write<R>(_ body: (WriteTransaction) throws -> R) async throws -> R {
        try Self.run(try await beginWrite(), body)
    }

    private static func run<R>(_ transaction: WriteTransaction, _ body: (WriteTransaction) throws -> R) throws -> R {
        do {
            let result = try body(transaction)
            try transaction.commit()
            return result
        } catch {
            transaction.rollback()
            throw error
        }
    }

    // MARK: Commit

    func commitWrite(_ transaction: WriteTransaction, grouped requested: Bool = false) throws {
        // Small durable commits go through the commit log (a grouped one too: its record is
        // synced at once, which costs what the group's sync would).
        let recordLength = CommitLog.headerSize + transaction.redo.bytes.count
        if let position = logPosition(for: transaction, recordLength: recordLength),
           log?.makeRoom(through: position.offset + UInt64(CommitLog.paddedLength(recordLength))) != false {
            let header = CommitLog.Header(salt: position.salt, txid: transaction.txid, baseTxid: position.baseTxid,
                                          baseChecksum: position.baseChecksum, length: recordLength)
            // Into the arena: no array (and no runtime metadata lookup for one) per commit.
            let image = transaction.arena.allocate(CommitLog.paddedLength(recordLength), alignment: 4096)
            CommitLog.encode(header, body: transaction.redo.bytes,
                             logLength: log?.lengthAfterWriting(to: position.offset + UInt64(CommitLog.paddedLength(recordLength))), into: image)
            try commitLogged(transaction, at: position, image: UnsafeRawBufferPointer(start: image, count: CommitLog.paddedLength(recordLength)),
                             length: recordLength)
            return
        }
        let failpoint = options.failpoint
        let base = transaction.snapshot.meta
        let durable = options.durability == .full
        let synced = base.flags & MetaPage.flagUnsynced == 0
        // Grouped commits chain records up to the meta's capacity: an anchor ends the group.
        let chainLimit = requested ? MetaPage.groupChainLimit : MetaPage.chainLimit
        let chainable = durable && synced && base.nextPage != 0 && base.chain.count < chainLimit
        var meta = try transaction.layOut(chain: chainable ? base : nil)
        try makeRoom(for: meta, of: transaction)
        let oneSync = durable && synced && transaction.dirty.count <= MetaPage.listCapacity(pageSize: pageSize)
        if oneSync || meta.isRecord {
            meta.written = transaction.dirty.map { MetaPage.WrittenRun(page: $0.page, checksum: $0.checksum, pages: UInt32($0.pages)) }
        }
        // Only a commit that lists its pages can skip its sync (recovery checks them).
        let grouped = requested && durable && (oneSync || meta.isRecord)
        if grouped { meta.flags |= MetaPage.flagGrouped }
        // An anchor overwrites the other slot, which may hold the way back to the last synced
        // commit: make the commits before it durable first.
        if durable && !meta.isRecord { try synchronizeBeforeAnchor() }
        if durable { meta.syncedThrough = state.withLock { $0.group.durable } }
        try failpoint?(.beforeDataWrite)
        // The slot our chain does not hang from (where an anchor of ours would go).
        try discardUnpublishedMeta(slot: base.anchorSlot == 1 ? 2 : 1, txid: meta.txid, durable: durable)
        if meta.pageCount > base.pageCount { try failpoint?(.beforeGrowth) }
        try writePages(&transaction.dirty, buffers: &transaction.arena.pageVectors)
        try failpoint?(.afterDataWrite)
        if durable && !oneSync && !meta.isRecord {
            try failpoint?(.beforeDataSync)
            try file.synchronize()
            try failpoint?(.afterDataSync)
        }
        try failpoint?(.beforeMetaWrite)
        let location = meta.selfPage * UInt64(pageSize)
        // What to put back if the commit fails after the meta is written: the slot's previous
        // anchor, or (for a record, written to a free page) zeros.
        let previous = meta.isRecord
            ? [UInt8](repeating: 0, count: pageSize)
            : [UInt8](UnsafeRawBufferPointer(start: self.base + Int(meta.selfPage) * pageSize, count: pageSize))
        let image = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 4096)
        defer { image.deallocate() }
        meta.encode(into: image, pageSize: pageSize)
        do {
            try writeMeta(image, at: location)
            try failpoint?(.afterMetaWrite)
            if durable && !grouped {
                try failpoint?(.beforeFinalSync)
                try file.synchronize()
                try failpoint?(.afterFinalSync)
            }
        } catch {
            // The new meta may be in the page cache: put the old bytes back so that nobody
            // (another process opening the file, or a crash before the cache is written back)
            // adopts a commit we report as failed.
            do {
                try previous.withUnsafeBytes { try file.write([$0], at: location) }
                if durable { try file.synchronize() }
            } catch {
                // The page could not be put back. That matters only if the page cache shows the
                // failed commit's meta, which anyone opening the file would adopt; then this
                // engine's view (the previous version) is no longer the file's and it must stop.
                // Otherwise (the meta write failed before completing) the engine stays usable.
                // Read through the file, not the mapping: a record's page may lie past what is
                // mapped (or past the end of the file, where the mapping would fault).
                // If even that read fails, assume the worst.
                var showsFailedCommit = true
                if (try? file.read(into: UnsafeMutableRawBufferPointer(start: image, count: pageSize), at: location)) != nil {
                    showsFailedCommit = MetaPage.decode(UnsafeRawPointer(image), pageSize: pageSize, at: meta.selfPage)?.txid == meta.txid
                }
                if showsFailedCommit {
                    state.withLock { $0.poisoned = .ioFailure(operation: "restoring the meta page after a failed commit; reopen the database", code: EIO) }
                }
            }
            throw error
        }
        try publish(meta, of: transaction, durable: durable, grouped: grouped)
    }

    /// The end of every commit, once its meta is written (and as durable as it will be): the
    /// engine's state moves to `meta`, which is published to every process.
    func publish(_ meta: MetaPage, of transaction: WriteTransaction, durable: Bool, grouped: Bool) throws {
        // The base's pages are mapped already (every version this engine starts from is).
        if meta.pageCount > transaction.snapshot.meta.pageCount { try ensureMapped(meta.pageCount) }
        // This process computed these checksums as it wrote the pages: the next transaction
        // that reads them need not compute them again.
        for page in transaction.dirty { verifier.markVerified(page.page, birth: meta.txid) }
        state.withLock { state in
            state.latestMeta = meta
            state.freeSpaceCache = FreeSpaceCache(txid: meta.txid, space: transaction.freeSpace, chain: transaction.newFreeListPages)
            if durable { state.group.committed(meta.txid, carrying: meta.syncedThrough, grouped: grouped) }
        }
        lockFile.publish(meta.txid, metaPage: meta.selfPage)
        if let observer = localCommitObserver.withLock({ $0 }) { observer.call(meta.txid) }
    }

    /// Writes an encoded meta page to a slot or record page, its checksum last, in a write of
    /// its own: if writing the rest fails part way (a full disk gives a short write, then
    /// ENOSPC), the page's checksum field cannot match, so a half-written meta whose list
    /// happens to be complete is never adopted. The first write puts the checksum's complement
    /// in the field, not the old bytes: a short write of the checksum itself then leaves a mix
    /// of checksum and complement bytes, which differs from the checksum in every byte not
    /// written. (Keeping the old bytes instead let a meta validate whenever the unwritten
    /// checksum bytes happened to equal the old ones: 1 in 256 for a write cut one byte short,
    /// found by `IOErrorTests.diskFullAtEveryPointOfACommit`.)
    func writeMeta(_ image: UnsafeRawPointer, at location: UInt64) throws {
        var complement = ~image.loadUnaligned(as: UInt32.self)
        try withUnsafeBytes(of: &complement) { field in
            try file.write([field, UnsafeRawBufferPointer(start: image + 4, count: pageSize - 4)], at: location)
        }
        try file.write([UnsafeRawBufferPointer(start: image, count: 4)], at: location)
    }

    /// A writer that died after writing its meta but before publishing it, while other
    /// processes kept the file open (so no recovery ran), leaves a meta for `txid` in the slot
    /// this commit will write. This commit is about to write over the free pages that dead
    /// commit used, so its meta must go first, durably: if this commit then stopped before its
    /// own meta write, the next open would adopt the dead meta over pages we changed (a
    /// two-sync meta lists no checksums that could catch it). Costs a write and a sync only in
    /// that case; otherwise one read of the mapped slot. (Records always list their pages, so a
    /// dead writer's record cannot be adopted over pages changed since.)
    func discardUnpublishedMeta(slot: PageNumber, txid: UInt64, durable: Bool) throws {
        let page = base + Int(slot) * pageSize
        // A page whose txid field is older cannot decode to a meta this commit must discard:
        // no checksum over the page then (the usual case).
        guard MetaPage.storedTxid(page) >= txid,
              let stale = MetaPage.decode(page, pageSize: pageSize, at: slot), stale.txid >= txid else { return }
        let zeros = [UInt8](repeating: 0, count: pageSize)
        try zeros.withUnsafeBytes { try file.write([$0], at: slot * UInt64(pageSize)) }
        if durable { try file.synchronize() }
    }

    /// Writes dirty pages sorted by position, one gathering write per contiguous stretch. With
    /// `inPlace` (a logged commit's pages), stretches the file accepts are stored through its
    /// writable mapping instead (`StorageFile.writeInPlace`; only files on tmpfs accept). Other
    /// commits always write: when stores were also allowed on ext4, a stored page dirtied its
    /// whole large folio, which made the syncs that follow at once write back far more.
    /// `pages` is sorted in place (a transaction's list of written pages: nothing reads its
    /// order afterwards); `extra` (a logged commit's meta) is written with them and taken out
    /// again; `buffers` is where the runs are gathered (the arena's, kept between transactions).
    func writePages(_ pages: inout [WriteTransaction.DirtyPage], plus extra: WriteTransaction.DirtyPage? = nil, inPlace: Bool = false,
                    buffers: inout [UnsafeRawBufferPointer]) throws {
        // Sorted in place: a commit's pages come mostly in ascending order (taken from one
        // stretch), which an insertion sort handles in one pass; large sets sort.
        if let extra { pages.append(extra) }
        defer { if let extra, let at = pages.firstIndex(where: { $0.page == extra.page }) { pages.remove(at: at) } }
        if pages.count > 64 {
            pages.sort { $0.page < $1.page }
        } else if pages.count > 1 {
            for i in 1..<pages.count {
                let item = pages[i]
                var j = i
                while j > 0 && pages[j - 1].page > item.page {
                    pages[j] = pages[j - 1]
                    j -= 1
                }
                if j != i { pages[j] = item }
            }
        }
        // One vector for every run (emptied without `removeAll`, which goes through an
        // unspecialised `replaceSubrange`).
        buffers.reserveCapacity(pages.count)
        var index = 0
        while index < pages.count {
            let start = pages[index].page
            var next = start
            while !buffers.isEmpty { buffers.removeLast() }
            while index < pages.count && pages[index].page == next {
                buffers.append(UnsafeRawBufferPointer(start: pages[index].image, count: pages[index].pages * pageSize))
                next += UInt64(pages[index].pages)
                index += 1
            }
            // Stored through the writable mapping where asked for and the file allows it
            // (pages written before: no system call), otherwise one gathering write.
            let offset = start * UInt64(pageSize)
            if !inPlace || !file.writeInPlace(buffers, at: offset) {
                if buffers.count == 1 { try file.write(buffers[0], at: offset) } else { try file.write(buffers, at: offset) }
            }
        }
        // The file now reaches at least the end of the last run, so publishing a commit that
        // grew it need not ask the file system (on Linux a stat also makes the next write's
        // timestamp fine-grained, and on ext4 without a journal the log's sync then writes the
        // inode-table block the database file shares with it).
        if let last = pages.last { noteWritten(through: (last.page + UInt64(last.pages)) * UInt64(pageSize)) }
    }

    // MARK: Waiting for commits

    /// Blocks the calling thread until a version newer than `version` is published (by this or
    /// another process) or `timeout` passes; returns the newest version. No polling: the
    /// committing process wakes waiters through the lock file.
    public func waitForVersion(newerThan version: UInt64, timeout: Duration? = nil) -> UInt64 {
        var remaining: Int64 = timeout.map { Int64($0.components.seconds) * 1_000_000_000 + $0.components.attoseconds / 1_000_000_000 } ?? -1
        while true {
            let closed = state.withLock { $0.closing }
            let current = lockFile.publishedTxid
            if current > version || closed { return current }
            if timeout != nil && remaining <= 0 { return current }
            let started = ContinuousClock.now
            _ = lockFile.waitForPublish(after: current, timeoutNanoseconds: remaining, shouldStop: { self.state.withLock { $0.closing } })
            if timeout != nil {
                let spent = ContinuousClock.now - started
                remaining -= Int64(spent.components.seconds) * 1_000_000_000 + spent.components.attoseconds / 1_000_000_000
            }
        }
    }
}

/// The directory part of a path ("." when there is none).
func directoryPart(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let prefix = String(path[..<slash])
    return prefix.isEmpty ? "/" : prefix
}

/// The last component of a path.
private func lastPathComponent(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[path.index(after: slash)...])
}

/// Opens a directory (or file) read-only, to fsync it. At file scope, where `open` is the C
/// function rather than `StorageEngine.open`.
func openForSync(_ path: String) -> Int32 { open(path, O_RDONLY | O_CLOEXEC) }
