import Foundation
@_exported import StrataTestWorkloads
import Testing
import StrataStorage
@testable import StrataStore

/// A fresh folder under the system's temporary directory, removed when released.
final class TemporaryFolder {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "strata-store-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String = "db.strata") -> String { path + "/" + name }
}

/// The schema most store tests use.
let personSchema = Schema([
    ObjectSchema(name: "Person", properties: [
        PropertySchema(name: "id", kind: .int, isPrimaryKey: true),
        PropertySchema(name: "name", kind: .string, isIndexed: true),
        PropertySchema(name: "age", kind: .int),
        PropertySchema(name: "score", kind: .double, isOptional: true),
        PropertySchema(name: "friend", kind: .link, isOptional: true, objectType: "Person"),
        PropertySchema(name: "tags", kind: .string, isList: true),
    ]),
])

// MARK: Damage with valid checksums

/// A key chunk of `rows` consecutive keys from `first` (a fixed-width chunk: the count, the
/// format, width 8, no nulls, then the keys), as a crafted file would hold it.
func keyChunk(first: Int64, rows: Int) -> [UInt8] {
    var chunk: [UInt8] = [UInt8(rows & 0xFF), UInt8((rows >> 8) & 0xFF), 0, 0, ChunkFormat.fixed, 8, 0, 0]
    for k in 0..<rows { withUnsafeBytes(of: (first + Int64(k)).littleEndian) { chunk += $0 } }
    return chunk
}

/// Changes the chunk of `column` in the first cluster of the cluster tree `tree` through the
/// engine, so every page checksum stays valid; `change` gets the cluster's first key.
func rewriteFirstClusterChunk(_ path: String, tree name: String, column: UInt16,
                              _ change: (_ first: Int64, _ chunk: inout [UInt8]) throws -> Void) throws {
    let engine = try StorageEngine.open(path: path, options: StorageOptions())
    defer { engine.close() }
    try engine.write { t in
        let tree = try #require(try t.tree(named: name))
        let cursor = try t.makeCursor(on: tree)
        #expect(try cursor.first())
        let first = Int64(bitPattern: TreeKey.readU64(cursor.key))
        let key = TreeKey.cluster(first, column: column)
        var value = try key.withUnsafeBytes { k in try t.withValue(forKey: k, in: tree) { $0.map { Array($0) } } } ?? []
        try change(first, &value)
        try t.put(value, forKey: key, in: tree)
    }
}

/// Opens the `personSchema` store at `path`, runs `body` with a session and its `Person`
/// table, and closes both.
func withPeople<R>(_ path: String, _ body: (StoreSession, TableAccess) throws -> R) throws -> R {
    let store = try Store.open(path: path, schema: personSchema)
    defer { store.close() }
    let session = try store.makeSession()
    defer { session.close() }
    return try body(session, try #require(session.table(named: "Person")))
}
