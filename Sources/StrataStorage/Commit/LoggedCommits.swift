// Logged commits: which commits go through the commit log, and the checkpoint that ends a
// log generation. CommitLog.swift describes the protocol and why it is safe; the logged commit
// itself is in Commit.swift, its replay at open in CrashRecovery.swift.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a logged commit's record goes, and the generation it belongs to.
struct LogPosition {
    var salt: UInt64
    var offset: UInt64
    var baseTxid: UInt64
    var baseChecksum: UInt32
}

extension StorageEngine {
    /// Pages a transaction may free and still be logged. The generation's base keeps the pages
    /// it reaches from reuse until the next checkpoint, so a transaction that frees many (a
    /// tree dropped or rewritten) checkpoints instead, and its space is reusable at once.
    static let loggedFreeLimit: UInt64 = 64

    /// Where this commit's record would go if it is logged; nil when it must commit the
    /// ordinary way: no log, not durable, too large, freeing too much, the log full, or a base
    /// that is not durable in the file (an unsynced grouped commit) and not logged either.
    func logPosition(for transaction: WriteTransaction, recordLength: Int) -> LogPosition? {
        // A volume that refused the delete reserve's growth: unlogged, the pages commits free
        // are reusable at once instead of pinned until a checkpoint (SpaceReserve.swift).
        guard !spaceReserve.isShort else { return nil }
        guard log != nil, options.logsCommits, options.durability == .full, transaction.redo.isLoggable,
              transaction.freeSpace.pagesMadePending &- transaction.pendingAtStart <= Self.loggedFreeLimit else { return nil }
        let base = transaction.snapshot.meta
        if base.isLogged {
            guard base.logSalt != 0,
                  CommitLog.end(of: recordLength, at: base.logEnd) <= CommitLog.capacity else { return nil }
            // Only a generation's first record names its base's checksum.
            return LogPosition(salt: base.logSalt, offset: base.logEnd, baseTxid: base.syncedThrough, baseChecksum: 0)
        }
        // A new generation starts from a state durable in the file.
        guard base.flags & MetaPage.flagUnsynced == 0 else { return nil }
        let durable = state.withLock { !$0.group.hasUnsynced && (!base.isGrouped || $0.group.durable >= base.txid) }
        guard durable else { return nil }
        let checksum = self.base.uint32(at: Int(base.selfPage) * pageSize)
        return LogPosition(salt: Self.generationSalt(baseTxid: base.txid, baseChecksum: checksum), offset: 0,
                           baseTxid: base.txid, baseChecksum: checksum)
    }
}

extension StorageEngine {
    /// Makes every commit durable in the database file itself and ends the commit log's
    /// generation, without making a new version: the file is synced, then the newest version's
    /// meta is written again as an anchor and synced. Nothing to do when the newest commit is
    /// not logged. The engine also checkpoints when a commit is too large to log or the log is
    /// full, and at the last close in the last process; call this before copying the database
    /// file alone (without its `-log`).
    public func checkpoint() throws {
        guard !options.readOnly, log != nil else { return }
        let transaction = try beginWrite()
        defer { transaction.rollback() }
        let logged = transaction.snapshot.meta
        guard logged.isLogged else { return }
        try file.synchronize()
        // The same version, anchored: the logged meta's page joins the chain's records, which
        // the next anchor frees (as it frees the records), once no snapshot reads the version.
        var anchor = logged
        anchor.flags &= ~(MetaPage.flagLogged | MetaPage.flagUnsynced)
        anchor.selfPage = PageNumber(logged.anchorSlot == 1 ? 2 : 1)
        anchor.anchorSlot = UInt32(anchor.selfPage)
        anchor.chain = logged.chain + [MetaPage.ChainRecord(page: logged.selfPage, txid: logged.txid)]
        anchor.syncedThrough = logged.txid
        anchor.logSalt = 0
        anchor.logEnd = 0
        anchor.token = 0
        anchor.nextPage = 0
        anchor.nextToken = 0
        anchor.nextPages = 0
        anchor.written = []
        let image = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 4096)
        defer { image.deallocate() }
        anchor.encode(into: image, pageSize: pageSize)
        let location = anchor.selfPage * UInt64(pageSize)
        // A torn anchor leaves the other slot's chain and the log, which still recover this
        // version.
        try writeMeta(image, at: location)
        try file.synchronize()
        state.withLock { $0.latestMeta = anchor }
        lockFile.publish(anchor.txid, metaPage: anchor.selfPage)
    }
}
