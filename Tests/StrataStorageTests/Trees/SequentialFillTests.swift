// Keys appended in order (object keys, ascending primary keys) must leave full leaf pages: an
// append split that kept every entry but the new one in the left node left two pages and one
// entry there, which the commit wrote as three pages, one holding a single entry (a third of
// the leaves of a sequentially filled tree).

import Testing
@testable import StrataStorage

@Suite struct SequentialFillTests {
    /// Entry counts of the tree's leaf pages, left to right.
    static func leafCounts(_ engine: StorageEngine, tree name: String) throws -> [Int] {
        try engine.read { transaction in
            let info = try Array(name.utf8).withUnsafeBytes { key -> TreeInfo in
                guard let bytes = try transaction.snapshot.get(root: transaction.snapshot.meta.catalogRoot, key: key) else {
                    throw StorageError.unknownTree(name)
                }
                return try TreeInfo.decode(bytes, name: name)
            }
            var counts: [Int] = []
            func walk(_ page: PageNumber) throws {
                let view = try transaction.snapshot.treePage(page)
                if view.isLeaf { counts.append(view.count); return }
                for i in 0..<view.count { try walk(view.branchChild(i)) }
            }
            try walk(info.root)
            return counts
        }
    }

    @Test(arguments: [1, 7, 40])
    func appendedKeysFillTheirLeaves(valueSize: Int) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let engine = try StorageEngine.open(path: directory.file("fill.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        let count = 20_000
        try engine.write { transaction in
            let tree = try transaction.createTree(named: "keys")
            for i in 0..<count {
                let key = [2] + withUnsafeBytes(of: UInt64(i).bigEndian) { [UInt8]($0) }
                try transaction.put([UInt8](repeating: UInt8(i & 0xFF), count: valueSize), forKey: key, in: tree)
            }
        }
        let counts = try Self.leafCounts(engine, tree: "keys")
        #expect(counts.reduce(0, +) == count)
        // Every leaf holds what fills a page (entries are all the same size), but the last two:
        // the node still being appended to at commit is shared evenly between its pages.
        let full = counts.max() ?? 0
        #expect(counts.dropLast(2).allSatisfy { $0 >= full - 1 }, "leaf entry counts: \(Dictionary(grouping: counts) { $0 }.mapValues(\.count))")
        #expect(counts.count <= (count + full - 1) / full + 1)
        #expect(try engine.verify().isHealthy)
    }
}
