import Foundation
import Testing
import StrataStorage
import StrataTestWorkloads
@testable import StrataStore

/// Checksums catch damaged pages, not well-formed pages whose chunks say the wrong thing (a
/// crafted file, or one edited with its checksums recomputed). This writes damaged chunk
/// values through the engine, so every page checksum is valid, and runs every read and write
/// path over them: each must succeed or throw a `StoreError`, never stop the process.
@Suite struct ChunkFuzzTests {
    private static let rounds = 120 * (Int(ProcessInfo.processInfo.environment["STRATA_STRESS"] ?? "") ?? 1)

    @Test func damagedChunksGiveErrorsNotCrashes() throws {
        var random = SplitMix64(seed: 0xF022)
        var outcomes: [String: Int] = [:]
        for round in 0..<Self.rounds {
            let folder = TemporaryFolder()
            var trees: [String] = []
            do {
                let store = try Store.open(path: folder.file(), schema: personSchema)
                let session = try store.makeSession()
                let people = session.table(named: "Person")!
                try session.beginWrite()
                let count = Int.random(in: 1...300, using: &random)
                var keys: [ObjectKey] = []
                for i in 0..<count {
                    let name: StoreValue = i % 7 == 0 ? .string("") : .string(String(repeating: "né", count: i % 13))
                    let friend: StoreValue = keys.isEmpty || i % 3 == 0 ? .null : .link(keys[i % keys.count])
                    keys.append(try people.insert([.int(Int64(i)), name, .int(Int64(i % 50)), i % 4 == 0 ? .null : .double(Double(i)), friend, .null]))
                    if i % 5 == 0 { try people.setList((0..<(i % 9)).map { .string("t\($0)") }, for: keys[i], property: 5) }
                }
                _ = try session.commit()
                trees = [people.clusterTreeName, people.listTreeName, people.primaryKeyTreeName] + people.indexTreeNames.values.sorted()
                session.close()
                store.close()
            }
            let damage = try Self.damage(folder.file(), trees: trees, using: &random)
            outcomes[Self.exercise(folder.file(), round: round, damage: damage), default: 0] += 1
        }
        print("damaged chunks: \(outcomes.sorted { $0.key < $1.key })")
        #expect(outcomes.values.reduce(0, +) == Self.rounds)
        #expect(outcomes["corrupted", default: 0] > 0, "some damage should be reported")
    }

