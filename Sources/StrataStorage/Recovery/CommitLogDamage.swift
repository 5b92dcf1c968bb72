// Telling a damaged commit log from one a crash cut short, at open.
//
// A crash can leave only a torn tail: the generation's last record half written (CommitLog.swift,
// "Damage"). Replay may end there silently; it ends at a version some durable commit followed
// only when the log is damaged, and that is an error (StorageError.commitLogDamaged) unless the
// opener asked to give those commits up (StorageOptions.commitLogRecovery). Open looks for
// three kinds of evidence that a durable commit followed the last version replay reaches:
//
// - A valid record of the generation past the point where replay stops: the same salt and
//   base, a later txid. Records of older generations (another salt and an older base) lie past
//   a generation's end legitimately; a generation's own records never do. When the record
//   that should start the generation is itself unreadable, its later records still name the
//   recovered state as their base, and carry the salt derived from it (`generationSalt`).
//   (Generations written before the salt was derived are recognised only by their first
//   record.)
// - A log shorter than one of the generation's records says it was (their length claims):
//   the engine never shortens a log.
// - The lock file: the version the last process to have the database open published, and
//   its meta, still in the database file after a process was killed. A logged version is
//   published only once its record is synced, so a published logged version of the
//   generation that replay cannot reach was durable and is lost. (After a power cut the
//   lock file or the meta may be gone: then this evidence is simply missing.)
//
// Searching past the generation's end reads the rest of the log (at most its capacity) only
// when there are commits to replay, after a crash; an open of a database that was closed
// cleanly still costs one read of the log.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What opening a database does when its commit log is damaged (`StorageError.commitLogDamaged`)
/// or belongs to another copy of the database (`StorageError.commitLogMismatch`).
public enum CommitLogRecovery: Sendable, Hashable {
    /// Refuse to open: the error says what was found and how many commits would be lost. The
    /// default.
    case refuse
    /// Open at the last version the log holds intact, giving up the commits the damage cut off:
    /// replay stops there, the result is made durable in the database file, and the log is
    /// erased so that the damage is not found again. `StorageEngine.commitLogRecoveryReport`
    /// says what was given up. Needs write access; when the log is intact it changes nothing.
    case openAtLastGoodVersion
}

/// What opening with `CommitLogRecovery.openAtLastGoodVersion` gave up.
public struct CommitLogRecoveryReport: Sendable, Equatable, CustomStringConvertible {
    /// The commit log's path.
    public let logPath: String
    /// The version the database opened at: the last one the log held intact.
    public let version: UInt64
    /// How many durable commits after `version` the log showed and were given up (at least;
    /// 0 when the damage hid how many).
    public let lostCommits: UInt64
    /// What was wrong with the log.
    public let reason: String

    public var description: String {
        "the commit log \(logPath) was damaged (\(reason)); opened at version \(version), giving up "
            + (lostCommits > 0 ? "\(lostCommits) later commit\(lostCommits == 1 ? "" : "s")" : "an unknown number of later commits (none that the log showed)")
    }
}

/// What open found in the log: the records to replay, and the damage it accepted (only with
/// `CommitLogRecovery.openAtLastGoodVersion`).
struct LogAssessment {
    var plan: ReplayPlan?
    var gaveUp: CommitLogRecoveryReport?
}

extension StorageEngine {
    /// The log's assessment at open (`assessLog`) with what follows from it: a read-only
    /// opener cannot replay or give anything up, and a log whose damage is accepted with
    /// nothing to replay is erased at once (with commits to replay, `endDamagedGeneration`
    /// erases it after them).
    /// `expectedLength` is the length the database's header says its log was preallocated to
    /// (0: none to check).
    static func assessLogAtOpen(_ log: CommitLog?, logPath: String, recovered: MetaPage, file: any StorageFile, path: String,
                                lockFile: LockFile, options: StorageOptions, expectedLength: UInt64) throws -> (ReplayPlan?, CommitLogRecoveryReport?) {
        let assessment = try assessLog(log, logPath: logPath, recovered: recovered, file: file, path: path,
                                       published: lockFile.inheritedPublication, recovery: options.commitLogRecovery,
                                       expectedLength: expectedLength)
        if options.readOnly {
            if let gaveUp = assessment.gaveUp { throw gaveUp.error }
            if assessment.plan != nil { throw StorageError.recoveryNeedsWriteAccess(path: logPath) }
        }
        if assessment.gaveUp != nil, assessment.plan == nil, let log {
            try log.eraseAll()
            try keepLogLength(log, file: file)
        }
        return (assessment.plan, assessment.gaveUp)
    }

    /// After replaying a damaged log up to its last good version: makes that version durable in
    /// the database file (a checkpoint ends the generation) and erases the log, so that the
    /// records past the damage are never found again.
    func endDamagedGeneration() throws {
        try checkpoint()
        if let log {
            try log.eraseAll()
            try Self.keepLogLength(log, file: file)
        }
    }

