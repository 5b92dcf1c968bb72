// The meta pages: pages 1 and 2. Commit N writes slot N % 2, so the previous commit's meta is
// never touched by the next one. Open picks the newest meta that validates.
//
//   offset size field
//        0    4 crc32c of bytes 4 ..< 64 + 16 × listCount
//        4    4 signature "META"
//        8    8 txid
//       16    8 catalog tree root (0: empty)
//       24    8 page count (the high-water mark: pages ≥ this are unused)
//       32    8 free-list chain head (0: none)
//       40    4 free-list chain length in pages
//       44    4 flags
//       48    8 txid that wrote the free-list chain
//       56    4 listCount
//       60    4 reserved
//       64      listCount × { page u64, crc32c u32, pages u32 }
//
// The list makes a one-sync commit safe. A commit that wrote at most `listCapacity` pages
// (or runs) writes its pages and its meta, then syncs once; the meta lists every page it
// wrote with the checksum it was given. If power fails before the sync completes, some of
// those writes may be missing or torn; open accepts the meta only if every listed page holds
// exactly the listed checksum, and otherwise falls back to the other slot, whose commit had
// completed its sync (copy-on-write never wrote over its pages). Larger commits sync their
// pages first and write a meta with an empty list (two syncs).

struct MetaPage: Equatable, Sendable {
    var txid: UInt64
    var catalogRoot: PageNumber
    var pageCount: UInt64
    var freeListHead: PageNumber
    var freeListPages: UInt32
    var flags: UInt32
    var freeListBirth: UInt64
    var written: [WrittenRun]

    struct WrittenRun: Equatable, Sendable {
        var page: PageNumber
        var checksum: UInt32
        var pages: UInt32
    }

    /// The commit that wrote this meta did not sync (durability `.none`).
    static let flagUnsynced: UInt32 = 1

    static let signature: UInt32 = 0x4154_454D  // "META"
    static let headerSize = 64

    static func listCapacity(pageSize: Int) -> Int { (pageSize - headerSize) / 16 }

    static func slotPage(for txid: UInt64) -> PageNumber { 1 + txid % 2 }

    func encode(into page: UnsafeMutableRawPointer, pageSize: Int) {
        page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        page.storeBytes(of: Self.signature, toByteOffset: 4, as: UInt32.self)
        page.storeBytes(of: txid, toByteOffset: 8, as: UInt64.self)
        page.storeBytes(of: catalogRoot, toByteOffset: 16, as: UInt64.self)
        page.storeBytes(of: pageCount, toByteOffset: 24, as: UInt64.self)
        page.storeBytes(of: freeListHead, toByteOffset: 32, as: UInt64.self)
        page.storeBytes(of: freeListPages, toByteOffset: 40, as: UInt32.self)
        page.storeBytes(of: flags, toByteOffset: 44, as: UInt32.self)
        page.storeBytes(of: freeListBirth, toByteOffset: 48, as: UInt64.self)
        page.storeBytes(of: UInt32(written.count), toByteOffset: 56, as: UInt32.self)
        for (i, run) in written.enumerated() {
            let at = Self.headerSize + 16 * i
            page.storeBytes(of: run.page, toByteOffset: at, as: UInt64.self)
            page.storeBytes(of: run.checksum, toByteOffset: at + 8, as: UInt32.self)
            page.storeBytes(of: run.pages, toByteOffset: at + 12, as: UInt32.self)
        }
        let end = Self.headerSize + 16 * written.count
        page.storeBytes(of: crc32c(page + 4, count: end - 4), as: UInt32.self)
    }

    /// Decodes a meta slot; nil when the slot does not hold a valid meta (never written, torn,
    /// or damaged).
    static func decode(_ page: UnsafeRawPointer, pageSize: Int) -> MetaPage? {
        guard page.loadUnaligned(fromByteOffset: 4, as: UInt32.self) == signature else { return nil }
        let listCount = Int(page.loadUnaligned(fromByteOffset: 56, as: UInt32.self))
        guard listCount <= listCapacity(pageSize: pageSize) else { return nil }
        let end = headerSize + 16 * listCount
        guard page.loadUnaligned(as: UInt32.self) == crc32c(page + 4, count: end - 4) else { return nil }
        var written: [WrittenRun] = []
        written.reserveCapacity(listCount)
        for i in 0..<listCount {
            let at = headerSize + 16 * i
            written.append(WrittenRun(
                page: page.loadUnaligned(fromByteOffset: at, as: UInt64.self),
                checksum: page.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self),
                pages: page.loadUnaligned(fromByteOffset: at + 12, as: UInt32.self)))
        }
        let meta = MetaPage(
            txid: page.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
            catalogRoot: page.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
            pageCount: page.loadUnaligned(fromByteOffset: 24, as: UInt64.self),
            freeListHead: page.loadUnaligned(fromByteOffset: 32, as: UInt64.self),
            freeListPages: page.loadUnaligned(fromByteOffset: 40, as: UInt32.self),
            flags: page.loadUnaligned(fromByteOffset: 44, as: UInt32.self),
            freeListBirth: page.loadUnaligned(fromByteOffset: 48, as: UInt64.self),
            written: written)
        // Bounds that every valid meta satisfies; anything else is damage the checksum missed.
        guard meta.pageCount >= FileHeader.firstDataPage,
              meta.catalogRoot < meta.pageCount,
              meta.freeListHead < meta.pageCount,
              meta.written.allSatisfy({ $0.page >= FileHeader.firstDataPage && $0.page + UInt64($0.pages) <= meta.pageCount && $0.pages > 0 })
        else { return nil }
        return meta
    }
}
