// Searching one leaf or branch page for a key.
//
// Both searches bisect the page's slots, but first aim one probe by interpolation: for
// integer keys spread evenly over a page (primary keys, object keys, cluster keys) the guess
// is the entry or next to it, which saves most of a bisection's cache misses (each probe reads
// a slot and then a cell elsewhere in the page). A guess only ever chooses the first probe:
// the bisection that follows keeps the result exact whatever the page holds, so a poor or
// adversarial guess costs comparisons, never correctness.
//
// The probe's slot and its cell are two dependent cache misses. The engine writes a page's
// cells from the end of the page in slot order, so where cells have one size (fixed-width keys
// and values: primary-key and object-key indexes, cluster keys) the cell's place follows from
// the first two slots, which share the header's cache line; the search starts loading it
// before it reads the slot, and the two misses overlap. That is only a prefetch hint: the slot
// is still what the search follows.

import CStrataSystem

/// What a page's parent says about the page's keys: every key of a sound tree's page is
/// ≥ `lower` (the separator of the entry that led to it) and < `upper` (the next separator).
/// Either is nil where no ancestor has one (the leftmost and rightmost paths). Only ever used
/// to aim a first probe.
struct KeyBounds {
    var lower: UnsafeRawBufferPointer?
    var upper: UnsafeRawBufferPointer?

    /// The bounds of the child `child` of the branch page `view`: its own separator and the
    /// next one, where they exist, else the bounds the branch itself had (the first entry of a
    /// branch acts as −∞, so its stored key bounds nothing).
    @inline(__always)
    mutating func narrow(to view: PageView, child: Int) {
        if child > 0 { lower = view.branchKey(child) }
        if child + 1 < view.count { upper = view.branchKey(child + 1) }
    }
}

/// Starts loading the cache line at `address` (a hint for data about to be read, such as the
/// values of a row just found). Never faults and never changes a result, whatever the address.
@inline(__always)
package func prefetchForReading(_ address: UnsafeRawPointer) {
    strata_prefetch(address)
}

extension PageView {
    /// Starts loading the cell of slot `index` where the first two slots predict it (see the
    /// top of the file). Never faults and never changes a result, whatever the page holds.
    @inline(__always)
    func prefetchCell(_ index: Int) {
        guard count >= 2 else { return }
        let first = cellOffset(0), step = first - cellOffset(1)
        guard step > 0 else { return }
        prefetchForReading(base + max(first - index * step, 0))
    }
}

extension Snapshot {
    /// Pages with fewer entries are searched by bisection only.
    static let interpolationMinimum = 16

    /// A first probe in `low..<high` for `key`, interpolated between `first` and `last` on the
    /// eight bytes after their common prefix; nil when `key` lies outside them or they give no
    /// spread. `last` is the range's last key, or with `lastIsExclusive` a bound above all of
    /// the range's keys (a parent's next separator). For evenly spread integer keys the
    /// guess is exact: the arithmetic is integral, without rounding.
    @inline(__always)
    static func interpolate(_ key: UnsafeRawBufferPointer, _ first: UnsafeRawBufferPointer, _ last: UnsafeRawBufferPointer,
                            _ low: Int, _ high: Int, lastIsExclusive: Bool = false) -> Int? {
        let common = commonPrefixLength(first, last)
        guard key.count >= common,
              compareBytes(UnsafeRawBufferPointer(rebasing: key[0..<common]), UnsafeRawBufferPointer(rebasing: first[0..<common])) == 0
        else { return nil }
        let a = window(first, from: common), b = window(last, from: common), k = window(key, from: common)
        guard a < b, k >= a, lastIsExclusive ? k < b : k <= b else { return nil }
        // (k − a) / (b − a) of the span, in 128-bit arithmetic: k − a < b − a (or ≤ for an
        // inclusive last), so the quotient is at most `span` and cannot overflow.
        // The 64-bit division serves keys that are close together (the usual case: integers
        // spread over a page); the 128-bit one, a library call several times slower, is only
        // for products that overflow 64 bits.
        let span = UInt64(lastIsExclusive ? high - low : high - 1 - low)
        let (narrow, overflow) = (k - a).multipliedReportingOverflow(by: span)
        let offset: UInt64
        if !overflow {
            offset = narrow / (b - a)
        } else {
            let product = (k - a).multipliedFullWidth(by: span)
            offset = (b - a).dividingFullWidth((high: product.high, low: product.low)).quotient
        }
        return min(low + Int(truncatingIfNeeded: offset), high - 1)
    }

    /// The length of the longest common prefix of `a` and `b`.
    @inline(__always)
    static func commonPrefixLength(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let limit = min(a.count, b.count)
        var common = 0
        while common + 8 <= limit {
            let difference = window(a, from: common) ^ window(b, from: common)
            if difference != 0 { return common + difference.leadingZeroBitCount / 8 }
            common += 8
        }
        while common < limit && a[common] == b[common] { common += 1 }
        return common
    }

