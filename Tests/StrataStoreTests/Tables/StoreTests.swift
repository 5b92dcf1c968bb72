import Foundation
import Testing
@testable import StrataStore
import StrataStorage

@Suite struct StoreTests {
    @Test func insertReadUpdateDeleteAcrossReopen() throws {
        let folder = TemporaryFolder()
        do {
            let store = try Store.open(path: folder.file(), schema: personSchema)
            let session = try store.makeSession()
            let people = session.table(named: "Person")!
            try session.beginWrite()
            var keys: [ObjectKey] = []
            for i in 0..<1000 {
                keys.append(try people.insert([.int(Int64(i)), .string("p\(i)"), .int(Int64(i % 90)), i % 3 == 0 ? .null : .double(Double(i) / 2), .null, .null]))
            }
            try people.set(.link(keys[1]), for: keys[0], property: 4)
            try people.setList([.string("a"), .string("b")], for: keys[0], property: 5)
            let changes = try session.commit()
            #expect(changes.tables[people.tableID]?.inserted.count == 1000)
            #expect(try people.count == 1000)
            #expect(try people.value(keys[999], property: 1) == .string("p999"))
            #expect(try people.value(keys[3], property: 3) == .null)
            #expect(try people.value(keys[4], property: 3) == .double(2))
            #expect(try people.find(primaryKey: .int(500)) == keys[500])
            #expect(try people.find(.string("p42"), inIndexOf: 1) == [keys[42]])

            try session.beginWrite()
            try people.set(.string("renamed"), for: keys[42], property: 1)
            try session.delete([keys[1], keys[7]], from: people)
            let second = try session.commit()
            #expect(second.tables[people.tableID]?.deleted == [keys[1], keys[7]])
            #expect(second.tables[people.tableID]?.modified[keys[42]] == TableChanges.bit(1))
            #expect(second.tables[people.tableID]?.modified[keys[0]] == TableChanges.bit(4))
            session.close()
            store.close()
        }
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let session = try store.makeSession()
        let people = session.table(named: "Person")!
        #expect(try people.count == 998)
        let k0 = try #require(try people.find(primaryKey: .int(0)))
        #expect(try people.value(k0, property: 4) == .null)  // its friend was deleted
        #expect(try people.list(k0, property: 5) == [.string("a"), .string("b")])
        #expect(try people.find(.string("p42"), inIndexOf: 1) == [])
        #expect(try people.find(.string("renamed"), inIndexOf: 1).count == 1)
        #expect(try people.find(primaryKey: .int(1)) == nil)
        #expect(try people.allKeys().count == 998)
    }

    @Test func duplicatePrimaryKeyAndWrongValuesAreTypedErrors() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let session = try store.makeSession()
        let people = session.table(named: "Person")!
        try session.beginWrite()
        try people.insert([.int(1), .string("a"), .int(1), .null, .null, .null])
        #expect(throws: StoreError.duplicatePrimaryKey(type: "Person", value: "1")) {
            try people.insert([.int(1), .string("b"), .int(1), .null, .null, .null])
        }
        #expect(throws: StoreError.self) { try people.insert([.int(2), .null, .int(1), .null, .null, .null]) }
        #expect(throws: StoreError.self) { try people.insert([.int(3), .int(5), .int(1), .null, .null, .null]) }
        session.rollback()
    }

    @Test func schemaMismatchNamesTypeAndProperty() throws {
        let folder = TemporaryFolder()
        try Store.open(path: folder.file(), schema: personSchema).close()
        var changed = personSchema
        changed.objectSchemas[0].properties.append(PropertySchema(name: "email", kind: .string))
        #expect(throws: StoreError.schemaMismatch(type: "Person", property: "email", reason: "the property was added")) {
            try Store.open(path: folder.file(), schema: changed)
        }
        // A higher schema version applies the change; old objects read the new column as default.
        let store = try Store.open(path: folder.file(), schema: changed, schemaVersion: 1, policy: .migrate(renames: [:]))
        #expect(store.schemaVersion == 1)
        #expect(store.upgrade?.oldVersion == 0)
        store.close()
    }
}