    /// Makes the log as long as the database's header says it was preallocated to (a log made
    /// again, or one that was cut and has been given up), or, if the zeros cannot be written,
    /// makes the header say nothing, so that the next open does not find it cut. Only for the
    /// first opener, while no one else has the database open.
    static func keepLogLength(_ log: CommitLog, file: any StorageFile) throws {
        let expected = try FileHeader.logLength(of: file)
        guard expected > 0, try log.file.size() < expected else { return }
        if (try? log.preallocate()) == true, try log.file.size() >= expected { return }
        try FileHeader.recordLogLength(0, in: file)
    }

    /// The salt of a generation that starts from the durable state with txid `baseTxid` whose
    /// meta page's checksum is `baseChecksum`: derived from them, so that the generation's
    /// records can be recognised without its first record. Never 0.
    static func generationSalt(baseTxid: UInt64, baseChecksum: UInt32) -> UInt64 {
        var z = (baseTxid ^ (UInt64(baseChecksum) << 32 | UInt64(baseChecksum))) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476C_E5B9_E1D5
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return z == 0 ? 1 : z
    }

    /// What the log (nil: there is none) means for a file that recovered to `recovered`: the
    /// records to replay, if any; an error when it is damaged or belongs to another history
    /// of the file, unless `recovery` accepts that (then the assessment says what is given up).
    /// `published` is what the lock file said was published before this open (the version and
    /// the page of its meta).
    static func assessLog(_ log: CommitLog?, logPath: String, recovered: MetaPage, file: any StorageFile, path: String,
                          published: (txid: UInt64, metaPage: UInt64)?, recovery: CommitLogRecovery,
                          expectedLength: UInt64 = 0) throws -> LogAssessment {
        var damage = DamageFinding(logPath: logPath, lastGood: recovered.txid)
        var checksum: UInt32?
        func baseChecksum() throws -> UInt32 {
            if let checksum { return checksum }
            let stored = try storedMetaChecksum(of: recovered, file: file, path: path)
            checksum = stored
            return stored
        }
        var plan: ReplayPlan?
        var generationSalt: UInt64?
        // Whether the log starts with an intact record of a generation a checkpoint ended: every
        // generation starts at offset 0, so none started after the recovered state, and nothing
        // the log could hold is missing from the file however short it is.
        var onlyHistory = false
        if let log {
            let head = try log.records(startingIn: 0..<(4 * CommitLog.blockSize))
            let first = head.records.first { $0.offset == 0 }
            let startsGeneration = first.map { $0.header.txid == $0.header.baseTxid + 1 } ?? false
            onlyHistory = startsGeneration && (first.map { $0.header.baseTxid < recovered.txid } ?? false)
            if let first, startsGeneration, first.header.baseTxid >= recovered.txid {
                // The generation at the start of the log continues the recovered state, or a
                // state the file does not have.
                if first.header.baseTxid > recovered.txid {
                    try damage.mismatch(logBase: first.header.baseTxid, recovered: recovered.txid, recovery: recovery)
                } else if let generation = try log.readGeneration() {
                    plan = try replayPlan(generation, log: log, logPath: logPath, recovered: recovered,
                                          checksum: try baseChecksum(), damage: &damage, recovery: recovery)
                    generationSalt = generation.first.salt
                }
            } else if !startsGeneration {
                // No generation starts the log (a base older than the recovered state is a
                // generation a checkpoint ended). Records naming the recovered state as their
                // base mean one did, and its first record is damaged: they are nearby when
                // only that record is, anywhere if the first block holds something else.
                // (Once some are found, all of them are counted.)
                func candidates(in records: [CommitLog.Record]) throws -> [CommitLog.Record] {
                    let named = records.filter { $0.header.baseTxid == recovered.txid && $0.header.txid > recovered.txid }
                    guard !named.isEmpty else { return [] }
                    let salt = Self.generationSalt(baseTxid: recovered.txid, baseChecksum: try baseChecksum())
                    return named.filter { $0.header.salt == salt }
                }
                var found = try candidates(in: head.records)
                if !head.firstBlockZero || !found.isEmpty {
                    found = try candidates(in: try log.records(startingIn: 0..<(try log.file.size())).records)
                }
                if !found.isEmpty {
                    if let newest = found.map(\.header.txid).max() {
                        damage.found(through: newest, "the record of version \(recovered.txid + 1) is damaged or out of place, and \(found.count) valid later record\(found.count == 1 ? "" : "s") of its generation follow")
                    }
                }
            }
        }
        if let log, expectedLength > 0, !onlyHistory {
            let size = try log.file.size()
            if size < expectedLength {
                damage.found(through: damage.lastGood, "the log is \(size) bytes long, but it was preallocated to \(expectedLength) bytes when the database was created, and a log never shrinks: it was cut short")
            }
        }
        if let newest = try publishedEvidence(published, lastGood: damage.lastGood, recovered: recovered, salt: generationSalt, file: file, path: path) {
            damage.found(through: newest, log == nil ? "the log is missing, and version \(newest) was published from it" : "version \(newest) was published from the log, which no longer holds it")
        }
        guard let report = damage.report else { return LogAssessment(plan: plan, gaveUp: nil) }
        guard recovery == .openAtLastGoodVersion else { throw report.error }
        return LogAssessment(plan: plan, gaveUp: report)
    }

