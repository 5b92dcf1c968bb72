// Opening an engine: what is at the path, creating a new database there, the commit log
// beside it, and the first opener's recovery, all under the lock file's flock (LockFile.swift).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `StorageEngine.openFiles` found and opened, for the engine's initialiser.
struct OpenedFiles {
    var file: any StorageFile
    var log: CommitLog?
    var lockFile: LockFile
    var pageSize: Int
    var base: UnsafeRawPointer
    var size: UInt64
    var meta: MetaPage
    /// The log's records to replay (the first opener, after a crash).
    var replay: ReplayPlan?
    /// What the opening gave up of a damaged log (`StorageOptions.commitLogRecovery`).
    var gaveUp: CommitLogRecoveryReport?
}

extension StorageEngine {
    /// Opens a database stored in `file` (for example a simulated disk in tests), with its
    /// lock file at `lockPath` and its commit log in `log` (without one, every durable commit
    /// syncs the database file). Not shared through the registry.
    public static func open(file: any StorageFile, log: (any StorageFile)? = nil, lockPath: String,
                            options: StorageOptions = StorageOptions()) throws -> StorageEngine {
        try StorageEngine(path: lockPath, lockPath: lockPath, options: options, file: file, log: log, registryKey: nil)
    }

    /// The path of the commit log of the database at `path`.
    public static func logPath(for path: String) -> String { path + "-log" }

    /// Opens the files of the database at `path` (or the given `file` and log) under the lock
    /// file's flock; the first opener recovers the file (`recover`) and assesses the log.
    static func openFiles(path: String, lockPath: String, options: StorageOptions, file given: (any StorageFile)?,
                          log givenLog: (any StorageFile)?) throws -> OpenedFiles {
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
                        // log grows as commits need it, as a log never preallocated does.
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
            return OpenedFiles(file: file, log: log, lockFile: lockFile, pageSize: pageSize, base: base, size: size, meta: meta,
                               replay: replay, gaveUp: gaveUp)
        } catch {
            opened?.close()
            log?.file.close()
            // Only the lock file: another process may have used a database or log this open
            // created once the flock was shared.
            lockFile.removeIfCreated()
            lockFile.close()
            throw error
        }
    }

    /// Opens the commit log beside a database, creating it when `create` (an engine that logs
    /// commits) unless read-only; otherwise only if it exists (it may hold commits to replay).
    /// Also says whether this call created the file.
    static func openLog(at path: String, readOnly: Bool, create: Bool) throws -> (log: CommitLog, created: Bool)? {
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
    func abandon() {
        state.withLock { $0.closed = true }
        writeLock.shutdown()
        lockFile.removeIfCreated()
        lockFile.close()
        file.close()
        log?.file.close()
        released.leave()
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
}
