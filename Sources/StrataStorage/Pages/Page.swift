// The on-disk page.
//
// Every page starts with a 32-byte header:
//
//   offset size field
//        0    4 crc32c of bytes 4 ..< (pages × pageSize) of the page or run
//        4    1 kind (PageKind)
//        5    1 reserved, zero
//        6    2 entry count (leaf, branch)
//        8    8 page number (catches misdirected writes)
//       16    8 txid of the commit that wrote the page (its "birth")
//       24    8 kind-specific: overflow → value length; free-list → next page of the chain;
//                leaf/branch → unused
//
// Leaf and branch pages are slotted: after the header, `count` UInt16 offsets (one per entry,
// in key order) point at cells packed from the end of the page downwards.
//
//   leaf cell:   keyLength u16 | valueLength u32 (bit 31: the value lives in an overflow run)
//                | key | value, or the overflow run's first page (u64)
//   branch cell: child page u64 | keyLength u16 | key
//
// An overflow run is `ceil((32 + length) / pageSize)` contiguous pages holding one value after
// the header. All integers are little-endian.
//
// Unsafe: `PageView` reads a page through a raw pointer into the mapping. The memory stays
// valid while the snapshot that produced the view is pinned: the writer never overwrites a page
// a pinned version can reach, and the mapping is never unmapped before the file closes. The
// header fields lie in the first 32 bytes of any page. The slot and cell offsets come from the
// page itself: the slot and cell accessors are used only on pages `Snapshot.verify` checked
// (the slot array and every cell lie inside the page), so they do not check again.
// `PageWriter`, `copyShort` and `compareBytes` write and read buffers whose bounds their callers
// pass (a page-sized image; key and value views with their counts).

typealias PageNumber = UInt64

enum PageKind: UInt8 {
    case leaf = 1
    case branch = 2
    case overflow = 3
    case freeList = 4
}

enum PageLayout {
    static let headerSize = 32
    static let checksumOffset = 0
    static let kindOffset = 4
    static let countOffset = 6
    static let numberOffset = 8
    static let txidOffset = 16
    static let auxOffset = 24

    static let leafCellHeader = 6      // keyLength u16 + valueLength u32
    static let branchCellHeader = 10   // child u64 + keyLength u16
    static let overflowFlag: UInt32 = 1 << 31

    /// Pages needed for an overflow run holding `length` bytes.
    static func overflowPages(length: Int, pageSize: Int) -> Int {
        (headerSize + length + pageSize - 1) / pageSize
    }
}

/// A read-only view of one page (or the first page of a run) in the mapping.
struct PageView {
    let base: UnsafeRawPointer

    @inline(__always) var kindRaw: UInt8 { base.uint8(at: PageLayout.kindOffset) }
    @inline(__always) var count: Int { Int(base.uint16(at: PageLayout.countOffset)) }
    @inline(__always) var number: PageNumber { base.uint64(at: PageLayout.numberOffset) }
    @inline(__always) var txid: UInt64 { base.uint64(at: PageLayout.txidOffset) }
    @inline(__always) var aux: UInt64 { base.uint64(at: PageLayout.auxOffset) }
    @inline(__always) var storedChecksum: UInt32 { base.uint32(at: 0) }
    @inline(__always) var isLeaf: Bool { kindRaw == PageKind.leaf.rawValue }

    @inline(__always) func cellOffset(_ index: Int) -> Int {
        Int(base.uint16(at: PageLayout.headerSize + 2 * index))
    }

    // Leaf cells.
    @inline(__always) func leafKey(_ index: Int) -> UnsafeRawBufferPointer {
        let cell = base + cellOffset(index)
        let length = Int(cell.uint16(at: 0))
        return UnsafeRawBufferPointer(start: cell + PageLayout.leafCellHeader, count: length)
    }
    /// The raw value field: (length with flag, pointer to the inline value or overflow page number).
    @inline(__always) func leafValueField(_ index: Int) -> (UInt32, UnsafeRawPointer) {
        let cell = base + cellOffset(index)
        let keyLength = Int(cell.uint16(at: 0))
        let valueField = cell.uint32(at: 2)
        return (valueField, cell + PageLayout.leafCellHeader + keyLength)
    }

    // Branch cells.
    @inline(__always) func branchChild(_ index: Int) -> PageNumber {
        (base + cellOffset(index)).uint64(at: 0)
    }
    @inline(__always) func branchKey(_ index: Int) -> UnsafeRawBufferPointer {
        let cell = base + cellOffset(index)
        let length = Int(cell.uint16(at: 8))
        return UnsafeRawBufferPointer(start: cell + PageLayout.branchCellHeader, count: length)
    }
}

/// Writes a page header and seals the page (or run) with its checksum.
enum PageWriter {
    static func writeHeader(_ page: UnsafeMutableRawPointer, kind: PageKind, count: Int, number: PageNumber, txid: UInt64, aux: UInt64) {
        page.setUInt32(0, at: 0)
        page.setUInt8(kind.rawValue, at: PageLayout.kindOffset)
        page.setUInt8(0, at: 5)
        page.setUInt16(UInt16(count).littleEndian, at: PageLayout.countOffset)
        page.setUInt64(number.littleEndian, at: PageLayout.numberOffset)
        page.setUInt64(txid.littleEndian, at: PageLayout.txidOffset)
        page.setUInt64(aux.littleEndian, at: PageLayout.auxOffset)
    }

    /// Computes and stores the checksum; returns it.
    @discardableResult
    static func seal(_ page: UnsafeMutableRawPointer, length: Int) -> UInt32 {
        let sum = crc32c(page + 4, count: length - 4)
        page.setUInt32(sum.littleEndian, at: 0)
        return sum
    }
}

/// Copies `bytes` to `destination`: up to 16 bytes (most keys and many values) with two
/// overlapping loads and stores instead of a call to `memmove`.
@inline(__always)
func copyShort(_ destination: UnsafeMutableRawPointer, _ bytes: UnsafeRawBufferPointer) {
    let n = bytes.count
    guard n > 0, let source = bytes.baseAddress else { return }
    if n >= 8 && n <= 16 {
        destination.setUInt64(source.uint64(at: 0), at: 0)
        (destination + n - 8).setUInt64((source + n - 8).uint64(at: 0), at: 0)
    } else if n >= 4 && n < 8 {
        destination.setUInt32(source.uint32(at: 0), at: 0)
        (destination + n - 4).setUInt32((source + n - 4).uint32(at: 0), at: 0)
    } else if n < 4 {
        for i in 0..<n { destination.setUInt8(source.uint8(at: i), at: i) }
    } else {
        destination.copyMemory(from: source, byteCount: n)
    }
}

/// Compares two byte strings: memcmp order, shorter first on a common prefix. Eight bytes at a
/// time as big-endian integers (keys are short: a libc call per comparison costs more than the
/// comparison).
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let common = min(a.count, b.count)
    if common > 0 {
        let pa = a.baseAddress.unsafelyUnwrapped, pb = b.baseAddress.unsafelyUnwrapped  // both non-empty
        var i = 0
        while i + 8 <= common {
            let x = pa.uint64(at: i).bigEndian
            let y = pb.uint64(at: i).bigEndian
            if x != y { return x < y ? -1 : 1 }
            i += 8
        }
        while i < common {
            let x = pa.uint8(at: i), y = pb.uint8(at: i)
            if x != y { return x < y ? -1 : 1 }
            i += 1
        }
    }
    return a.count - b.count
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
