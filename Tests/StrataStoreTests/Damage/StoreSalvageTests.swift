import Foundation
import Testing
import StrataStorage
@testable import StrataStore

/// `Store.salvage(from:to:)` where the object layer's tests cannot reach: a catalog of trees
/// that spans several pages and loses one, and damage that checksums cannot see.
@Suite struct StoreSalvageTests {
    @Test func aDamagedCatalogPageLosesOnlyTheTablesWhoseTreesItNamed() throws {
        let folder = TemporaryFolder()
        let tables = 120
        let schema = Schema((0..<tables).map { table in
            ObjectSchema(name: "Kind\(table)", properties: [
                PropertySchema(name: "id", kind: .int, isPrimaryKey: true),
                PropertySchema(name: "label", kind: .string, isIndexed: true),
            ])
        })
        do {
            let store = try Store.open(path: folder.file(), schema: schema)
            defer { store.close() }
            let session = try store.makeSession()
            defer { session.close() }
            try session.beginWrite()
            for table in session.tables {
                for id in 0..<20 { _ = try table.insert([.int(Int64(id)), .string("\(table.schema.name) \(id)")]) }
            }
            _ = try session.commit()
        }
        // The catalog's last leaf (the walk reads it last) names trees of the last tables in
        // name order, never the schema (`strata.*` sorts before `t…`).
        let (pageSize, catalog): (Int, [UInt64]) = try {
            let engine = try StorageEngine.open(path: folder.file(), options: StorageOptions(readOnly: true))
            defer { engine.close() }
            let read = try engine.beginRead()
            defer { read.close() }
            return (engine.pageSize, read.catalogPageNumbers)
        }()
        #expect(catalog.count >= 3, "the catalog should span several pages")
        try damage(page: try #require(catalog.last), of: folder.file(), pageSize: pageSize)

        let outcome = try Store.salvage(from: folder.file(), to: folder.file("salvaged.strata"))
        #expect(outcome.unreadable.contains { $0.tree == "catalog" && $0.page == catalog.last })
        var complete = 0
        var lost = 0
        for type in outcome.types {
            #expect(type.copied == 20 || type.copied == 0, "\(type.name): \(type.copied) copied")
            #expect(type.copied + type.lost == 20, "\(type.name): the counters tell how many were lost")
            if type.copied == 20 { complete += 1 } else { lost += 1 }
        }
        #expect(complete > 0 && lost > 0, "\(complete) tables copied, \(lost) lost")
        #expect(outcome.unreachableTrees.count >= lost)
        // The copies are right, indexes included.
        let copy = try Store.open(path: folder.file("salvaged.strata"), schema: nil)
        defer { copy.close() }
        let session = try copy.makeSession()
        defer { session.close() }
        for type in outcome.types where type.copied == 20 {
            let table = try #require(session.table(named: type.name))
            for id in 0..<20 {
                let key = try #require(try table.find(primaryKey: .int(Int64(id))))
                #expect(try table.value(key, property: 1) == .string("\(type.name) \(id)"))
                #expect(try table.find(.string("\(type.name) \(id)"), inIndexOf: 1) == [key])
            }
        }
        #expect(copy.schema.objectSchemas.count == tables)
    }

    @Test func aChunkThatContradictsItsClusterLosesThatClusterOnly() throws {
        let folder = TemporaryFolder()
        try withPeople(folder.file()) { session, people in
            try session.beginWrite()
            for i in 0..<600 { _ = try people.insert([.int(Int64(i)), .string("p\(i)"), .int(Int64(i)), .null, .null, .null]) }
            _ = try session.commit()
        }
        let tree = try withPeople(folder.file()) { _, people in people.clusterTreeName }
        // The first cluster's `age` chunk loses its last value: valid checksums, wrong count.
        try rewriteFirstClusterChunk(folder.file(), tree: tree, column: 3) { _, chunk in
            let rows = Int(chunk[0]) | Int(chunk[1]) << 8
            chunk[0] = UInt8((rows - 1) & 0xFF)
            chunk[1] = UInt8((rows - 1) >> 8)
            chunk.removeLast(8)
        }
        let outcome = try Store.salvage(from: folder.file(), to: folder.file("salvaged.strata"))
        let people = try #require(outcome.types.first { $0.name == "Person" })
        #expect(people.lost > 0 && people.copied > 0 && people.copied + people.lost == 600, "\(people)")
        #expect(outcome.unreadable.isEmpty, "no page is damaged")
        #expect(!people.problems.isEmpty)
        try withPeople(folder.file("salvaged.strata")) { _, copy in
            #expect(try copy.count == people.copied)
            for key in try copy.allKeys() {
                let id = try copy.value(key, property: 0)
                #expect(try copy.value(key, property: 2) == id)
                if case .int(let n) = id { #expect(try copy.value(key, property: 1) == .string("p\(n)")) }
            }
        }
    }

    /// Flips eight bytes inside page `page` (its checksum no longer matches).
    func damage(page: UInt64, of path: String, pageSize: Int) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let offset = page * UInt64(pageSize) + 200
        try handle.seek(toOffset: offset)
        let bytes = try handle.read(upToCount: 8) ?? Data()
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data(bytes.map { ~$0 }))
    }
}
