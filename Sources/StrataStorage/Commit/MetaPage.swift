// The meta pages. A meta is written either to a fixed slot (page 1 or 2: an *anchor*) or, for
// small durable commits, as the first page of the commit's own contiguous stretch of pages (a
// *record*), so that data and meta reach the disk as one request and one sync.
//
//   offset size field
//        0    4 crc32c of bytes 4 ..< 128 + 16 × (chainCount + listCount) (+ the free list's
//               length when it is kept in the meta)
//        4    4 signature "META"
//        8    8 txid
//       16    8 catalog tree root (0: empty)
//       24    8 page count (the high-water mark: pages ≥ this are unused)
//       32    8 free-list chain head (0: none)
//       40    4 free-list chain length in pages
//       44    4 flags
//       48    8 txid that wrote the free-list chain
//       56    4 listCount
//       60    4 chainCount
//       64    8 the page this meta was written to (1 or 2 for anchors)
//       72    8 token: a record's must equal its predecessor's nextToken (0 for anchors)
//       80    8 nextPage: where the next commit may write its record (0: nowhere)
//       88    8 nextToken: random, so stale pages can never pass for the next record
//       96    4 nextPages: length of the free stretch announced at nextPage
//      100    4 anchorSlot: the slot of the anchor this meta's chain hangs from
//      104    8 syncedThrough: every commit up to this txid was synced before this one was
//               written (grouped commits, GroupedCommits.swift; 0 in older files)
//      112    8 logSalt: logged commits (CommitLog.swift): the salt of the log generation
//               that holds this commit (0 otherwise)
//      120    8 logEnd: logged commits: where the generation's next record goes
//      128      chainCount × { page u64, txid u64 }: the records since the anchor, this one included
//               listCount  × { page u64, crc32c u32, pages u32 }: what this commit wrote
//               then, with flagFreeListInMeta, the free list's encoding (FreeSpace.swift:
//               runCount u64, pendingCount u64, runs, pending), instead of free-list pages
//               (free-list head and length 0)
//
// Open finds the newest valid anchor, follows the chain of records it announces (each record's
// token and txid must continue the chain), and accepts the newest state whose listed pages all
// hold exactly the listed checksums. Only the newest commit can be incomplete: every earlier
// one finished its sync before the next began, and copy-on-write never wrote over its pages.
// A commit that does not fit a record (too many pages, no announced stretch, chain full)
// writes an anchor, to the slot the current chain does not hang from; records stay allocated
// until the next anchor is durable, so the fallback chain is always intact.
//
// A one-sync anchor lists its pages like a record. Larger commits sync their pages first and
// write an anchor with an empty list (two syncs).
//
// Unsafe: `encode` writes into a page image of `pageSize` bytes the caller owns (zeroed first;
// the free list is copied in only after a precondition that it fits). `decode` and `storedTxid`
// read a page in the mapping or a page-sized buffer: the fixed fields lie in the first 128 bytes,
// and the counts that place the records and the free list are bounded by the page size before
// anything past the fixed fields, or the checksum over them, is read.

struct MetaPage: Equatable, Sendable {
    var txid: UInt64
    var catalogRoot: PageNumber
    var pageCount: UInt64
    var freeListHead: PageNumber
    var freeListPages: UInt32
    var flags: UInt32
    var freeListBirth: UInt64
    var selfPage: PageNumber = 1
    var token: UInt64 = 0
    var nextPage: PageNumber = 0
    var nextToken: UInt64 = 0
    var nextPages: UInt32 = 0
    var anchorSlot: UInt32 = 1
    var syncedThrough: UInt64 = 0
    var logSalt: UInt64 = 0
    var logEnd: UInt64 = 0
    var chain: [ChainRecord] = []
    var written: [WrittenRun]
    /// The free space's encoding when it is kept in this meta (`flagFreeListInMeta`) instead
    /// of a chain of free-list pages; empty otherwise. A small logged commit keeps it here and
    /// writes one page fewer.
    var freeList: [UInt8] = []