@Suite struct ChangeLogTests {
    @Test func theLogReachesBackToTheOldestOpenSnapshotAndNoFurther() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: personSchema)
        defer { store.close() }
        let writer = try store.makeSession()
        let people = writer.table(named: "Person")!
        func insert(_ id: Int64) throws -> ObjectKey {
            try writer.beginWrite()
            let key = try people.insert([.int(id), .string("p\(id)"), .int(1), .null, .null, .null])
            try writer.commit()
            return key
        }
        _ = try insert(0)
        let reader = try store.makeSession()  // pins this version
        let start = reader.version
        let a = try insert(1)
        try writer.beginWrite()
        try people.set(.int(5), for: a, property: 2)
        try writer.commit()
        let b = try insert(2)
        try writer.beginWrite()
        try writer.delete([b], from: people)
        try writer.commit()
        #expect(try reader.refresh())
        let merged = try #require(try reader.changes(since: start))
        let changes = try #require(merged.tables[people.tableID])
        #expect(changes.inserted == [a])  // b was inserted and deleted within the span
        #expect(changes.deleted.isEmpty)
        #expect(changes.modified.isEmpty)  // a's modification folds into its insertion
        // Once no snapshot pins the old versions, the next commit prunes their entries.
        reader.close()
        _ = try insert(3)
        #expect(try writer.changes(since: start) == nil)
        let last = writer.version
        #expect(try writer.changes(since: last - 1)?.tables[people.tableID]?.inserted.count == 1)
    }
}

extension ChangeLogTests {
    /// A snapshot held across more than `StoreSession.changeLogLength` commits does not keep
    /// the change log back to its version: the log keeps that many newest entries, so the file
    /// does not grow by one entry per commit for as long as the snapshot lives. The snapshot
    /// still reads its version; catching up from it finds the log gone (nil), as the
    /// notifications expect of an observer that far behind.
    @Test func theLogKeepsAtMostItsLengthBehindAnOldSnapshot() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: personSchema)
        defer { store.close() }
        let writer = try store.makeSession()
        let people = writer.table(named: "Person")!
        try writer.beginWrite()
        _ = try people.insert([.int(0), .string("p0"), .int(1), .null, .null, .null])
        try writer.commit()
        let reader = try store.makeSession()  // pins this version for the whole test
        let start = reader.version
        let length = StoreSession.changeLogLength
        for id in 1...Int64(length) + 40 {
            try writer.beginWrite()
            _ = try people.insert([.int(id), .string("p\(id)"), .int(1), .null, .null, .null])
            try writer.commit()
        }
        let newest = writer.version
        #expect(reader.version == start)
        #expect(try reader.table(named: "Person")!.count == 1, "the snapshot still reads its version")
        #expect(try writer.changes(since: start) == nil, "the log does not reach back to the held snapshot")
        #expect(try writer.changes(since: newest - length)?.tables[people.tableID]?.inserted.count == Int(length))
        #expect(try writer.changes(since: newest - length - 1) == nil)
        reader.close()
    }

    /// The entry a commit that only inserted into one table writes without building its change
    /// set (`commit(reportingChanges: false)`) is byte for byte the general encoding, and any
    /// other transaction (an update, a delete, an insert deleted again) takes the general path.
    @Test func anInsertsOnlyEntryIsTheGeneralEncoding() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: personSchema)
        defer { store.close() }
        let writer = try store.makeSession()
        let people = writer.table(named: "Person")!
        try writer.beginWrite()
        var keys: [ObjectKey] = []
        for id in Int64(0)..<3 { keys.append(try people.insert([.int(id), .string("p\(id)"), .int(1), .null, .null, .null])) }
        let entry = try #require(writer.insertsOnlyLogEntry())
        #expect(entry == writer.pendingChanges().encoded())
        try writer.commit(reportingChanges: false)
        let start = writer.version
        let reader = try store.makeSession()  // pins `start`: the log keeps what follows it
        defer { reader.close() }
        // An update: not inserts only.
        try writer.beginWrite()
        try people.set(.int(7), for: keys[0], property: 2)
        #expect(writer.insertsOnlyLogEntry() == nil)
        try writer.commit(reportingChanges: false)
        // An insert deleted again, beside one that stays: the general path.
        try writer.beginWrite()
        let gone = try people.insert([.int(10), .string("x"), .int(1), .null, .null, .null])
        let kept = try people.insert([.int(11), .string("y"), .int(1), .null, .null, .null])
        try writer.delete([gone], from: people)
        #expect(writer.insertsOnlyLogEntry() == nil)
        try writer.commit(reportingChanges: false)
        // One more insert only: the log reads back as the change sets would have said.
        try writer.beginWrite()
        let last = try people.insert([.int(12), .string("z"), .int(1), .null, .null, .null])
        try writer.commit(reportingChanges: false)
        let one = try #require(try writer.changes(since: writer.version - 1)?.tables[people.tableID])
        #expect(one.inserted == [last] && one.deleted.isEmpty && one.modified.isEmpty)
        let merged = try #require(try writer.changes(since: start)?.tables[people.tableID])
        #expect(merged.inserted == [kept, last])
        #expect(merged.modified == [keys[0]: TableChanges.bit(2)])
        #expect(merged.deleted.isEmpty)
    }
}

