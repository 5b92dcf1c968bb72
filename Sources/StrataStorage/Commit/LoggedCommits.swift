// Logged commits and their recovery: the engine's side of the commit log (CommitLog.swift
// describes the protocol and why it is safe).

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

/// Records of the log to replay at open, after the state the generation starts from.
struct ReplayPlan {
    var salt: UInt64
    var baseTxid: UInt64
    var baseChecksum: UInt32
    var records: [(txid: UInt64, body: [UInt8], offset: UInt64)]
}

extension StorageEngine {
    /// Replays the log's records as write transactions, each committed like the logged commit
    /// it repeats (same txid, same place in the generation) without writing the log again.
    /// Runs while opening, before any other process may open the file.
    func replayLog(_ plan: ReplayPlan) throws {
        for record in plan.records {
            guard let operations = record.body.withUnsafeBytes({ RedoOperation.decode($0) }) else {
                throw StorageError.corrupted(page: nil, reason: "commit \(record.txid) in the commit log does not decode")
            }
            let transaction = try beginWrite()
            do {
                guard transaction.committingVersion == record.txid else {
                    throw StorageError.corrupted(page: nil, reason: "the commit log's commit \(record.txid) does not follow version \(transaction.version)")
                }
                try transaction.replay(operations)
                let position = LogPosition(salt: plan.salt, offset: record.offset, baseTxid: plan.baseTxid, baseChecksum: plan.baseChecksum)
                try transaction.commitReplayed(at: position, length: CommitLog.headerSize + record.body.count)
            } catch {
                transaction.rollback()
                throw error
            }
        }
    }

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
        let checksum = self.base.loadUnaligned(fromByteOffset: Int(base.selfPage) * pageSize, as: UInt32.self)
        return LogPosition(salt: Self.generationSalt(baseTxid: base.txid, baseChecksum: checksum), offset: 0,
                           baseTxid: base.txid, baseChecksum: checksum)
    }
}

extension WriteTransaction {
    /// Commits a transaction replayed from the commit log (recovery).
    func commitReplayed(at position: LogPosition, length: Int) throws {
        guard isOpen else { throw StorageError.transactionClosed }
        defer { finish() }
        guard states.contains(where: { $0.changed || $0.dropped }) else {
            throw StorageError.corrupted(page: nil, reason: "commit \(txid) in the commit log changes nothing")
        }
        try engine.commitLogged(self, at: position, image: nil, length: length)
    }
}

extension StorageEngine {
    /// A logged commit: unless replaying, the record `image` goes to the log first and the disk
    /// starts writing it; meanwhile the commit lays out its pages and writes them and its meta
    /// to the database file (no sync); then the log is synced, and the commit published.
    func commitLogged(_ transaction: WriteTransaction, at position: LogPosition, image: UnsafeRawBufferPointer?, length: Int) throws {
        // A replay (no image) runs no failpoints: they are for the commits being tested.
        let failpoint = image == nil ? nil : options.failpoint
        let base = transaction.snapshot.meta
        // A writer that died before publishing may have left a meta recovery would adopt: an
        // anchor in the free slot (see `discardUnpublishedMeta`), or, from a durable base, the
        // record it announced (synced, and its pages free for us to overwrite).
        try discardUnpublishedMeta(slot: base.anchorSlot == 1 ? 2 : 1, txid: transaction.txid, durable: true)
        if !base.isLogged { try discardUnpublishedRecord(announcedBy: base) }
        guard let image, let log else {
            // A replay: the commit it repeats was durable.
            try publish(try writeLogged(transaction, at: position, length: length, failpoint: failpoint, replaying: true),
                        of: transaction, durable: true, grouped: false)
            return
        }
        // The record first: the disk writes it while this thread does the rest of the commit's
        // work. Nothing depends on the database file's pages reaching it first: replay needs
        // only the generation's base and the records, and nobody reads the pages before the
        // commit is published.
        let meta: MetaPage
        do {
            try log.write(image, at: position.offset, failpoint: failpoint)
            log.file.startWriting(at: position.offset, length: UInt64(image.count))
            meta = try writeLogged(transaction, at: position, length: length, failpoint: failpoint)
            // Work the caller would do after the sync, done while the disk writes the record.
            if transaction.readsAfterCommit { transaction.readAfterCommit = try? openRead(committing: meta) }
            try log.synchronize(failpoint: failpoint)
        } catch {
            // The record may have reached the log, even the disk: a commit reported as failed
            // must never be replayed.
            do {
                try log.erase(at: position.offset)
            } catch {
                state.withLock { $0.poisoned = .ioFailure(operation: "erasing a failed commit from the commit log; reopen the database", code: EIO) }
            }
            throw error
        }
        // Durable (in the log), whatever the engine's durability option says.
        try publish(meta, of: transaction, durable: true, grouped: false)
    }

    /// Lays out a logged commit and writes its pages and meta to the database file, without a
    /// sync; returns the meta to publish.
    private func writeLogged(_ transaction: WriteTransaction, at position: LogPosition, length: Int,
                             failpoint: ((CommitStep) throws -> Void)?, replaying: Bool = false) throws -> MetaPage {
        let base = transaction.snapshot.meta
        var meta = try transaction.layOut(chain: nil, logged: true)
        try makeRoom(for: meta, of: transaction, replaying: replaying)
        meta.flags |= MetaPage.flagUnsynced | MetaPage.flagLogged
        meta.syncedThrough = position.baseTxid
        meta.logSalt = position.salt
        meta.logEnd = CommitLog.end(of: length, at: position.offset)
        try failpoint?(.beforeDataWrite)
        if meta.pageCount > base.pageCount { try failpoint?(.beforeGrowth) }
        // The meta goes with the pages, usually as the first page of one gathering write: it
        // sits on a page of the commit's own stretch, which nobody reads unless it is
        // published, and which recovery never looks at, so neither a torn write nor a failed
        // commit can leave it where it matters.
        let metaImage = transaction.arena.allocate(pageSize, alignment: 4096)
        meta.encode(into: metaImage, pageSize: pageSize)
        try failpoint?(.beforeMetaWrite)
        // In place where the file allows it: these pages are synced by the generation's
        // checkpoint, not now (see `writePages`).
        try writePages(&transaction.dirty, plus: WriteTransaction.DirtyPage(page: meta.selfPage, pages: 1, image: metaImage, checksum: 0), inPlace: true,
                       buffers: &transaction.arena.pageVectors)
        try failpoint?(.afterDataWrite)
        try failpoint?(.afterMetaWrite)
        return meta
    }

    /// Zeros (durably) a record that continues `base`'s chain but was never published. Costs
    /// one read when there is none.
    private func discardUnpublishedRecord(announcedBy base: MetaPage) throws {
        guard base.nextPage != 0 else { return }
        let location = base.nextPage * UInt64(pageSize)
        let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 4096)
        defer { page.deallocate() }
        // Through the file: the announced stretch may lie past the mapping, or past the end.
        try file.read(into: UnsafeMutableRawBufferPointer(start: page, count: pageSize), at: location)
        guard let stale = MetaPage.decode(UnsafeRawPointer(page), pageSize: pageSize, at: base.nextPage),
              stale.token == base.nextToken, stale.txid > base.txid else { return }
        page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        try file.write([UnsafeRawBufferPointer(start: page, count: pageSize)], at: location)
        try file.synchronize()
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