    struct ChainRecord: Equatable, Sendable {
        var page: PageNumber
        var txid: UInt64
    }

    var isRecord: Bool { selfPage > 2 }

    struct WrittenRun: Equatable, Sendable {
        var page: PageNumber
        var checksum: UInt32
        var pages: UInt32
    }

    /// The commit that wrote this meta did not sync (durability `.none`).
    static let flagUnsynced: UInt32 = 1
    /// A grouped commit (see GroupedCommits.swift): written without a sync of its own; a later
    /// sync (of the group, or of the next ungrouped commit) makes it durable. Until then a
    /// power loss may leave it, and the grouped commits before it back to the last synced
    /// one, incomplete.
    static let flagGrouped: UInt32 = 2

    /// A logged commit (CommitLog.swift): its meta sits in the anchor slot its chain does not
    /// hang from, unsynced; the commit log holds it durably. Recovery never adopts such a meta:
    /// it recovers the state the log generation starts from (`syncedThrough`) and replays the
    /// log.
    static let flagLogged: UInt32 = 4

    /// The free list is stored in the meta after the chain and the list (`freeList`), not in
    /// free-list pages. Set by `encode` exactly when `freeList` is not empty.
    static let flagFreeListInMeta: UInt32 = 8

    var isGrouped: Bool { flags & Self.flagGrouped != 0 }
    var isLogged: Bool { flags & Self.flagLogged != 0 }

    static let signature: UInt32 = 0x4154_454D  // "META"
    static let headerSize = 128
    static let chainCapacity = 64
    /// How many records a chain grows to before the next commit writes an anchor. Records stay
    /// allocated until then, so a short chain keeps free space in large stretches; an anchor
    /// costs the disk a second request, so a long one keeps commits at one request.
    static let chainLimit = 4
    /// The chain length grouped commits may reach: each record of a group lists the chain, so
    /// a group is at most this long before an anchor (and its sync) ends it.
    static let groupChainLimit = chainCapacity - 1

    static func listCapacity(pageSize: Int) -> Int { (pageSize - headerSize) / 16 - chainCapacity }

    /// Bytes of free-list encoding a meta with `chainCount` chain records and no list can keep
    /// (0 or less: none).
    static func freeListCapacity(pageSize: Int, chainCount: Int) -> Int { pageSize - headerSize - 16 * chainCount }

