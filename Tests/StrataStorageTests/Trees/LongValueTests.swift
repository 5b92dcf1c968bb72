import Foundation
import Testing
@testable import StrataStorage

/// Values too long to sit in a leaf are laid out by `put` straight in their overflow run's page
/// image, which the commit seals in place. Sizes around the inline limit and across page
/// boundaries, replaced and deleted in the same transaction and in the next, must read back the
/// same after a reopen, with every page's checksum and the free space in order.
@Suite struct LongValueTests {
    @Test func valuesAroundTheInlineLimitAndPageBoundariesReadBack() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let path = dir.file("db.strata")
        var rng = SplitMix64(seed: 3)
        var model: [[UInt8]: [UInt8]] = [:]
        func value(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        do {
            let engine = try StorageEngine.open(path: path)
            defer { engine.close() }
            let page = engine.pageSize
            let sizes = [0, 1, page / 4 - 40, page / 4 - 20, page / 4, page / 2, page - 32, page - 31, page, 3 * page + 7, 70_000]
            try engine.write { txn in
                let tree = try txn.createTree(named: "t")
                for (i, size) in sizes.enumerated() {
                    let key = [UInt8]("k\(i)")
                    model[key] = value(size)
                    try txn.put(model[key]!, forKey: key, in: tree)
                }
                // Replaced (long by long, long by short) and deleted before the commit.
                model[[UInt8]("k5")] = value(page + 100)
                try txn.put(model[[UInt8]("k5")]!, forKey: [UInt8]("k5"), in: tree)
                model[[UInt8]("k9")] = value(3)
                try txn.put(model[[UInt8]("k9")]!, forKey: [UInt8]("k9"), in: tree)
                #expect(try txn.delete(forKey: [UInt8]("k8"), in: tree))
                model[[UInt8]("k8")] = nil
                #expect(try contents(of: "t", in: txn) == model)
            }
            try engine.write { txn in
                let tree = try #require(try txn.tree(named: "t"))
                model[[UInt8]("k10")] = value(2 * page)
                try txn.put(model[[UInt8]("k10")]!, forKey: [UInt8]("k10"), in: tree)
                #expect(try txn.delete(forKey: [UInt8]("k7"), in: tree))
                model[[UInt8]("k7")] = nil
            }
        }
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        let stored = try engine.read { txn in try contents(of: "t", in: txn) }
        #expect(stored == model)
        #expect(try engine.verify().isHealthy)
    }
}
