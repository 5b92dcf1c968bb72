import Testing
@testable import StrataStorage

/// A meta that keeps the free list (`MetaPage.flagFreeListInMeta`): it round-trips, its
/// checksum covers the free list, and bounds that do not hold make it invalid.
@Suite("Meta free list")
struct MetaFreeListTests {
    private static let pageSize = 4096

    private func sample(freeList: FreeSpace) -> MetaPage {
        var meta = MetaPage(txid: 9, catalogRoot: 40, pageCount: 100, freeListHead: 0, freeListPages: 0,
                            flags: MetaPage.flagLogged | MetaPage.flagUnsynced, freeListBirth: 9, written: [])
        meta.selfPage = 50
        meta.anchorSlot = 2
        meta.chain = [MetaPage.ChainRecord(page: 60, txid: 7), MetaPage.ChainRecord(page: 61, txid: 8)]
        meta.freeList = freeList.encode()
        meta.flags |= MetaPage.flagFreeListInMeta
        return meta
    }

    private func space() -> FreeSpace {
        var space = FreeSpace(pageCount: 100)
        space.free(start: 10, count: 2, birth: 3, death: 3)
        space.free(start: 20, count: 1, birth: 2, death: 5)
        space.free(start: 30, count: 4, birth: 4, death: 8)
        return space
    }

    private func encoded(_ meta: MetaPage) -> [UInt8] {
        var page = [UInt8](repeating: 0, count: Self.pageSize)
        page.withUnsafeMutableBytes { meta.encode(into: $0.baseAddress!, pageSize: Self.pageSize) }
        return page
    }

    private func decode(_ page: [UInt8], at number: PageNumber = 50) -> MetaPage? {
        page.withUnsafeBytes { MetaPage.decode($0.baseAddress!, pageSize: Self.pageSize, at: number) }
    }

    @Test func roundTripsAndDecodesItsFreeSpace() throws {
        let meta = sample(freeList: space())
        let decoded = try #require(decode(encoded(meta)))
        #expect(decoded == meta)
        let free = try FreeSpace.decode(decoded.freeList, pageCount: decoded.pageCount, firstPage: 50)
        #expect(free.runs == space().runs && free.pending == space().pending)
        // Without a free list the flag is not stored.
        var plain = meta
        plain.freeList = []
        plain.flags &= ~MetaPage.flagFreeListInMeta
        #expect(decode(encoded(plain)) == plain)
    }

    @Test func damageToTheFreeListInvalidatesTheMeta() throws {
        let page = encoded(sample(freeList: space()))
        let start = MetaPage.headerSize + 16 * 2
        // Every byte of the free list is under the checksum.
        for offset in start..<(start + space().encodedSize) {
            var damaged = page
            damaged[offset] ^= 0x10
            #expect(decode(damaged) == nil, "byte \(offset)")
        }
        // Counts past the page, even with a matching checksum, are refused before use.
        var huge = page
        huge.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt64(1 << 40), toByteOffset: start, as: UInt64.self)
            raw.storeBytes(of: crc32c(raw.baseAddress! + 4, count: start + 16 - 4), as: UInt32.self)
        }
        #expect(decode(huge) == nil)
        // The flag with free-list pages as well is not a valid meta.
        var both = sample(freeList: space())
        both.freeListHead = 70
        both.freeListPages = 1
        #expect(decode(encoded(both)) == nil)
    }

    @Test func aLoggedMetaLeavesRoomForTheCheckpointsChainRecord() {
        // The capacity a logged commit uses counts one chain record more than its own, so the
        // anchor a checkpoint makes of it (its chain plus the logged meta's page) still fits.
        let chain = 5
        let capacity = MetaPage.freeListCapacity(pageSize: Self.pageSize, chainCount: chain + 1)
        var meta = sample(freeList: FreeSpace(pageCount: 100))
        meta.chain = (0..<(chain + 1)).map { MetaPage.ChainRecord(page: 60 + UInt64($0), txid: UInt64($0)) }
        // A free list of exactly the capacity: runCount runs of 16 bytes after the 16-byte counts.
        let runs = (capacity - 16) / 16
        meta.freeList = [UInt8](repeating: 0, count: 16 + 16 * runs)
        meta.freeList.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt64(runs), as: UInt64.self)
            for i in 0..<runs {
                raw.storeBytes(of: UInt64(3 + i), toByteOffset: 16 + 16 * i, as: UInt64.self)
                raw.storeBytes(of: UInt64(1), toByteOffset: 24 + 16 * i, as: UInt64.self)
            }
        }
        meta.pageCount = UInt64(3 + runs + 10)
        #expect(decode(encoded(meta)) == meta)
    }
}