    func encode(into page: UnsafeMutableRawPointer, pageSize: Int) {
        page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        page.setUInt32(Self.signature, at: 4)
        page.setUInt64(txid, at: 8)
        page.setUInt64(catalogRoot, at: 16)
        page.setUInt64(pageCount, at: 24)
        page.setUInt64(freeListHead, at: 32)
        page.setUInt32(freeListPages, at: 40)
        let flags = freeList.isEmpty ? flags & ~Self.flagFreeListInMeta : flags | Self.flagFreeListInMeta
        page.setUInt32(flags, at: 44)
        page.setUInt64(freeListBirth, at: 48)
        page.setUInt32(UInt32(written.count), at: 56)
        page.setUInt32(UInt32(chain.count), at: 60)
        page.setUInt64(selfPage, at: 64)
        page.setUInt64(token, at: 72)
        page.setUInt64(nextPage, at: 80)
        page.setUInt64(nextToken, at: 88)
        page.setUInt32(nextPages, at: 96)
        page.setUInt32(anchorSlot, at: 100)
        page.setUInt64(syncedThrough, at: 104)
        page.setUInt64(logSalt, at: 112)
        page.setUInt64(logEnd, at: 120)
        var at = Self.headerSize
        for record in chain {
            page.setUInt64(record.page, at: at)
            page.setUInt64(record.txid, at: at + 8)
            at += 16
        }
        for run in written {
            page.setUInt64(run.page, at: at)
            page.setUInt32(run.checksum, at: at + 8)
            page.setUInt32(run.pages, at: at + 12)
            at += 16
        }
        if !freeList.isEmpty {
            precondition(at + freeList.count <= pageSize, "a meta's free list must fit its page")
            freeList.withUnsafeBytes { (page + at).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            at += freeList.count
        }
        page.setUInt32(crc32c(page + 4, count: at - 4), at: 0)
    }

    /// The txid field of the meta written to `page`, unchecked (0 without a meta's signature):
    /// `decode` gives a meta with this txid or nil.
    static func storedTxid(_ page: UnsafeRawPointer) -> UInt64 {
        guard page.uint32(at: 4) == signature else { return 0 }
        return page.uint64(at: 8)
    }

    /// Decodes the meta written to page `number`; nil when it does not hold a valid meta
    /// (never written, torn, damaged, or a meta that belongs elsewhere).
    static func decode(_ page: UnsafeRawPointer, pageSize: Int, at number: PageNumber) -> MetaPage? {
        guard page.uint32(at: 4) == signature else { return nil }
        let listCount = Int(page.uint32(at: 56))
        let chainCount = Int(page.uint32(at: 60))
        guard listCount <= listCapacity(pageSize: pageSize), chainCount <= chainCapacity else { return nil }
        let listEnd = headerSize + 16 * (listCount + chainCount)
        var end = listEnd
        let inMeta = page.uint32(at: 44) & flagFreeListInMeta != 0
        if inMeta {
            // The free list's length from its own counts, bounded before it is trusted.
            guard listEnd + 16 <= pageSize else { return nil }
            let runs = page.uint64(at: listEnd)
            let pending = page.uint64(at: listEnd + 8)
            guard runs <= UInt64(pageSize), pending <= UInt64(pageSize) else { return nil }
            end = listEnd + 16 + 16 * Int(runs) + 32 * Int(pending)
            guard end <= pageSize else { return nil }
        }
        guard page.uint32(at: 0) == crc32c(page + 4, count: end - 4) else { return nil }
        var meta = MetaPage(
            txid: page.uint64(at: 8),
            catalogRoot: page.uint64(at: 16),
            pageCount: page.uint64(at: 24),
            freeListHead: page.uint64(at: 32),
            freeListPages: page.uint32(at: 40),
            flags: page.uint32(at: 44),
            freeListBirth: page.uint64(at: 48),
            written: [])
        meta.selfPage = page.uint64(at: 64)
        meta.token = page.uint64(at: 72)
        meta.nextPage = page.uint64(at: 80)
        meta.nextToken = page.uint64(at: 88)
        meta.nextPages = page.uint32(at: 96)
        meta.anchorSlot = page.uint32(at: 100)
        meta.syncedThrough = page.uint64(at: 104)
        meta.logSalt = page.uint64(at: 112)
        meta.logEnd = page.uint64(at: 120)
        var at = headerSize
        meta.chain.reserveCapacity(chainCount)
        for _ in 0..<chainCount {
            meta.chain.append(ChainRecord(page: page.uint64(at: at),
                                          txid: page.uint64(at: at + 8)))
            at += 16
        }
        meta.written.reserveCapacity(listCount)
        for _ in 0..<listCount {
            meta.written.append(WrittenRun(
                page: page.uint64(at: at),
                checksum: page.uint32(at: at + 8),
                pages: page.uint32(at: at + 12)))
            at += 16
        }
        if inMeta {
            meta.freeList = Array(UnsafeRawBufferPointer(start: page + listEnd, count: end - listEnd))
        }
        // Bounds that every valid meta satisfies; anything else is damage the checksum missed.
        guard meta.selfPage == number,
              meta.anchorSlot == 1 || meta.anchorSlot == 2,
              meta.pageCount >= FileHeader.firstDataPage,
              meta.catalogRoot < meta.pageCount,
              meta.freeListHead < meta.pageCount,
              !inMeta || (meta.freeListHead == 0 && meta.freeListPages == 0),
              meta.chain.allSatisfy({ $0.page >= FileHeader.firstDataPage && $0.page < meta.pageCount && $0.txid <= meta.txid }),
              meta.written.allSatisfy({ $0.page >= FileHeader.firstDataPage && $0.page + UInt64($0.pages) <= meta.pageCount && $0.pages > 0 })
        else { return nil }
        return meta
    }
}
