// The commit: how a write transaction becomes the newest version, durably. The engine owns it;
// `commit(_:grouped:)` is the whole sequence, and each step is a helper below it.
//
// The steps, in the order of bbolt's `Tx.Commit`:
//  1. rebalance and spill: the changed nodes become page images (WriteTransaction+Layout.swift);
//  2. free list: the free space after this commit is encoded, into the meta or its own pages;
//  3. grow: the file makes room for the pages (the delete reserve's rule, SpaceReserve.swift);
//  4. write the pages;
//  5. write the meta (a commit written to the file) or the log record (a logged commit);
//  6. sync;
//  7. publish: the engine's state moves to the new meta, every process sees the version;
//  8. release: the transaction ends and the write lock passes on.
//
// Two ways through them. Small durable commits are *logged*: the record goes to the commit log
// first, the pages and meta to the database file without a sync, and only the log is synced
// (CommitLog.swift explains why that is safe; LoggedCommits.swift decides which commits are
// logged, CrashRecovery.swift replays them). Other commits are written to the file: one sync when the meta can
// list every page it wrote (a record, MetaPage.swift), else a sync of the pages, then the meta
// and its sync. Grouped commits (GroupedCommits.swift) skip the last sync, which a later
// `synchronize(through:)` shares among several commits.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension StorageEngine {
    /// Commits `transaction` (see the top of this file), and ends it whatever happens. A
    /// transaction that changed nothing makes no version. On failure nothing is visible and
    /// the file stays at the previous version.
    func commit(_ transaction: WriteTransaction, grouped requested: Bool) throws {
        var madeVersion = false
        // 8. Release, in every case.
        defer { transaction.finish(committed: madeVersion) }
        guard transaction.hasChanges else { return }
        if let log, let record = logRecord(for: transaction, in: log) {
            try commitLogged(transaction, record: record, to: log)
        } else {
            try commitToFile(transaction, grouped: requested)
        }
        madeVersion = true
    }

    // MARK: Commits written to the file

    /// Steps 1–7 of a commit written to the database file.
    private func commitToFile(_ transaction: WriteTransaction, grouped requested: Bool) throws {
        let failpoint = options.failpoint
        let base = transaction.snapshot.meta
        let durable = options.durability == .full
        // 1–2. Rebalance, spill, free list; the meta describing the result.
        var meta = try transaction.layOut(chain: recordBase(base, durable: durable, grouped: requested))
        // 3. Grow.
        try makeRoom(for: meta, of: transaction)
        let oneSync = listWrittenPages(in: &meta, of: transaction, base: base, durable: durable)
        // Only a commit that lists its pages can skip its sync (recovery checks them).
        let grouped = requested && durable && (oneSync || meta.isRecord)
        if grouped { meta.flags |= MetaPage.flagGrouped }
        if durable { try settleGroupsBefore(&meta) }
        // 4. Write the pages.
        try failpoint?(.beforeDataWrite)
        // The slot our chain does not hang from (where an anchor of ours would go).
        try discardUnpublishedMeta(slot: base.anchorSlot == 1 ? 2 : 1, txid: meta.txid, durable: durable)
        if meta.pageCount > base.pageCount { try failpoint?(.beforeGrowth) }
        try writePages(&transaction.dirty, buffers: &transaction.arena.pageVectors)
        try failpoint?(.afterDataWrite)
        // A meta that does not list the pages must not reach the disk before them.
        if durable && !oneSync && !meta.isRecord {
            try failpoint?(.beforeDataSync)
            try file.synchronize()
            try failpoint?(.afterDataSync)
        }
        // 5–6. Write the meta; sync (unless grouped).
        try failpoint?(.beforeMetaWrite)
        try writeMetaPage(meta, synchronizing: durable && !grouped, durable: durable)
        // 7. Publish.
        try publish(meta, of: transaction, durable: durable, grouped: grouped)
    }

    /// The base meta when this commit may be a record chained to it: durability allows it,
    /// the base announced a stretch, and its chain has room. Grouped commits chain records up
    /// to the meta's capacity: an anchor ends the group.
    private func recordBase(_ base: MetaPage, durable: Bool, grouped: Bool) -> MetaPage? {
        let synced = base.flags & MetaPage.flagUnsynced == 0
        let chainLimit = grouped ? MetaPage.groupChainLimit : MetaPage.chainLimit
        return durable && synced && base.nextPage != 0 && base.chain.count < chainLimit ? base : nil
    }

    /// Lists the pages the commit writes in its meta when it can be made durable by one sync
    /// (durable, on a synced base, and few enough pages), and always in a record (recovery
    /// checks a record's pages). Returns whether the commit takes one sync.
    private func listWrittenPages(in meta: inout MetaPage, of transaction: WriteTransaction, base: MetaPage, durable: Bool) -> Bool {
        let synced = base.flags & MetaPage.flagUnsynced == 0
        let oneSync = durable && synced && transaction.dirty.count <= MetaPage.listCapacity(pageSize: pageSize)
        if oneSync || meta.isRecord {
            meta.written = transaction.dirty.map { MetaPage.WrittenRun(page: $0.page, checksum: $0.checksum, pages: UInt32($0.pages)) }
        }
        return oneSync
    }

    /// A durable commit's relation to grouped commits before it: an anchor overwrites the other
    /// slot, which may hold the way back to the last synced commit, so the commits before it
    /// are made durable first; and the meta records the newest commit synced before it.
    private func settleGroupsBefore(_ meta: inout MetaPage) throws {
        if !meta.isRecord { try synchronizeBeforeAnchor() }
        meta.syncedThrough = state.withLock { $0.group.durable }
    }

    /// Writes the meta to its slot or record page (`writeMeta`), then syncs when
    /// `synchronizing`. If either fails, the page's previous bytes are put back, so that nobody
    /// (another process opening the file, or a crash before the cache is written back) adopts
    /// a commit reported as failed.
    private func writeMetaPage(_ meta: MetaPage, synchronizing: Bool, durable: Bool) throws {
        let failpoint = options.failpoint
        let location = meta.selfPage * UInt64(pageSize)
        // What to put back: the slot's previous anchor, or (for a record, written to a free
        // page) zeros.
        let previous = meta.isRecord
            ? [UInt8](repeating: 0, count: pageSize)
            : [UInt8](UnsafeRawBufferPointer(start: self.base + Int(meta.selfPage) * pageSize, count: pageSize))
        let image = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 4096)
        defer { image.deallocate() }
        meta.encode(into: image, pageSize: pageSize)
        do {
            try writeMeta(image, at: location)
            try failpoint?(.afterMetaWrite)
            if synchronizing {
                try failpoint?(.beforeFinalSync)
                try file.synchronize()
                try failpoint?(.afterFinalSync)
            }
        } catch {
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
    }

    // MARK: Logged commits

    /// A logged commit's record, encoded, and where it goes.
    struct LoggedRecord {
        var position: LogPosition
        var image: UnsafeRawBufferPointer
        var length: Int
    }

    /// The record `transaction` is logged as, encoded into its arena; nil when it must be
    /// written to the file (`logPosition`, or no room in the log).
    private func logRecord(for transaction: WriteTransaction, in log: CommitLog) -> LoggedRecord? {
        // Small durable commits go through the commit log (a grouped one too: its record is
        // synced at once, which costs what the group's sync would).
        let length = CommitLog.headerSize + transaction.redo.bytes.count
        let padded = CommitLog.paddedLength(length)
        guard let position = logPosition(for: transaction, recordLength: length),
              log.makeRoom(through: position.offset + UInt64(padded)) else { return nil }
        let header = CommitLog.Header(salt: position.salt, txid: transaction.txid, baseTxid: position.baseTxid,
                                      baseChecksum: position.baseChecksum, length: length)
        // Into the arena: no array (and no runtime metadata lookup for one) per commit.
        let image = transaction.arena.allocate(padded, alignment: 4096)
        CommitLog.encode(header, body: transaction.redo.bytes, logLength: log.lengthAfterWriting(to: position.offset + UInt64(padded)), into: image)
        return LoggedRecord(position: position, image: UnsafeRawBufferPointer(start: image, count: padded), length: length)
    }

    /// Steps 1–7 of a logged commit: the record goes to the log first and the disk starts
    /// writing it; meanwhile the commit lays out its pages and writes them and its meta to the
    /// database file (no sync); then the log is synced, and the commit published.
    private func commitLogged(_ transaction: WriteTransaction, record: LoggedRecord, to log: CommitLog) throws {
        let failpoint = options.failpoint
        try discardUnpublishedMetas(before: transaction)
        // The record first: the disk writes it while this thread does the rest of the commit's
        // work. Nothing depends on the database file's pages reaching it first: replay needs
        // only the generation's base and the records, and nobody reads the pages before the
        // commit is published.
        let meta: MetaPage
        do {
            try log.write(record.image, at: record.position.offset, failpoint: failpoint)
            log.file.startWriting(at: record.position.offset, length: UInt64(record.image.count))
            meta = try writeLogged(transaction, at: record.position, length: record.length, failpoint: failpoint)
            // Work the caller would do after the sync, done while the disk writes the record.
            if transaction.readsAfterCommit { transaction.readAfterCommit = try? openRead(committing: meta) }
            try log.synchronize(failpoint: failpoint)
        } catch {
            // The record may have reached the log, even the disk: a commit reported as failed
            // must never be replayed.
            do {
                try log.erase(at: record.position.offset)
            } catch {
                state.withLock { $0.poisoned = .ioFailure(operation: "erasing a failed commit from the commit log; reopen the database", code: EIO) }
            }
            throw error
        }
        // Durable (in the log), whatever the engine's durability option says.
        try publish(meta, of: transaction, durable: true, grouped: false)
    }

    /// A commit replayed from the commit log at open (`replayLog`): written like the logged
    /// commit it repeats, without writing the log again (the commit it repeats was durable).
    /// A replay runs no failpoints: they are for the commits being tested.
    func commitReplayed(_ transaction: WriteTransaction, at position: LogPosition, length: Int) throws {
        guard transaction.isOpen else { throw StorageError.transactionClosed }
        // 8. Release, in every case. Nothing uses a replayed commit's version afterwards.
        defer { transaction.finish(committed: false) }
        guard transaction.hasChanges else {
            throw StorageError.corrupted(page: nil, reason: "commit \(transaction.txid) in the commit log changes nothing")
        }
        try discardUnpublishedMetas(before: transaction)
        try publish(try writeLogged(transaction, at: position, length: length, failpoint: nil, replaying: true),
                    of: transaction, durable: true, grouped: false)
    }

    /// A writer that died before publishing may have left a meta recovery would adopt: an
    /// anchor in the free slot (see `discardUnpublishedMeta`), or, from a durable base, the
    /// record it announced (synced, and its pages free for us to overwrite).
    private func discardUnpublishedMetas(before transaction: WriteTransaction) throws {
        let base = transaction.snapshot.meta
        try discardUnpublishedMeta(slot: base.anchorSlot == 1 ? 2 : 1, txid: transaction.txid, durable: true)
        if !base.isLogged { try discardUnpublishedRecord(announcedBy: base) }
    }

    /// Steps 1–5 of a logged commit on the database file: lays it out and writes its pages and
    /// meta, without a sync; returns the meta to publish.
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

    // MARK: Steps shared by both ways

    /// 7. Publish: the end of every commit, once its meta is written (and as durable as it will be): the
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
    /// written. (With the old bytes kept instead, a meta would validate whenever the unwritten
    /// checksum bytes happened to equal the old ones: 1 in 256 for a write cut one byte short.)
    func writeMeta(_ image: UnsafeRawPointer, at location: UInt64) throws {
        var complement = ~image.uint32(at: 0)
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
    /// commits always write: on ext4 a stored page dirties its whole large folio, and the sync
    /// that follows at once would write back far more.
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
