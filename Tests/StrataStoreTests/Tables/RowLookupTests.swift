import Testing
@testable import StrataStore

/// `ClusterView.row(of:)` answers from arithmetic alone once it has seen that a cluster's keys
/// are consecutive. Checked against a linear search for consecutive keys, keys with gaps, and
/// damaged key chunks (out of order, repeated, wrapping around Int64), and after a view is
/// reused for another cluster.
@Suite("Cluster view")
struct RowLookupTests {
    final class KeyChunk {
        let memory: UnsafeMutablePointer<Int64>
        let count: Int
        var view: ChunkView { ChunkView(values: UnsafeRawPointer(memory), nulls: nil, bytes: nil, width: 8, count: count) }

        init(_ keys: [Int64]) {
            count = keys.count
            memory = .allocate(capacity: max(keys.count, 1))
            memory.initialize(from: keys, count: keys.count)
        }

        deinit { memory.deallocate() }
    }

    static func probes(_ keys: [Int64]) -> [Int64] {
        var out: [Int64] = [.min, .max, 0, -1]
        for key in keys { out += [key, key &- 1, key &+ 1] }
        return out
    }

    static func check(_ view: ClusterView, _ keys: [Int64], sorted: Bool) {
        for key in probes(keys) {
            let row = view.row(of: key)
            if sorted {
                #expect(row == keys.firstIndex(of: key), "key \(key) in \(keys.prefix(8))…")
            } else if let row {
                // Damaged: no right answer, but a row given must hold the key.
                #expect(row >= 0 && row < keys.count && keys[row] == key)
            }
        }
    }

    @Test func rowsMatchALinearSearch() {
        var random = SplitMix64(seed: 0xC1A5)
        var layouts: [([Int64], Bool)] = [
            ([], true), ([5], true), (Array(0..<256), true), (Array(1_000..<1_100), true),
            ((0..<200).map { Int64.max - 199 + $0 }, true), ((0..<100).map { Int64.min + $0 }, true),
            ((0..<256).filter { $0 != 17 }.map(Int64.init), true), ((0..<100).map { $0 * 3 }, true),
            ([Int64.max - 1, Int64.max, Int64.min, Int64.min + 1], false),  // wraps: consecutive under &+
            ([3, 4, 5, 5, 6], false), ([9, 8, 7, 6], false), ([0, 1, 2, 10, 4], false),
        ]
        for _ in 0..<50 {
            var keys: [Int64] = []
            var next = Int64(random.next() % 1_000_000)
            for _ in 0..<Int(random.next() % 256 + 1) {
                keys.append(next)
                next += random.next() % 8 == 0 ? Int64(random.next() % 5 + 2) : 1
            }
            layouts.append((keys, true))
            var shuffled = keys
            shuffled.shuffle(using: &random)
            layouts.append((shuffled, false))
        }
        for (keys, sorted) in layouts {
            let chunk = KeyChunk(keys)
            let view = ClusterView(firstKey: keys.first ?? 0, keys: chunk.view, columns: [], dirty: nil, generation: 1)
            Self.check(view, keys, sorted: sorted)
            Self.check(view, keys, sorted: sorted)  // measured layout, second pass
        }
    }

    @Test func reusedViewsMeasureTheirNewKeys() {
        let consecutive = KeyChunk(Array(0..<256)), gapped = KeyChunk((0..<256).map { $0 * 2 })
        let view = ClusterView(firstKey: 0, keys: consecutive.view, columns: [], dirty: nil, generation: 1)
        #expect(view.row(of: 10) == 10)
        view.reuse(firstKey: 0, keys: gapped.view)
        #expect(view.row(of: 10) == 5)
        #expect(view.row(of: 11) == nil)
        view.reuse(firstKey: 0, keys: consecutive.view)
        #expect(view.row(of: 11) == 11)
    }

    /// The view cache's branch-free search finds the view with the greatest first key at or
    /// below a key, and the view starting at a key, as a linear search does.
    @Test func viewCacheFindsTheGreatestFirstKeyAtOrBelow() {
        var random = SplitMix64(seed: 0xCAC4E)
        let chunk = KeyChunk([0])
        for size in [0, 1, 2, 3, 7, 8, 9, 100, 391] {
            var cache = ClusterViewCache()
            var firsts = Set<Int64>()
            while firsts.count < size { firsts.insert(Int64(random.next() % 100_000) * 2) }
            for first in firsts.shuffled(using: &random) {
                cache.insert(ClusterView(firstKey: first, keys: chunk.view, columns: [], dirty: nil, generation: 1))
            }
            let sorted = firsts.sorted()
            var probes: [Int64] = [.min, .max, -1, 0, 1, 200_001]
            for first in sorted { probes += [first - 1, first, first + 1] }
            for key in probes {
                #expect(cache.last(atOrBelow: key)?.firstKey == sorted.last(where: { $0 <= key }), "size \(size), key \(key)")
                #expect(cache.view(first: key)?.firstKey == (firsts.contains(key) ? key : nil))
            }
        }
    }
}
