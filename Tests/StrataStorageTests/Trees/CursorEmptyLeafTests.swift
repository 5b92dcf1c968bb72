import Testing
@testable import StrataStorage

/// Inside a write transaction, deletes take entries out of leaves without merging them (the
/// commit lays the tree out again), so a tree may hold empty leaves until then. A cursor, and
/// every read built on one, passes over them: reading a tree after deleting in the same
/// transaction sees every entry that is left.
@Suite("Cursor over a write transaction's empty leaves")
struct CursorEmptyLeafTests {
    static let count = 2_000

    static func key(_ i: Int) -> [UInt8] {
        let digits = String(i)
        return [UInt8]("key-" + String(repeating: "0", count: 5 - digits.count) + digits)
    }

    static func value(_ i: Int) -> [UInt8] { [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 100) }

    /// A file whose tree "kv" holds `count` entries over many leaves.
    static func filled(_ directory: TemporaryDirectory) throws -> StorageEngine {
        let engine = try StorageEngine.open(path: directory.file("leaves.strata"))
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for i in 0..<count { try txn.put(value(i), forKey: key(i), in: tree) }
        }
        return engine
    }

    /// The keys a forward (or reverse) walk from `start` finds.
    static func walk(_ txn: some TransactionReading, from start: [UInt8]? = nil, reverse: Bool = false) throws -> [[UInt8]] {
        guard let tree = try txn.tree(named: "kv") else { return [] }
        var keys: [[UInt8]] = []
        try txn.forEach(in: tree, from: start, reverse: reverse) { key, _ in keys.append([UInt8](key)); return true }
        return keys
    }

    @Test func walksSeeksAndEndsPassOverLeavesEmptiedEarlierInTheTransaction() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let engine = try Self.filled(directory)
        defer { engine.close() }
        // Whole leaves emptied at the start, in the middle and at the end of the tree.
        let deleted = Set(Array(0..<300) + Array(800..<1_200) + Array(1_700..<Self.count))
        let left = (0..<Self.count).filter { !deleted.contains($0) }.map(Self.key)
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for i in deleted.sorted() { #expect(try txn.delete(forKey: Self.key(i), in: tree)) }
            #expect(try Self.walk(txn) == left, "a forward walk after the deletes")
            #expect(try Self.walk(txn, reverse: true) == left.reversed(), "a reverse walk after the deletes")
            #expect(try Self.walk(txn, from: Self.key(900)).first == Self.key(1_200), "a seek into the emptied middle")
            #expect(try Self.walk(txn, from: Self.key(900), reverse: true).first == Self.key(799), "a reverse seek into it")
            #expect(try Self.walk(txn, from: Self.key(1_800)).isEmpty, "a seek past the last entry left")
            let cursor = try txn.makeCursor(on: tree)
            #expect(try cursor.first() && [UInt8](cursor.key) == Self.key(300))
            #expect(try cursor.last() && [UInt8](cursor.key) == Self.key(1_699))
            #expect(try cursor.seek(to: Self.key(0)) && [UInt8](cursor.key) == Self.key(300))
        }
        let committed = try engine.read { try Self.walk($0) }
        #expect(committed == left, "after the commit")
    }

    @Test func aTreeWhoseEveryLeafWasEmptiedReadsAsEmpty() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let engine = try Self.filled(directory)
        defer { engine.close() }
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for i in 0..<Self.count { try txn.delete(forKey: Self.key(i), in: tree) }
            let cursor = try txn.makeCursor(on: tree)
            #expect(try !cursor.first())
            #expect(try !cursor.last())
            #expect(try !cursor.seek(to: Self.key(1_000)))
            #expect(try Self.walk(txn).isEmpty)
            try txn.put(Self.value(7), forKey: Self.key(1_500), in: tree)
            #expect(try Self.walk(txn) == [Self.key(1_500)], "one entry put back among the empty leaves")
            #expect(try Self.walk(txn, reverse: true) == [Self.key(1_500)])
        }
    }

    /// Seeded deletes and puts in one transaction, checked against a set after each batch.
    @Test(arguments: [UInt64(51), 52, 53])
    func seededDeletesAndPutsReadBackAsTheModelInTheSameTransaction(seed: UInt64) throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let engine = try Self.filled(directory)
        defer { engine.close() }
        var generator = SplitMix64(seed: seed)
        var model = Set(0..<Self.count)
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for batch in 0..<20 {
                // Mostly runs of deletes (emptying leaves), some puts.
                let start = Int.random(in: 0..<Self.count, using: &generator)
                let length = Int.random(in: 1...150, using: &generator)
                for i in start..<min(start + length, Self.count) where model.remove(i) != nil {
                    try txn.delete(forKey: Self.key(i), in: tree)
                }
                for _ in 0..<Int.random(in: 0...5, using: &generator) {
                    let i = Int.random(in: 0..<Self.count, using: &generator)
                    model.insert(i)
                    try txn.put(Self.value(i), forKey: Self.key(i), in: tree)
                }
                let expected = model.sorted().map(Self.key)
                #expect(try Self.walk(txn) == expected, "seed \(seed), batch \(batch): forward")
                #expect(try Self.walk(txn, reverse: true) == expected.reversed(), "seed \(seed), batch \(batch): reverse")
                let probe = Int.random(in: 0..<Self.count, using: &generator)
                #expect(try Self.walk(txn, from: Self.key(probe)).first == model.sorted().first { $0 >= probe }.map(Self.key),
                        "seed \(seed), batch \(batch): seek to \(probe)")
            }
        }
        let committed = try engine.read { try Self.walk($0) }
        #expect(committed == model.sorted().map(Self.key), "seed \(seed): after the commit")
    }
}
