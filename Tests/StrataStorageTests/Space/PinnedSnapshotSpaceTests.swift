// Space and correctness under long-lived snapshots, at the engine level: a pinned version costs
// the file at most its own pages (pages born and freed after it are reused while it is held),
// and reusing those pages never touches a page any pinned reader can reach.

import Foundation
import Testing
@testable import StrataStorage

@Suite("Pinned snapshot space")
struct PinnedSnapshotSpaceTests {
    private static func key(_ i: Int) -> [UInt8] { Array(String(format: "key-%011d", i).utf8) }

    /// Runs `commits` seeded one-operation commits over a working set (40 % inserts, 30 %
    /// updates, 30 % deletes; values up to `valueMax` bytes, some in overflow runs) with a
    /// reader holding the starting version when `pinned`. Returns the file's pages at the start
    /// and at the end.
    private func run(pinned: Bool, durability: Durability, commits: Int, valueMax: Int) throws -> (start: UInt64, end: UInt64) {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("pinned.strata"), options: StorageOptions(durability: durability))
        defer { engine.close() }
        var rng = SplitMix64(seed: 11)
        var live: [Int] = []
        var next = 0
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            for _ in 0..<1000 {
                try txn.put([UInt8](repeating: 1, count: 100), forKey: Self.key(next), in: tree)
                live.append(next)
                next += 1
            }
        }
        let start = try engine.verify().pageCount
        let held = pinned ? try engine.beginRead() : nil
        for _ in 0..<commits {
            try engine.write { txn in
                let tree = try txn.createTree(named: "t")
                let op = rng.next() % 10
                let length = 10 + Int(rng.next() % UInt64(valueMax))
                if op < 4 || live.isEmpty {
                    try txn.put([UInt8](repeating: 2, count: length), forKey: Self.key(next), in: tree)
                    live.append(next)
                    next += 1
                } else if op < 7 {
                    try txn.put([UInt8](repeating: 3, count: length), forKey: Self.key(live[Int(rng.next() % UInt64(live.count))]), in: tree)
                } else {
                    let at = Int(rng.next() % UInt64(live.count))
                    _ = try txn.delete(forKey: Self.key(live[at]), in: tree)
                    live.swapAt(at, live.count - 1)
                    live.removeLast()
                }
            }
        }
        let report = try engine.verify()
        #expect(report.isHealthy, "\(report)")
        if let held {
            let contents = try StrataStorageTests.contents(of: "t", in: held)
            #expect(contents.count == 1000 && contents.values.allSatisfy { $0 == [UInt8](repeating: 1, count: 100) })
            held.close()
        }
        return (start, report.pageCount)
    }

    /// A reader held across 3,000 commits that insert, update and delete costs the file no
    /// more than the pages of its version (the store at the start) over the same commits made
    /// without it, with and without overflow values, in both durability modes.
    @Test(arguments: [(Durability.full, 200), (.full, 6000), (.none, 200)])
    func aPinnedVersionCostsAtMostItsOwnPages(durability: Durability, valueMax: Int) throws {
        let free = try run(pinned: false, durability: durability, commits: 3000, valueMax: valueMax)
        let held = try run(pinned: true, durability: durability, commits: 3000, valueMax: valueMax)
        let bound = free.end + held.start + 16
        #expect(held.end <= bound, "held: \(held), without: \(free); bound \(bound)")
    }

    /// Readers opened and closed at random versions across 2,000 commits, up to five at once:
    /// every one reads exactly its version (every page checksummed, contents equal to the model
    /// of that version) for as long as it is held, while the pages born and freed between the
    /// pins are reused. A page reused while some pin could still reach it would show here.
    @Test(arguments: [(Durability.none, UInt64(1)), (.full, 2), (.none, 3)])
    func randomPinsReadExactlyTheirVersionAcrossCommits(durability: Durability, seed: UInt64) throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("pins.strata"), options: StorageOptions(durability: durability))
        defer { engine.close() }
        var rng = SplitMix64(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        var pins: [(reader: ReadTransaction, model: [[UInt8]: [UInt8]])] = []
        func check(_ pin: (reader: ReadTransaction, model: [[UInt8]: [UInt8]])) throws {
            #expect(try StrataStorageTests.contents(of: "t", in: pin.reader) == pin.model, "the reader at version \(pin.reader.version)")
        }
        var largest: UInt64 = 0
        for commit in 0..<2000 {
            try engine.write { txn in
                let tree = try txn.createTree(named: "t")
                for _ in 0..<(1 + Int(rng.next() % 4)) {
                    let key = Self.key(Int(rng.next() % 600))
                    if rng.next() % 4 == 0 {
                        _ = try txn.delete(forKey: key, in: tree)
                        model[key] = nil
                    } else {
                        let roll = rng.next() % 50
                        let length = roll == 0 ? 5000 + Int(rng.next() % 9000) : Int(rng.next() % 200)
                        let byte = UInt8(truncatingIfNeeded: rng.next())
                        let value = (0..<length).map { byte &+ UInt8(truncatingIfNeeded: $0) }
                        try txn.put(value, forKey: key, in: tree)
                        model[key] = value
                    }
                }
            }
            // Open a pin now and then (at most five), close a random one now and then.
            if pins.count < 5 && rng.next() % 40 == 0 { pins.append((try engine.beginRead(), model)) }
            if !pins.isEmpty && rng.next() % 60 == 0 {
                let pin = pins.remove(at: Int(rng.next() % UInt64(pins.count)))
                try check(pin)
                pin.reader.close()
            }
            if commit % 50 == 49 {
                for pin in pins { try check(pin) }
                largest = max(largest, UInt64(pins.count))
            }
        }
        for pin in pins {
            try check(pin)
            pin.reader.close()
        }
        #expect(largest >= 2, "the run held several pins at once")
        let report = try engine.verify()
        #expect(report.isHealthy, "\(report)")
        #expect(try engine.read { try StrataStorageTests.contents(of: "t", in: $0) } == model)
    }
}
