// Databases made to be damaged: a seeded population of `DamagedRecord`s (with an index, a list,
// links and embedded notes), the pages of each of its trees, and byte flips in chosen pages.
// Shared by DamagedFileTests, SalvageTests and CLITests.

import Foundation
import Strata
import StrataStorage
import Testing

/// The model of the damage tests (StrataMisuseChild declares the same schema).
final class DamagedRecord: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var tag = ""
    @Persisted var payload = ""
    @Persisted var scores: List<Int>
    @Persisted var friend: DamagedRecord?
    @Persisted var note: DamagedNote?
}

final class DamagedNote: EmbeddedObject {
    @Persisted var text = ""
}

enum DamageLab {
    /// One record as it was written.
    struct Expected: Equatable {
        var tag: String
        var payload: String
        var scores: [Int]
        var friend: Int?
        var note: String?
    }

    /// A small deterministic generator (a 64-bit LCG).
    struct Generator {
        var state: UInt64
        init(seed: UInt64) { state = seed &* 6364136223846793005 &+ 1442695040888963407 }
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static func configuration(_ folder: TemporaryFolder, _ name: String = "damaged.strata") -> Database.Configuration {
        folder.configuration(name, objectTypes: [DamagedRecord.self, DamagedNote.self])
    }

    /// Writes `count` seeded records (ids 0..<count) and checkpoints, so that the database
    /// file alone holds them; returns what was written, by id.
    @discardableResult
    static func populate(_ configuration: Database.Configuration, count: Int, seed: UInt64 = 29) throws -> [Int: Expected] {
        var generator = Generator(seed: seed)
        var expected: [Int: Expected] = [:]
        for id in 0..<count {
            let letter = Character(UnicodeScalar(UInt8(97 + generator.next(26))))
            expected[id] = Expected(tag: "t\(generator.next(7))",
                                    payload: String(repeating: letter, count: 20 + generator.next(120)) + "#\(id)",
                                    scores: (0..<generator.next(5)).map { _ in generator.next(1000) },
                                    friend: id % 3 == 0 ? (id * 7 + 3) % count : nil,
                                    note: id % 2 == 0 ? "note \(id)" : nil)
        }
        let db = try Database(configuration: configuration)
        try db.write {
            for id in 0..<count {
                let e = expected[id]!
                let record = DamagedRecord()
                record.id = id
                record.tag = e.tag
                record.payload = e.payload
                record.scores.append(objectsIn: e.scores)
                if let note = e.note { record.note = DamagedNote(value: ["text": note]) }
                db.add(record)
            }
            for id in 0..<count {
                guard let friend = expected[id]!.friend else { continue }
                db.object(ofType: DamagedRecord.self, forPrimaryKey: id)!.friend = db.object(ofType: DamagedRecord.self, forPrimaryKey: friend)
            }
        }
        try db.checkpoint()
        return expected
    }

    /// What a record holds now.
    static func read(_ record: DamagedRecord) -> Expected {
        Expected(tag: record.tag, payload: record.payload, scores: Array(record.scores), friend: record.friend?.id, note: record.note?.text)
    }

    /// The page size and the pages of each tree of the file, by tree name ("catalog" for the
    /// catalog of trees). The file must not be open.
    static func trees(of path: String) throws -> (pageSize: Int, pages: [String: [UInt64]]) {
        // 1 GiB of address space, not the default 1 TiB: under the thread sanitizer a process
        // has about 1.5 TiB for mappings, shared by every test running at once.
        let engine = try StorageEngine.open(path: path, options: StorageOptions(maximumFileSize: 1 << 30, readOnly: true))
        defer { engine.close() }
        let read = try engine.beginRead()
        defer { read.close() }
        var pages: [String: [UInt64]] = ["catalog": read.catalogPageNumbers]
        for name in try read.treeNames() {
            if let tree = try read.tree(named: name) { pages[name] = try read.pageNumbers(of: tree) }
        }
        return (engine.pageSize, pages)
    }

    /// The name of a type's tree: `c` for its objects, `l` for lists, `pk`, `i<column>`.
    static func treeName(_ type: String, _ suffix: String, in configuration: Database.Configuration) throws -> String {
        let db = try Database(configuration: configuration)
        let id = try #require(db.schema[type]).tableID
        return "t\(id).\(suffix)"
    }

    /// Flips `count` bytes of page `page` from byte `offset` (past the 32-byte header, so that
    /// the checksum no longer matches).
    static func damage(page: UInt64, of path: String, pageSize: Int, offset: Int = 100, count: Int = 8) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let start = UInt64(page) * UInt64(pageSize) + UInt64(offset)
        try handle.seek(toOffset: start)
        let bytes = try handle.read(upToCount: count) ?? Data()
        try handle.seek(toOffset: start)
        try handle.write(contentsOf: Data(bytes.map { ~$0 }))
        try handle.synchronize()
    }
}
