// Crash recovery in the database file: which commit the file opens at after a crash.
//
// The first opener (under the lock file's exclusive flock) reads both meta slots and the chains
// of records hanging from them, and adopts the newest state whose commit completed: every page
// a one-sync commit or grouped commit listed must hold what it listed (MetaPage.swift,
// GroupedCommits.swift). Commits durable only in the commit log are then replayed on top of it
// (`replayLog`, LoggedCommits.swift); a damaged log is handled in CommitLogDamage.swift.

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
                try commitReplayed(transaction, at: position, length: CommitLog.headerSize + record.body.count)
            } catch {
                transaction.rollback()
                throw error
            }
        }
    }
}

extension StorageEngine {
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
}
