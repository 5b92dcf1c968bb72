import Foundation
import Testing
@testable import StrataStorage

@Suite("Bounded space")
struct BoundedSpaceTests {
    /// A snapshot held from the start while 10,000 commits rewrite the same 1,000 keys: the
    /// snapshot pins only the pages it can reach, so the file stays within a small constant of
    /// (pinned pages + one version's pages), instead of growing with the number of commits.
    @Test func heldSnapshotDoesNotMakeTheFileGrowWithoutBound() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        // Full durability: the default, whose small commits chain records (MetaPage.swift).
        let engine = try StorageEngine.open(path: dir.file("space.strata"))
        defer { engine.close() }
        let keys = (0..<1000).map { Array(String(format: "key-%011d", $0).utf8) }  // 16 bytes
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            for key in keys { try txn.put([UInt8](repeating: 0, count: 100), forKey: key, in: tree) }
        }
        let initial = try engine.verify()
        let held = try engine.beginRead()
        var rng = SplitMix64(seed: 7)
        for round in 0..<10_000 {
            try engine.write { txn in
                let tree = try txn.createTree(named: "t")
                try txn.put([UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 100), forKey: keys[Int(rng.next() % 1000)], in: tree)
            }
        }
        let after = try engine.verify()
        #expect(after.isHealthy, "\(after)")
        // Bound: the pinned version (initial tree pages) + the current version's tree pages
        // + a small working set for the last commits. Stated: at most 2 × initial + 64 pages.
        let bound = 2 * initial.pageCount + 64
        #expect(after.pageCount <= bound, "file grew to \(after.pageCount) pages (bound \(bound)); started at \(initial.pageCount)")
        // The held snapshot still reads its version exactly.
        let tree = try #require(try held.tree(named: "t"))
        #expect(try held.value(forKey: keys[500], in: tree) == [UInt8](repeating: 0, count: 100))
        held.close()
        // Once released, its pages are reused: more commits do not grow the file.
        for round in 0..<200 {
            try engine.write { txn in
                try txn.put([UInt8(round % 256)], forKey: keys[round], in: try txn.createTree(named: "t"))
            }
        }
        // The commit log's generation base pins one version too (CommitLog.swift) until the
        // next checkpoint; after one, the next write begins with only readers' pins.
        try engine.checkpoint()
        try engine.write { txn in try txn.put([1], forKey: keys[0], in: try txn.createTree(named: "t")) }
        let released = try engine.verify()
        #expect(released.pageCount <= after.pageCount)
        #expect(released.pendingPages < initial.treePages, "pages pinned only by the released snapshot became reusable")
    }

    /// Pages whose whole life falls between two open snapshots are reused even while both
    /// snapshots stay open.
    @Test func pagesBornAndFreedBetweenSnapshotsAreReused() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("space.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            for i in 0..<500 { try txn.put([UInt8](repeating: 1, count: 100), forKey: Array(String(format: "%06d", i).utf8), in: tree) }
        }
        let old = try engine.beginRead()
        for i in 0..<50 {
            try engine.write { txn in try txn.put([2], forKey: Array(String(format: "%06d", i).utf8), in: try txn.createTree(named: "t")) }
        }
        let recent = try engine.beginRead()
        let before = try engine.verify().pageCount
        for round in 0..<2000 {
            try engine.write { txn in
                try txn.put([UInt8(round % 256)], forKey: Array(String(format: "%06d", round % 500).utf8), in: try txn.createTree(named: "t"))
            }
        }
        let after = try engine.verify()
        #expect(after.isHealthy, "\(after)")
        #expect(after.pageCount <= before + 64, "grew from \(before) to \(after.pageCount) pages with two snapshots held")
        old.close()
        recent.close()
    }
}
