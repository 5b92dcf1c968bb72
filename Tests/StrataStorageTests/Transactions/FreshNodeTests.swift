// A commit recycles the nodes it wrote (`Arena.recycle`) for the next transactions'
// `materialize`: a recycled node must come back empty, whatever tree, kind or size it had, and
// savepoints rolled back before a commit must not leave stale entries in one.

import Testing
@testable import StrataStorage

@Suite struct FreshNodeTests {
    static func key(_ tree: Int, _ i: Int) -> [UInt8] {
        [UInt8(tree)] + withUnsafeBytes(of: UInt64(i &* 2_654_435_761 % 1_000_003).bigEndian) { [UInt8]($0) }
    }

    @Test func recycledNodesCarryNothingIntoLaterTransactions() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let engine = try StorageEngine.open(path: directory.file("recycle.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        // Three trees of different sizes (one leaf; a branch and leaves; values of several
        // lengths, some in overflow runs), filled, then changed one key at a time so that each
        // commit materialises a path whose nodes an earlier commit of another tree recycled.
        var model: [Int: [[UInt8]: [UInt8]]] = [0: [:], 1: [:], 2: [:]]
        let sizes = [5, 3_000, 400]
        try engine.write { transaction in
            for t in 0..<3 {
                let tree = try transaction.createTree(named: "t\(t)")
                for i in 0..<sizes[t] {
                    let value = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: t == 2 ? 50 + i % 3_000 : 8)
                    try transaction.put(value, forKey: Self.key(t, i), in: tree)
                    model[t]![Self.key(t, i)] = value
                }
            }
        }
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        for round in 0..<300 {
            let t = round % 3
            try engine.write { transaction in
                guard let tree = try transaction.tree(named: "t\(t)") else { throw StorageError.unknownTree("t\(t)") }
                let i = next(sizes[t] + 20)
                let k = Self.key(t, i)
                if next(4) == 0, model[t]![k] != nil {
                    try transaction.delete(forKey: k, in: tree)
                    model[t]![k] = nil
                } else {
                    let value = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 1 + next(t == 2 ? 6_000 : 40))
                    try transaction.put(value, forKey: k, in: tree)
                    model[t]![k] = value
                }
                // Now and then a put rolled back by a savepoint before the commit.
                if next(3) == 0 {
                    let savepoint = try transaction.savepoint()
                    try transaction.put([1, 2, 3], forKey: Self.key(t, sizes[t] + 100 + round), in: tree)
                    try transaction.rollback(to: savepoint)
                }
            }
        }
        try engine.read { transaction in
            for t in 0..<3 {
                guard let tree = try transaction.tree(named: "t\(t)") else { throw StorageError.unknownTree("t\(t)") }
                var seen: [[UInt8]: [UInt8]] = [:]
                try transaction.forEach(in: tree) { key, value in
                    seen[Array(key)] = Array(value)
                    return true
                }
                #expect(seen == model[t]!)
                #expect(try transaction.count(in: tree) == model[t]!.count)
            }
        }
    }
}