    /// Eight bytes of `bytes` from `offset`, big-endian, zero-padded past the end.
    @inline(__always)
    static func window(_ bytes: UnsafeRawBufferPointer, from offset: Int) -> UInt64 {
        if offset + 8 <= bytes.count {
            // Non-empty, so the base address exists.
            return bytes.baseAddress.unsafelyUnwrapped.uint64(at: offset).bigEndian
        }
        var value: UInt64 = 0
        var i = offset
        while i < bytes.count { value |= UInt64(bytes[i]) << UInt64(56 - 8 * (i - offset)); i += 1 }
        return value
    }

    /// The first index in `low..<high` where `isBefore` is false (`isBefore` must hold for a
    /// prefix of the range and fail for the rest), searched outwards from `guess` in steps of
    /// 1, 2, 4… until the boundary is bracketed, then by bisection: a guess next to the boundary
    /// costs two or three probes, a wrong one at most about twice a plain bisection's.
    @inline(__always)
    static func partitionPoint(_ low: Int, _ high: Int, from guess: Int, _ isBefore: (Int) -> Bool) -> Int {
        guard low < high else { return low }
        let guess = min(max(guess, low), high - 1)
        var low = low, high = high
        if isBefore(guess) {
            low = guess + 1
            var step = 1
            while low + step - 1 < high {
                let probe = low + step - 1
                if isBefore(probe) { low = probe + 1; step <<= 1 } else { high = probe; break }
            }
        } else {
            high = guess
            var step = 1
            while high - step >= low {
                let probe = high - step
                if isBefore(probe) { low = probe + 1; break } else { high = probe; step <<= 1 }
            }
        }
        while low < high {
            let mid = (low + high) >> 1
            if isBefore(mid) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Index of the child of a branch page to descend into for `key`: the last entry whose key
    /// is ≤ `key`, or the first entry when all are greater (the first key acts as −∞).
    /// `bounds` (from the page's parent) stand in for the page's first and last keys in aiming
    /// the first probe.
    @inline(__always)
    static func childIndex(_ view: PageView, _ key: UnsafeRawBufferPointer, bounds: KeyBounds = KeyBounds()) -> Int {
        let low = 1, high = view.count  // search entries 1..<count
        let isBefore = { (index: Int) in compareBytes(view.branchKey(index), key) <= 0 }
        if high - low >= interpolationMinimum {
            let guess: Int?
            if let lower = bounds.lower, let upper = bounds.upper {
                // The parent's bounds cover entries 0..<count (entry 0's key is about `lower`).
                guess = interpolate(key, lower, upper, 0, high, lastIsExclusive: true).map { max($0, low) }
            } else {
                guess = interpolate(key, view.branchKey(low), view.branchKey(high - 1), low, high)
            }
            if let guess {
                view.prefetchCell(guess)
                return partitionPoint(low, high, from: guess, isBefore) - 1
            }
        }
        var bisectLow = low, bisectHigh = high
        while bisectLow < bisectHigh {
            let mid = (bisectLow + bisectHigh) >> 1
            if isBefore(mid) { bisectLow = mid + 1 } else { bisectHigh = mid }
        }
        return bisectLow - 1
    }

    /// Position of `key` in a leaf page: (index, found). When not found, index is where it
    /// would be inserted. `bounds` (from the page's parent, when the search came down a tree)
    /// stand in for the page's first and last keys in aiming the first probe.
    @inline(__always)
    static func leafSearch(_ view: PageView, _ key: UnsafeRawBufferPointer, bounds: KeyBounds = KeyBounds()) -> (Int, Bool) {
        let count = view.count
        if count >= interpolationMinimum {
            let first = bounds.lower ?? view.leafKey(0)
            let guess: Int?
            if let upper = bounds.upper {
                guess = interpolate(key, first, upper, 0, count, lastIsExclusive: true)
            } else {
                guess = interpolate(key, first, view.leafKey(count - 1), 0, count)
            }
            if let guess {
                view.prefetchCell(guess)
                let c = compareBytes(view.leafKey(guess), key)
                if c == 0 { return (guess, true) }
                let isBefore = { (index: Int) in compareBytes(view.leafKey(index), key) < 0 }
                let index = c < 0 ? partitionPoint(guess + 1, count, from: guess + 1, isBefore) : partitionPoint(0, guess, from: guess - 1, isBefore)
                return (index, index < count && compareBytes(view.leafKey(index), key) == 0)
            }
        }
        var low = 0, high = count
        while low < high {
            let mid = (low + high) >> 1
            let c = compareBytes(view.leafKey(mid), key)
            if c == 0 { return (mid, true) }
            if c < 0 { low = mid + 1 } else { high = mid }
        }
        return (low, false)
    }
}