@Suite struct ChunkWidthTests {
    /// A cluster whose `age` (Int) entry holds a well-formed chunk of the wrong width: one-byte
    /// values, or the `name` column's strings. Checksums cannot catch such a file; reading
    /// must give a typed error, not read past the chunk's end.
    @Test(arguments: ["narrow", "name"])
    func aChunkOfTheWrongWidthIsATypedError(source: String) throws {
        let folder = TemporaryFolder()
        var ageColumn: UInt16 = 0
        var sourceColumn: UInt16 = 0
        var treeName = ""
        do {
            let store = try Store.open(path: folder.file(), schema: personSchema)
            let session = try store.makeSession()
            let people = session.table(named: "Person")!
            try session.beginWrite()
            for i in 0..<10 {
                try people.insert([.int(Int64(i)), .string("p\(i)"), .int(Int64(i)), .double(Double(i)), .null, .null])
            }
            _ = try session.commit()
            ageColumn = people.columnIDs[2]
            sourceColumn = people.columnIDs[1]
            treeName = people.clusterTreeName
            session.close()
            store.close()
        }
        do {
            let engine = try StorageEngine.open(path: folder.file(), options: StorageOptions())
            defer { engine.close() }
            try engine.write { t in
                let tree = try #require(try t.tree(named: treeName))
                let cursor = try t.makeCursor(on: tree)
                #expect(try cursor.first())
                let first = Int64(bitPattern: TreeKey.readU64(cursor.key))
                // Ten one-byte values: count, fixed format, width 1, no nulls, then the values.
                let narrow: [UInt8] = [10, 0, 0, 0, ChunkFormat.fixed, 1, 0, 0] + [UInt8](repeating: 7, count: 10)
                let bytes: [UInt8]? = source == "narrow" ? narrow : try TreeKey.cluster(first, column: sourceColumn).withUnsafeBytes { key in
                    try t.withValue(forKey: key, in: tree) { $0.map { Array($0) } }
                }
                try t.put(try #require(bytes), forKey: TreeKey.cluster(first, column: ageColumn), in: tree)
            }
        }
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let session = try store.makeSession()
        let people = session.table(named: "Person")!
        let key = try #require(try people.find(primaryKey: .int(3)))
        #expect(throws: StoreError.self, "reading the damaged column") { try people.value(key, property: 2) }
        let query = try TableQuery(table: people, predicate: try PredicateParser.parse("age > 4", arguments: []))
        #expect(throws: StoreError.self, "scanning the damaged column") { try query.count() }
    }
}
