import Foundation
import Testing
import StrataStorage
import StrataTestWorkloads
@testable import StrataStore

/// The schema stored in the file, damaged with valid page checksums (a crafted file, or one
/// edited with its checksums recomputed): opening must succeed or throw a `StoreError`, and
/// whatever opens must read and write without stopping the process.
@Suite struct SchemaFuzzTests {
    private static let rounds = 100 * (Int(ProcessInfo.processInfo.environment["STRATA_STRESS"] ?? "") ?? 1)

    @Test func damagedSchemasGiveErrorsNotCrashes() throws {
        var random = SplitMix64(seed: 0x5C4E)
        var outcomes: [String: Int] = [:]
        let folder = TemporaryFolder()
        try withPeople(folder.file()) { session, people in
            try session.beginWrite()
            for i in 0..<20 { _ = try people.insert([.int(Int64(i)), .string("p\(i)"), .int(Int64(i)), .null, .null, .null]) }
            _ = try session.commit()
        }
        // The database and its commit log, restored together before each round.
        let files = [folder.file(), StorageEngine.logPath(for: folder.file())]
        let pristine = try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let json: [UInt8] = try {
            let engine = try StorageEngine.open(path: folder.file(), options: StorageOptions())
            defer { engine.close() }
            return try engine.read { t in
                let tree = try #require(try t.tree(named: Store.schemaTree))
                return try #require(try t.value(forKey: Array("schema".utf8), in: tree))
            }
        }()
        for round in 0..<Self.rounds {
            for (file, bytes) in zip(files, pristine) { try bytes.write(to: URL(fileURLWithPath: file)) }
            let damaged = Self.damage(json, using: &random)
            do {
                let engine = try StorageEngine.open(path: folder.file(), options: StorageOptions())
                defer { engine.close() }
                try engine.write { t in
                    let tree = try #require(try t.tree(named: Store.schemaTree))
                    try t.put(damaged, forKey: Array("schema".utf8), in: tree)
                }
                try engine.checkpoint()
            }
            outcomes[Self.exercise(folder.file(), round: round), default: 0] += 1
        }
        print("damaged schemas: \(outcomes.sorted { $0.key < $1.key })")
        #expect(outcomes.values.reduce(0, +) == Self.rounds)
        #expect(outcomes["error", default: 0] > 0, "some damage should be reported")
    }

    private static func damage(_ json: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        var bytes = json
        let digits = Array("0123456789".utf8), letters = Array("abcdefghijklmnopqrstuvwxyzAP_".utf8)
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            guard !bytes.isEmpty else { break }
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0:  // another digit: ids, kinds
                if let d = bytes[at...].firstIndex(where: { digits.contains($0) }) { bytes[d] = digits.randomElement(using: &random)! }
            case 1:  // another letter: names, booleans
                if let l = bytes[at...].firstIndex(where: { letters.contains($0) }) { bytes[l] = letters.randomElement(using: &random)! }
            case 2:  // true and false swapped
                let text = String(decoding: bytes, as: UTF8.self)
                let swapped = Bool.random(using: &random) ? text.replacingOccurrences(of: "false", with: "true") : text.replacingOccurrences(of: "true", with: "false")
                bytes = Array(swapped.utf8)
            case 3:  // a property repeated: the first `{...}` object after `at`, copied next to itself
                if let open = bytes[at...].firstIndex(of: UInt8(ascii: "{")), let close = bytes[open...].firstIndex(of: UInt8(ascii: "}")) {
                    bytes.insert(contentsOf: Array(bytes[open...close]) + [UInt8(ascii: ",")], at: open)
                }
            case 4:  // a stretch cut out
                bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...12, using: &random)))
            default:  // a large number
                if let d = bytes[at...].firstIndex(where: { digits.contains($0) }) {
                    bytes.insert(contentsOf: Array(["99999", "4294967296", "65535", "9223372036854775807"].randomElement(using: &random)!.utf8), at: d)
                }
            }
        }
        return bytes
    }

    /// Opens with the schema the file was made with and without one, reads and writes;
    /// "error" when something threw a StoreError, "ok" otherwise.
    private static func exercise(_ path: String, round: Int) -> String {
        var failed = false
        func attempt(_ what: String, _ body: () throws -> Void) {
            do {
                try body()
            } catch is StoreError {
                failed = true
            } catch {
                Issue.record("round \(round), \(what): \(error) is not a StoreError")
            }
        }
        for requested in [personSchema, nil] as [Schema?] {
            attempt("open") {
                let store = try Store.open(path: path, schema: requested)
                defer { store.close() }
                let session = try store.makeSession()
                defer { session.close() }
                for name in store.schema.objectSchemas.map(\.name) {
                    guard let table = session.table(named: name) else { continue }
                    var keys: [ObjectKey] = []
                    attempt("keys") { keys = try table.allKeys() }
                    for key in keys.prefix(5) {
                        for (index, property) in table.schema.properties.enumerated() {
                            attempt("read") { _ = property.isList ? try table.list(key, property: index) : [try table.value(key, property: index)] }
                        }
                    }
                    attempt("write") {
                        try session.beginWrite()
                        defer { session.rollback() }
                        if let key = keys.first { attempt("delete") { try table.delete([key]) } }
                    }
                }
            }
        }
        return failed ? "error" : "ok"
    }
}
