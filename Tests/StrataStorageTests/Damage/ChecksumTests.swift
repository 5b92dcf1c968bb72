// The checksum's fast path (three interleaved chains joined by a shift, CStrataSystem.c) must
// give exactly the CRC32C of a plain bit-by-bit computation: every page on disk is sealed with
// it, so a changed value would make every existing file unreadable.

import Testing
@testable import StrataStorage

@Suite struct ChecksumTests {
    /// CRC32C bit by bit (reflected polynomial 0x82F63B78, inverted in and out).
    static func reference(_ bytes: UnsafeRawBufferPointer, seed: UInt32) -> UInt32 {
        var c = ~seed
        for byte in bytes {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        }
        return ~c
    }

    @Test func knownValue() {
        let text = Array("123456789".utf8)
        #expect(text.withUnsafeBytes { crc32c($0.baseAddress!, count: $0.count) } == 0xE306_9283)
    }

    /// Lengths around one block of three stretches (4,080 bytes), a page's checksummed bytes
    /// (4,092), several blocks, and odd starting offsets, with and without a seed.
    @Test(arguments: [0, 1, 7, 8, 255, 4079, 4080, 4081, 4092, 4096, 8160, 8191, 12_240 + 13, 40_000])
    func matchesBitByBit(length: Int) {
        var generator = SplitMix64(seed: UInt64(length) &+ 17)
        let bytes = (0..<(length + 3)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        bytes.withUnsafeBytes { all in
            for offset in [0, 3] where offset + length <= all.count {
                let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                for seed: UInt32 in [0, 0xDEAD_BEEF] {
                    let fast = crc32c(slice.baseAddress!, count: length, seed: seed)
                    #expect(fast == Self.reference(slice, seed: seed), "length \(length) offset \(offset)")
                }
            }
        }
    }

    /// A checksum taken in two parts with the first as the seed equals one over the whole.
    @Test func chainsThroughTheSeed() {
        var generator = SplitMix64(seed: 5)
        let bytes = (0..<10_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        bytes.withUnsafeBytes { all in
            let whole = crc32c(all.baseAddress!, count: all.count)
            let first = crc32c(all.baseAddress!, count: 4_500)
            #expect(crc32c(all.baseAddress! + 4_500, count: all.count - 4_500, seed: first) == whole)
        }
    }
}
