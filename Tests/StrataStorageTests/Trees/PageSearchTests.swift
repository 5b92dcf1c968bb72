import Testing
@testable import StrataStorage

/// The page searches (`Snapshot.leafSearch`, `Snapshot.childIndex`) aim a first probe by
/// interpolation, from the page's own first and last keys or from bounds its parent gives, and
/// then gallop and bisect. Whatever the guess, the answer must be a plain bisection's: checked
/// here on random pages of many key shapes, with true, loose, wrong and contradictory bounds,
/// and on damaged pages (keys out of order) for answers that stay in range and never claim a
/// key that is not there.
@Suite("Page search")
struct PageSearchTests {
    static let pageSize = 16384

    /// A page holding `keys` in slot order: a leaf (cells carry a 1-byte value) or a branch
    /// (child page = slot index). Cells are packed from the end, as the engine writes them.
    final class BuiltPage {
        let memory: UnsafeMutableRawPointer
        var view: PageView { PageView(base: UnsafeRawPointer(memory)) }

        init(keys: [[UInt8]], leaf: Bool) {
            memory = .allocate(byteCount: PageSearchTests.pageSize, alignment: 8)
            memory.initializeMemory(as: UInt8.self, repeating: 0, count: PageSearchTests.pageSize)
            PageWriter.writeHeader(memory, kind: leaf ? .leaf : .branch, count: keys.count, number: 3, txid: 1, aux: 0)
            var end = PageSearchTests.pageSize
            for (index, key) in keys.enumerated() {
                let size = (leaf ? PageLayout.leafCellHeader + 1 : PageLayout.branchCellHeader) + key.count
                end -= size
                precondition(end >= PageLayout.headerSize + 2 * keys.count, "test page overflows")
                memory.storeBytes(of: UInt16(end), toByteOffset: PageLayout.headerSize + 2 * index, as: UInt16.self)
                let cell = memory + end
                if leaf {
                    cell.storeBytes(of: UInt16(key.count), as: UInt16.self)
                    cell.storeBytes(of: UInt32(1), toByteOffset: 2, as: UInt32.self)
                    key.withUnsafeBytes { (cell + PageLayout.leafCellHeader).copyMemory(from: $0.baseAddress!, byteCount: key.count) }
                    (cell + PageLayout.leafCellHeader + key.count).storeBytes(of: UInt8(7), as: UInt8.self)
                } else {
                    cell.storeBytes(of: UInt64(index), as: UInt64.self)
                    cell.storeBytes(of: UInt16(key.count), toByteOffset: 8, as: UInt16.self)
                    key.withUnsafeBytes { (cell + PageLayout.branchCellHeader).copyMemory(from: $0.baseAddress!, byteCount: key.count) }
                }
            }
        }

