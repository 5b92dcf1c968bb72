import Foundation

// Byte comparisons for query values, on raw memory with `memcmp` and `memchr`.
//
// Invariants they rely on:
// - Each buffer or pointer and count describes memory valid for the call (the caller is inside
//   `withUTF8`/`withUnsafeBytes`, or reads a row of a chunk it holds).
// - A base address is force-unwrapped only where its count is above zero (`compareBytes`
//   checks the common length, `contains` the needle's and text's, `containsBytes` is given a
//   non-empty needle, and returns before reading when it is longer than the haystack).

extension QueryValueComparison {
    /// The order of two byte strings: by their common prefix (`memcmp`), then by length; -1,
    /// 0 or 1.
    static func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0 {
            let c = memcmp(a.baseAddress!, b.baseAddress!, common)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return a.count < b.count ? -1 : (a.count == b.count ? 0 : 1)
    }

    /// The order of two UUIDs by their bytes.
    static func compareUUID(_ x: UUID, _ y: UUID) -> Int {
        withUnsafeBytes(of: x.uuid) { a in withUnsafeBytes(of: y.uuid) { b in compareBytes(a, b) } }
    }

    /// Whether `needle` occurs in `text` (an empty needle occurs everywhere).
    static func contains(_ text: [UInt8], _ needle: [UInt8]) -> Bool {
        if needle.isEmpty { return true }
        if needle.count > text.count { return false }
        return text.withUnsafeBytes { t in
            needle.withUnsafeBytes { n in containsBytes(t.baseAddress!, t.count, n.baseAddress!, n.count) }
        }
    }

    /// Whether `needle` (non-empty) occurs in `haystack`.
    @inline(__always)
    static func containsBytes(_ haystack: UnsafeRawPointer, _ count: Int, _ needle: UnsafeRawPointer, _ n: Int) -> Bool {
        if n > count { return false }
        let first = Int32(needle.load(as: UInt8.self))
        var start = haystack
        let last = haystack + (count - n)
        while start <= last {
            guard let hit = memchr(start, first, last - start + 1) else { return false }
            let position = UnsafeRawPointer(hit)
            if memcmp(position, needle, n) == 0 { return true }
            start = position + 1
        }
        return false
    }
}