    /// Replaces one value of one of `trees` with a damaged copy; returns what was done.
    private static func damage(_ path: String, trees: [String], using random: inout SplitMix64) throws -> String {
        let engine = try StorageEngine.open(path: path, options: StorageOptions())
        defer { engine.close() }
        return try engine.write { t -> String in
            // Half the time the cluster tree (one chunk per property per cluster), otherwise the
            // lists or an index.
            var entries: [([UInt8], [UInt8])] = []
            let name = Bool.random(using: &random) ? trees[0] : trees[Int.random(in: 1..<trees.count, using: &random)]
            do {
                guard let tree = try t.tree(named: name) else { return "nothing" }
                let cursor = try t.makeCursor(on: tree)
                var positioned = try cursor.first()
                while positioned {
                    entries.append((Array(cursor.key), Array(cursor.value)))
                    positioned = try cursor.next()
                }
            }
            guard !entries.isEmpty else { return "nothing" }
            let (key, original) = entries[Int.random(in: 0..<entries.count, using: &random)]
            var value = original
            let kind = min(Int.random(in: 0..<8, using: &random), 6)
            switch kind {
            case 0:  // a few bytes flipped
                for _ in 0..<Int.random(in: 1...4, using: &random) where !value.isEmpty {
                    value[Int.random(in: 0..<value.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                }
            case 1:  // cut short
                value = Array(value.prefix(Int.random(in: 0..<max(1, value.count), using: &random)))
            case 2:  // a count that lies
                let counts: [UInt32] = [0, 1, 255, 256, 257, 1000, 65_535, 0x7FFF_FFFF, 0xFFFF_FFFF]
                if value.count >= 4 { withUnsafeBytes(of: counts.randomElement(using: &random)!.littleEndian) { value.replaceSubrange(0..<4, with: $0) } }
            case 3:  // another format or width
                if value.count >= 6 {
                    value[4] = [0, 1, 2, 3, 255].randomElement(using: &random)!
                    value[5] = [0, 1, 2, 4, 8, 16, 255].randomElement(using: &random)!
                }
            case 4:  // a variable chunk's entry pointing elsewhere
                if value.count >= 16 {
                    let at = 8 + 8 * Int.random(in: 0..<max(1, (value.count - 8) / 8), using: &random)
                    if at + 8 <= value.count {
                        withUnsafeBytes(of: UInt32.random(in: 0...UInt32.max, using: &random).littleEndian) { value.replaceSubrange(at..<at + 4, with: $0) }
                        withUnsafeBytes(of: UInt32.random(in: 0...200, using: &random).littleEndian) { value.replaceSubrange(at + 4..<at + 8, with: $0) }
                    }
                }
            case 5:  // doubled
                value += value
            default:  // well formed but longer: a fixed-width chunk without nulls given more rows
                if value.count >= 8, value[4] == ChunkFormat.fixed, value[6] == 0, value[5] > 0 {
                    let width = Int(value[5])
                    let count = Int(value.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
                    let extra = Int.random(in: 1...300, using: &random)
                    let last = Array(value.suffix(width))
                    for _ in 0..<extra { value += last }
                    withUnsafeBytes(of: UInt32(count + extra).littleEndian) { value.replaceSubrange(0..<4, with: $0) }
                }
            }
            // Outside the cluster tree, keys carry data too (an index's value, a list's owner):
            // half the time the damaged value goes in under a damaged key, as an extra entry.
            var target = key
            if name != trees[0] && !target.isEmpty && Bool.random(using: &random) {
                target[Int.random(in: 0..<target.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            }
            guard let tree = try t.tree(named: name) else { return "nothing" }
            try t.put(value, forKey: target, in: tree)
            return "\(name), kind \(kind)"
        }
    }

    /// Runs every path over the damaged file; "corrupted" when at least one reported the damage,
    /// "ok" otherwise. An error that is not a `StoreError` is recorded as an issue.
    private static func exercise(_ path: String, round: Int, damage: String) -> String {
        var reported = false
        func attempt(_ what: String, _ body: () throws -> Void) {
            do {
                try body()
            } catch let error as StoreError {
                // Damage is usually reported as such; a damaged key chunk can also make an
                // object its cluster lists impossible to find (`.objectNotFound`), which is
                // typed too.
                if case .corrupted = error { reported = true }
            } catch {
                Issue.record("round \(round) (\(damage)), \(what): \(error) is not a StoreError")
            }
        }
        attempt("open") {
            let store = try Store.open(path: path, schema: personSchema)
            defer { store.close() }
            let session = try store.makeSession()
            defer { session.close() }
            let people = session.table(named: "Person")!
            var keys: [ObjectKey] = []
            attempt("allKeys") { keys = try people.allKeys() }
            for key in keys.prefix(40) {
                for property in 0..<5 { attempt("value") { _ = try people.value(key, property: property) } }
                attempt("list") { _ = try people.list(key, property: 5) }
            }
            attempt("find") { _ = try people.find(primaryKey: .int(3)) }
            for predicate in ["age > 4", "age >= 0 AND name BEGINSWITH 'n'", "score > 1.5 OR friend == nil", "name == 'né'"] {
                attempt("query") {
                    let query = try TableQuery(table: people, predicate: try PredicateParser.parse(predicate, arguments: []))
                    _ = try query.count()
                }
            }
            attempt("write") {
                try session.beginWrite()
                defer { session.rollback() }
                attempt("insert") { _ = try people.insert([.int(10_000), .string("x"), .int(1), .null, .null, .null]) }
                if let key = keys.first {
                    attempt("update") { try people.set(.int(9), for: key, property: 2) }
                    attempt("set list") { try people.setList([.string("a")], for: key, property: 5) }
                    attempt("delete") { try people.delete([key]) }
                }
                if keys.count > 1 { attempt("delete last") { try people.delete([keys[keys.count - 1]]) } }
            }
        }
        return reported ? "corrupted" : "ok"
    }
}