        deinit { memory.deallocate() }
    }

    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in compareBytes(x, y) } }
    }

    /// The plain bisection the interpolating searches must agree with.
    static func referenceLeaf(_ keys: [[UInt8]], _ key: [UInt8]) -> (Int, Bool) {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) / 2
            let c = compare(keys[mid], key)
            if c == 0 { return (mid, true) }
            if c < 0 { low = mid + 1 } else { high = mid }
        }
        return (low, false)
    }

    static func referenceChild(_ keys: [[UInt8]], _ key: [UInt8]) -> Int {
        var low = 1, high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if compare(keys[mid], key) <= 0 { low = mid + 1 } else { high = mid }
        }
        return low - 1
    }

    static func bigEndian(_ value: UInt64, tag: UInt8? = 1) -> [UInt8] {
        (tag.map { [$0] } ?? []) + withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// Sorted distinct keys of one of several shapes: dense and sparse integers (the primary-key
    /// encoding), skewed integers, short random strings, long keys sharing a prefix.
    static func sortedKeys(count: Int, shape: Int, random: inout SplitMix64) -> [[UInt8]] {
        var set = Set<[UInt8]>()
        let base = random.next() >> 8
        var attempts = 0
        while set.count < count && attempts < count * 20 {
            attempts += 1
            let i = UInt64(set.count)
            switch shape {
            case 0: set.insert(bigEndian(base &+ i))
            case 1: set.insert(bigEndian(base &+ random.next() % UInt64(count * 7 + 1)))
            case 2: let r = random.next() % 1_000; set.insert(bigEndian(base &+ r * r * r))
            case 3: set.insert((0..<Int(random.next() % 9)).map { _ in UInt8(truncatingIfNeeded: random.next() % 4 + 97) })
            default:
                let prefix = [UInt8](repeating: 0x41, count: 10)
                set.insert(prefix + (0..<Int(random.next() % 12)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            }
        }
        return set.sorted { compare($0, $1) < 0 }
    }

    /// Keys to look for: every key on the page, its neighbours, and random ones.
    static func probes(_ keys: [[UInt8]], random: inout SplitMix64) -> [[UInt8]] {
        var out: [[UInt8]] = [[], [0], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]
        for key in keys {
            out.append(key)
            out.append(key + [0])
            if let last = key.last { out.append(Array(key.dropLast()) + [last &- 1]); out.append(Array(key.dropLast()) + [last &+ 1]) }
            out.append(Array(key.prefix(Int(random.next() % UInt64(key.count + 1)))))
        }
        for _ in 0..<20 { out.append(bigEndian(random.next() >> UInt64(random.next() % 64))) }
        return out
    }

    /// Bounds as a tree search would pass them (lower ≤ key < upper, around the page), and
    /// arbitrary ones: each must leave the answer unchanged.
    static func boundChoices(_ keys: [[UInt8]], _ key: [UInt8], random: inout SplitMix64) -> [([UInt8]?, [UInt8]?)] {
        let someKey = { (r: inout SplitMix64) -> [UInt8] in keys.isEmpty ? [] : keys[Int(r.next() % UInt64(keys.count))] }
        var below = keys.first ?? key
        if compare(key, below) < 0 { below = key }
        var above = (keys.last ?? key) + [1]
        if compare(key, above) >= 0 { above = key + [0] }
        return [
            (nil, nil), (below, above), (below, nil), (nil, above),
            ([], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            (someKey(&random), someKey(&random)), (above, below), (key, key), (key, key + [0]),
            (bigEndian(random.next()), bigEndian(random.next())),
        ]
    }

    static func withBounds<R>(_ lower: [UInt8]?, _ upper: [UInt8]?, _ body: (KeyBounds) -> R) -> R {
        let l = lower ?? [], u = upper ?? []
        return l.withUnsafeBytes { lb in
            u.withUnsafeBytes { ub in
                body(KeyBounds(lower: lower == nil ? nil : lb, upper: upper == nil ? nil : ub))
            }
        }
    }

    @Test func leafSearchAgreesWithBisection() {
        var random = SplitMix64(seed: 0x5EA2C4)
        for round in 0..<300 {
            let count = [0, 1, 15, 16, 17, 40, 100, 150][round % 8]
            let keys = Self.sortedKeys(count: count, shape: round % 5, random: &random)
            let page = BuiltPage(keys: keys, leaf: true)
            for key in Self.probes(keys, random: &random) {
                let expected = Self.referenceLeaf(keys, key)
                for (lower, upper) in Self.boundChoices(keys, key, random: &random) {
                    let found = Self.withBounds(lower, upper) { bounds in
                        key.withUnsafeBytes { Snapshot.leafSearch(page.view, $0, bounds: bounds) }
                    }
                    #expect(found == expected, "round \(round), key \(key), bounds \(String(describing: lower))…\(String(describing: upper))")
                }
            }
        }
    }

    @Test func childIndexAgreesWithBisection() {
        var random = SplitMix64(seed: 0xB2A4C8)
        for round in 0..<300 {
            let count = [1, 2, 16, 17, 18, 60, 120, 150][round % 8]
            let keys = Self.sortedKeys(count: count, shape: round % 5, random: &random)
            guard !keys.isEmpty else { continue }
            let page = BuiltPage(keys: keys, leaf: false)
            for key in Self.probes(keys, random: &random) {
                let expected = Self.referenceChild(keys, key)
                for (lower, upper) in Self.boundChoices(keys, key, random: &random) {
                    let found = Self.withBounds(lower, upper) { bounds in
                        key.withUnsafeBytes { Snapshot.childIndex(page.view, $0, bounds: bounds) }
                    }
                    #expect(found == expected, "round \(round), key \(key)")
                }
            }
        }
    }

    /// Pages whose keys are out of order (damage a checksum cannot catch: a page written that
    /// way) have no right answer, but the searches must stay on the page and a leaf search
    /// must never report a key that is not at the index it gives.
    @Test func damagedPagesGiveAnswersInRange() {
        var random = SplitMix64(seed: 0xDA3A6E)
        for round in 0..<200 {
            var keys = Self.sortedKeys(count: [16, 17, 50, 150][round % 4], shape: round % 5, random: &random)
            guard keys.count > 1 else { continue }
            switch round % 3 {
            case 0: keys.shuffle(using: &random)
            case 1: keys.reverse()
            default: keys.swapAt(0, keys.count - 1)
            }
            let leaf = BuiltPage(keys: keys, leaf: true), branch = BuiltPage(keys: keys, leaf: false)
            for key in Self.probes(keys, random: &random) {
                for (lower, upper) in Self.boundChoices(keys, key, random: &random) {
                    let (index, found) = Self.withBounds(lower, upper) { bounds in
                        key.withUnsafeBytes { Snapshot.leafSearch(leaf.view, $0, bounds: bounds) }
                    }
                    #expect(index >= 0 && index <= keys.count)
                    if found { #expect(index < keys.count && keys[index] == key) }
                    let child = Self.withBounds(lower, upper) { bounds in
                        key.withUnsafeBytes { Snapshot.childIndex(branch.view, $0, bounds: bounds) }
                    }
                    #expect(child >= 0 && child < keys.count)
                }
            }
        }
    }

    /// Evenly spread integer keys with the parent's bounds are found at the first probe; the
    /// guess is exact (no floating-point rounding down to the previous entry).
    @Test func interpolationIsExactForConsecutiveKeys() {
        for count in [16, 97, 150, 255] {
            for start: UInt64 in [0, 1, 1 << 40, UInt64.max >> 1 - 300] {
                let keys = (0..<UInt64(count)).map { Self.bigEndian(start + $0) }
                let upper = Self.bigEndian(start + UInt64(count))
                for (index, key) in keys.enumerated() {
                    let guess = key.withUnsafeBytes { k in
                        keys[0].withUnsafeBytes { l in
                            upper.withUnsafeBytes { u in Snapshot.interpolate(k, l, u, 0, count, lastIsExclusive: true) }
                        }
                    }
                    #expect(guess == index)
                }
            }
        }
    }
}
