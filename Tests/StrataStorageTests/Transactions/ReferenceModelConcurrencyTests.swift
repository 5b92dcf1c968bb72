import Foundation
import Synchronization
import Testing
@testable import StrataStorage

/// Model-based randomized tests: random puts, deletes and range reads across concurrent
/// snapshots and commits, every read checked against an in-memory model of the version it reads.
@Suite("Model-based concurrency")
struct ReferenceModelConcurrencyTests {
    /// The committed versions' contents, by version, shared between the writer and readers.
    final class Versions: Sendable {
        // A pthread-based lock: the thread sanitizer does not see Synchronization.Mutex's
        // ordering and reported false races here.
        let models = Locked<[UInt64: [String: [[UInt8]: [UInt8]]]]>([:])
        func record(_ version: UInt64, _ model: [String: [[UInt8]: [UInt8]]]) { models.withLock { $0[version] = model } }
        func model(_ version: UInt64) -> [String: [[UInt8]: [UInt8]]]? { models.withLock { $0[version] } }
    }

    static func randomKey(_ rng: inout SplitMix64) -> [UInt8] {
        // Short keys from a small space so puts overwrite and deletes hit.
        let n = Int(rng.next() % 3000)
        return Array(String(format: "k%05d", n).utf8) + (n % 7 == 0 ? [UInt8](repeating: UInt8(n % 251), count: Int(n % 40)) : [])
    }

    static func randomValue(_ rng: inout SplitMix64) -> [UInt8] {
        let roll = rng.next() % 100
        let length = roll < 2 ? Int(rng.next() % 20_000) : roll < 10 ? 0 : Int(rng.next() % 300)
        let byte = UInt8(truncatingIfNeeded: rng.next())
        return (0..<length).map { byte &+ UInt8(truncatingIfNeeded: $0) }
    }

    @Test(arguments: [1, 2, 3])
    func concurrentReadersSeeExactlyTheirVersion(seed: UInt64) async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("model.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        let versions = Versions()
        versions.record(0, [:])
        let commits = ProcessInfo.processInfo.environment["STRATA_STRESS"] != nil ? 1500 : 250
        let trees = ["a", "b", "c"]

        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                var rng = SplitMix64(seed: seed)
                var model: [String: [[UInt8]: [UInt8]]] = [:]
                for _ in 0..<commits {
                    let transaction = try await engine.beginWrite()
                    let operations = 1 + Int(rng.next() % (rng.next() % 10 == 0 ? 400 : 12))
                    for _ in 0..<operations {
                        let name = trees[Int(rng.next() % 3)]
                        let tree = try transaction.createTree(named: name)
                        if model[name] == nil { model[name] = [:] }
                        let key = Self.randomKey(&rng)
                        switch rng.next() % 10 {
                        case 0..<6:
                            let value = Self.randomValue(&rng)
                            try transaction.put(value, forKey: key, in: tree)
                            model[name]![key] = value
                        case 6..<9:
                            let existed = try transaction.delete(forKey: key, in: tree)
                            #expect(existed == (model[name]![key] != nil))
                            model[name]![key] = nil
                        default:
                            // Read-your-writes inside the transaction.
                            #expect(try transaction.value(forKey: key, in: tree) == model[name]![key])
                        }
                    }
                    if rng.next() % 50 == 0 {
                        let name = trees[Int(rng.next() % 3)]
                        if try transaction.dropTree(named: name) { model[name] = nil }
                    }
                    if rng.next() % 20 == 0 {
                        transaction.rollback()
                        model = versions.model(engine.latestVersion)!
                        continue
                    }
                    try transaction.commit()
                    versions.record(engine.latestVersion, model)
                }
                return commits
            }
            for reader in 0..<3 {
                group.addTask {
                    var rng = SplitMix64(seed: seed &* 1000 &+ UInt64(reader))
                    var checked = 0
                    while engine.latestVersion < UInt64(commits / 2) || checked < 40 {
                        let transaction = try engine.beginRead()
                        guard let model = versions.model(transaction.version) else { transaction.close(); continue }
                        // Hold the snapshot across several writer commits, reading all the while.
                        for _ in 0..<(1 + Int(rng.next() % 6)) {
                            let name = trees[Int(rng.next() % 3)]
                            let expected = model[name]
                            let tree = try transaction.tree(named: name)
                            #expect((tree == nil) == (expected == nil))
                            guard let tree, let expected else { continue }
                            #expect(try transaction.count(in: tree) == expected.count)
                            let key = Self.randomKey(&rng)
                            #expect(try transaction.value(forKey: key, in: tree) == expected[key])
                            // A bounded range read, forwards or backwards, against the model.
                            let low = Self.randomKey(&rng)
                            let reverse = rng.next() % 2 == 0
                            var seen: [[UInt8]] = []
                            try transaction.forEach(in: tree, from: low, reverse: reverse) { key, value in
                                seen.append([UInt8](key))
                                #expect(expected[[UInt8](key)] == [UInt8](value))
                                return seen.count < 50
                            }
                            let sorted = expected.keys.sorted { $0.lexicographicallyPrecedes($1) }
                            let want = reverse
                                ? Array(sorted.filter { !low.lexicographicallyPrecedes($0) }.reversed().prefix(50))
                                : Array(sorted.filter { !$0.lexicographicallyPrecedes(low) }.prefix(50))
                            #expect(seen == want)
                            await Task.yield()
                        }
                        transaction.close()
                        checked += 1
                    }
                    return checked
                }
            }
            var total = 0
            for try await n in group { total += n }
            #expect(total > commits)
        }
        let report = try engine.verify()
        #expect(report.isHealthy, "\(report)")
        // The final file holds exactly the last model.
        let last = versions.model(engine.latestVersion)!
        try engine.read { txn in
            for name in trees {
                let actual = try contents(of: name, in: txn)
                #expect(actual == (last[name] ?? [:]))
            }
        }
    }
}
