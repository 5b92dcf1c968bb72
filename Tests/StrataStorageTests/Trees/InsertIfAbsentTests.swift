import Foundation
import Testing
@testable import StrataStorage

/// `insertIfAbsent` and the last-key-first searches of in-memory nodes, against a dictionary
/// model, for keys arriving ascending (the bulk-insert case the searches favour), descending and
/// in random order, across splits and a reopen.
@Suite("Insert if absent")
struct InsertIfAbsentTests {
    private static func key(_ n: UInt64) -> [UInt8] {
        // A tag byte and a big-endian integer, like a primary-key index entry.
        [1] + withUnsafeBytes(of: n.bigEndian) { Array($0) }
    }

    @Test(arguments: ["ascending", "descending", "random"])
    func matchesAModel(order: String) throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let path = dir.file("db.strata")
        var numbers = Array(UInt64(0)..<3_000).map { $0 * 3 }
        var rng = SplitMix64(seed: 7)
        switch order {
        case "descending": numbers.reverse()
        case "random": numbers.shuffle(using: &rng)
        default: break
        }
        var model: [[UInt8]: [UInt8]] = [:]
        do {
            let engine = try StorageEngine.open(path: path)
            defer { engine.close() }
            try engine.write { txn in
                let tree = try txn.createTree(named: "pk")
                for (i, n) in numbers.enumerated() {
                    let value = Array(repeating: UInt8(i & 0xFF), count: 8)
                    let inserted = try value.withUnsafeBytes { v in
                        try Self.key(n).withUnsafeBytes { k in try txn.insertIfAbsent(v, forKey: k, in: tree) }
                    }
                    #expect(inserted)
                    model[Self.key(n)] = value
                    // Every so often, a key already present is refused and keeps its value.
                    if i % 97 == 0 {
                        let again = try [UInt8](repeating: 0xEE, count: 8).withUnsafeBytes { v in
                            try Self.key(n).withUnsafeBytes { k in try txn.insertIfAbsent(v, forKey: k, in: tree) }
                        }
                        #expect(!again)
                    }
                    // A put of a key between existing ones still lands in order.
                    if i % 211 == 0 {
                        try txn.put([9], forKey: Self.key(n + 1), in: tree)
                        model[Self.key(n + 1)] = [9]
                    }
                }
                #expect(try contents(of: "pk", in: txn) == model)
                #expect(try txn.count(in: tree) == model.count)
            }
        }
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        try engine.read { txn in
            #expect(try contents(of: "pk", in: txn) == model)
            var previous: [UInt8]?
            let tree = try #require(try txn.tree(named: "pk"))
            try txn.forEach(in: tree) { key, _ in
                let key = [UInt8](key)
                if let previous { #expect(previous.lexicographicallyPrecedes(key)) }
                previous = key
                return true
            }
        }
        #expect(try engine.verify().isHealthy)
    }

    @Test func rejectsBadKeysLikePut() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"))
        defer { engine.close() }
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            #expect(throws: StorageError.self) {
                try [UInt8]().withUnsafeBytes { k in try [UInt8]([1]).withUnsafeBytes { v in _ = try txn.insertIfAbsent(v, forKey: k, in: tree) } }
            }
            #expect(try txn.count(in: tree) == 0)
        }
    }
}