    /// The generation's records to replay onto `recovered`, its base, after the checks that
    /// they are all of it: none of its records lies past where reading stopped, and the log is
    /// as long as its records say it was.
    private static func replayPlan(_ generation: CommitLog.Generation, log: CommitLog, logPath: String, recovered: MetaPage,
                                   checksum: UInt32, damage: inout DamageFinding, recovery: CommitLogRecovery) throws -> ReplayPlan? {
        let first = generation.first
        guard first.baseChecksum == checksum else {
            try damage.mismatch(logBase: first.baseTxid, recovered: recovered.txid, recovery: recovery)
            return nil
        }
        let last = generation.records.last?.txid ?? recovered.txid
        damage.lastGood = last
        let size = try log.file.size()
        let later = try log.records(startingIn: generation.end..<size).records.filter {
            $0.header.salt == first.salt && $0.header.baseTxid == first.baseTxid && $0.header.txid > last
        }
        if let newest = later.map(\.header.txid).max() {
            damage.found(through: newest, "the record after version \(last) is damaged or out of place, and \(later.count) valid later record\(later.count == 1 ? "" : "s") of its generation follow")
        }
        let claimed = later.reduce(generation.claimedLength) { max($0, $1.claimedLength ?? 0) }
        if size < claimed {
            damage.found(through: last, "the log is \(size) bytes long, but its records were written to a log of \(claimed) bytes: it was cut short")
        }
        return ReplayPlan(salt: first.salt, baseTxid: first.baseTxid, baseChecksum: checksum, records: generation.records)
    }

    /// The version the lock file said was published, when its meta is still in the file and
    /// shows it was a logged commit of the generation from `recovered` (of the one with `salt`,
    /// when known) newer than `lastGood`: a durable commit replay cannot reach.
    private static func publishedEvidence(_ published: (txid: UInt64, metaPage: UInt64)?, lastGood: UInt64, recovered: MetaPage,
                                          salt: UInt64?, file: any StorageFile, path: String) throws -> UInt64? {
        guard let published, published.txid > lastGood, published.metaPage >= FileHeader.firstDataPage else { return nil }
        let size = try file.size()
        let pageSize = try Self.pageSize(of: file, size: size, path: path)
        guard (published.metaPage + 1) * UInt64(pageSize) <= size else { return nil }
        let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { page.deallocate() }
        try file.read(into: UnsafeMutableRawBufferPointer(start: page, count: pageSize), at: published.metaPage * UInt64(pageSize))
        guard let meta = MetaPage.decode(UnsafeRawPointer(page), pageSize: pageSize, at: published.metaPage),
              meta.txid == published.txid, meta.isLogged, meta.syncedThrough == recovered.txid, meta.logSalt != 0,
              salt.map({ meta.logSalt == $0 }) ?? true else { return nil }
        return meta.txid
    }

    /// The file's page size, from its header.
    static func pageSize(of file: any StorageFile, size: UInt64, path: String) throws -> Int {
        var header = [UInt8](repeating: 0, count: FileHeader.size)
        try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        return try header.withUnsafeBytes { try FileHeader.decode($0.baseAddress!, fileSize: size, path: path) }
    }

    /// The checksum stored in the meta page `meta` was decoded from.
    static func storedMetaChecksum(of meta: MetaPage, file: any StorageFile, path: String) throws -> UInt32 {
        let pageSize = try pageSize(of: file, size: try file.size(), path: path)
        var stored: UInt32 = 0
        try withUnsafeMutableBytes(of: &stored) { try file.read(into: $0, at: meta.selfPage * UInt64(pageSize)) }
        return stored
    }
}

/// The damage found so far while assessing a log.
private struct DamageFinding {
    let logPath: String
    /// The last version replay reaches.
    var lastGood: UInt64
    /// The newest version the evidence shows was durable; nil while there is none.
    var newest: UInt64?
    var reasons: [String] = []

    mutating func found(through newest: UInt64, _ reason: String) {
        self.newest = max(self.newest ?? lastGood, newest)
        reasons.append(reason)
    }

    /// A log that continues a version the file does not have: refused as before, or given up.
    mutating func mismatch(logBase: UInt64, recovered: UInt64, recovery: CommitLogRecovery) throws {
        guard recovery == .openAtLastGoodVersion else {
            throw StorageError.commitLogMismatch(path: logPath, logBase: logBase, recovered: recovered)
        }
        found(through: lastGood, "it continues version \(logBase), which is not the database file's version \(recovered): it belongs to another copy of the database")
    }

    var report: CommitLogRecoveryReport? {
        guard let newest else { return nil }
        return CommitLogRecoveryReport(logPath: logPath, version: lastGood, lostCommits: newest - lastGood, reason: reasons.joined(separator: "; "))
    }
}

extension CommitLogRecoveryReport {
    /// The error that refuses the open this report describes.
    var error: StorageError {
        .commitLogDamaged(path: logPath, lastGoodVersion: version, lostCommits: lostCommits, reason: reason)
    }
}
