import Foundation
import Testing
@testable import StrataStore
import StrataStorage

/// The typed insert (`insert(primaryKey:writing:)`, the object layer's `add`) stores what the
/// general `insert(_:)` stores, and the change log's inserted keys, written as ranges, read
/// back as the keys.
@Suite struct InsertWritingTests {
    /// The values of person `i` (personSchema: id, name, age, score?, friend, tags).
    private static func values(_ i: Int64) -> [StoreValue] {
        [.int(i * 7 - 300), .string(i % 5 == 0 ? "" : "name \(i % 37) ✓"), .int(i % 90), i % 3 == 0 ? .null : .double(Double(i) / 4), .null, .null]
    }

    private static func typedInsert(_ table: TableAccess, _ values: [StoreValue]) throws -> ObjectKey {
        try table.insert(primaryKey: values[0]) { row in
            guard case .int(let id) = values[0], case .string(let name) = values[1], case .int(let age) = values[2] else {
                Issue.record("unexpected test values")
                return
            }
            row.setInt(id, 0)
            row.setString(name, 1)
            row.setInt(age, 2)
            if case .double(let score) = values[3] { row.setDouble(score, 3) } else { row.set(.null, 3) }
            // The link (4) is left to its default: no object.
        }
    }

    /// Everything a reader can see of a table: each object's values and the name index's
    /// answers.
    private static func contents(_ table: TableAccess, count: Int64) throws -> [[StoreValue]] {
        var rows: [[StoreValue]] = []
        for key in try table.allKeys() {
            var row = try (0..<5).map { try table.value(key, property: $0) }
            row.append(.int(key.rawValue))
            rows.append(row)
        }
        for i in Int64(0)..<min(count, 40) {
            let name = values(i)[1]
            rows.append(try table.find(name, inIndexOf: 1).map { .int($0.rawValue) })
        }
        return rows
    }

    @Test func typedRowsMatchTheGeneralInsert() throws {
        let count: Int64 = 700  // three clusters, the last one partly filled
        var results: [[[StoreValue]]] = []
        var changeSets: [ChangeSet] = []
        for typed in [false, true] {
            let folder = TemporaryFolder()
            let store = try Store.open(path: folder.file(), schema: personSchema)
            let session = try store.makeSession()
            let people = session.table(named: "Person")!
            // Two transactions: the second continues the first one's last cluster.
            for range in [Int64(0)..<300, 300..<count] {
                try session.beginWrite()
                for i in range {
                    let key = typed ? try Self.typedInsert(people, Self.values(i)) : try people.insert(Self.values(i))
                    #expect(key == ObjectKey(i))
                }
                changeSets.append(try session.commit())
            }
            results.append(try Self.contents(people, count: count))
            session.close()
            store.close()
            // And after reopening.
            let reopened = try Store.open(path: folder.file(), schema: personSchema)
            let again = try reopened.makeSession()
            #expect(try Self.contents(again.table(named: "Person")!, count: count) == results.last)
            again.close()
            reopened.close()
        }
        #expect(results[0] == results[1])
        #expect(results[1].count > Int(count))
        #expect(results[1][3][4] == .null)  // the link no object
        for index in 0..<2 {
            #expect(changeSets[index].tables == changeSets[index + 2].tables)
        }
    }

    /// `nextInsertKey()` names the key the next insert gives, in a transaction, across
    /// commits, after deletes (keys are not reused) and after a refused duplicate.
    @Test func nextInsertKeyIsTheKeyTheNextInsertGives() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let session = try store.makeSession()
        let people = session.table(named: "Person")!
        try session.beginWrite()
        for i in Int64(0)..<300 {
            let predicted = try people.nextInsertKey()
            #expect(try Self.typedInsert(people, Self.values(i)) == predicted)
        }
        _ = try session.commit()
        try session.beginWrite()
        try people.delete([ObjectKey(299), ObjectKey(5)])
        let predicted = try people.nextInsertKey()
        #expect(predicted == ObjectKey(300))
        #expect(throws: StoreError.self) { _ = try Self.typedInsert(people, Self.values(7)) }
        #expect(try people.nextInsertKey() == predicted)
        #expect(try people.insert(Self.values(300)) == predicted)
        #expect(try people.nextInsertKey() == ObjectKey(301))
        _ = try session.commit()
        session.close()
        store.close()
    }

    @Test func aDuplicatePrimaryKeyChangesNothing() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let session = try store.makeSession()
        let people = session.table(named: "Person")!
        try session.beginWrite()
        _ = try Self.typedInsert(people, Self.values(1))
        _ = try session.commit()
        try session.beginWrite()
        _ = try Self.typedInsert(people, Self.values(2))
        for duplicate in [Self.values(1), Self.values(2)] {
            var called = false
            #expect(throws: StoreError.duplicatePrimaryKey(type: "Person", value: "\(duplicate[0])")) {
                _ = try people.insert(primaryKey: duplicate[0]) { _ in called = true }
            }
            #expect(!called)
            #expect(try people.count == 2)
        }
        // No key was burned, and the change record holds only the one new object.
        #expect(try Self.typedInsert(people, Self.values(3)) == ObjectKey(2))
        #expect(session.pendingChanges().tables[people.tableID]?.inserted == [ObjectKey(1), ObjectKey(2)])
        session.rollback()
        #expect(try people.count == 1)
        session.close()
        store.close()
    }

    @Test func aPrimaryKeyOfTheWrongKindIsRefused() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let session = try store.makeSession()
        let people = session.table(named: "Person")!
        try session.beginWrite()
        for wrong in [StoreValue.string("1"), .null] {
            #expect(throws: StoreError.self) { _ = try people.insert(primaryKey: wrong) { _ in } }
        }
        #expect(try people.count == 0)
        session.rollback()
        session.close()
        store.close()
    }

    // MARK: The change log's ranges

    private static func changes(inserted: [Int64], deleted: [Int64] = [], modified: [Int64: UInt64] = [:]) -> TableChanges {
        var changes = TableChanges()
        changes.inserted = inserted.map(ObjectKey.init)
        changes.deleted = deleted.map(ObjectKey.init)
        for (key, mask) in modified { changes.modified[ObjectKey(key)] = mask }
        return changes
    }

    @Test func insertedKeysRoundTripAsRanges() throws {
        let sets: [[Int64]] = [
            [], [0], [5, 6, 7], Array(0..<100_000), [1, 3, 5, 7], [0, 1, 2, 10, 11, 40, 41, 42, 43, Int64.max - 1, Int64.max],
            Array(1_000..<1_256) + Array(1_300..<1_301),
        ]
        for inserted in sets {
            let set = ChangeSet(version: 9, tables: [
                3: Self.changes(inserted: inserted, deleted: [1, 2], modified: [4: 0b101, 8: 1 << 63]),
                1: Self.changes(inserted: inserted.reversed()),
                7: TableChanges(),
            ])
            let bytes = set.encoded()
            let decoded = try bytes.withUnsafeBytes { try ChangeSet.decode($0, version: 9) }
            #expect(decoded == set)
        }
        // A run of consecutive keys is one range: the table count, the id, the range count,
        // one range, and the empty deleted and modified counts.
        let bulk = ChangeSet(version: 2, tables: [1: Self.changes(inserted: Array(0..<100_000))])
        #expect(bulk.encoded().count == 7 * 8)
    }

    /// Entries written before the ranges (a plain count of single keys) still read.
    @Test func entriesWithSingleKeysStillRead() throws {
        let words: [UInt64] = [1, 4, 3, 10, 11, 13, 1, 2, 1, 10, 0b10]
        let bytes = words.flatMap { word in withUnsafeBytes(of: word.littleEndian) { [UInt8]($0) } }
        let decoded = try bytes.withUnsafeBytes { try ChangeSet.decode($0, version: 5) }
        #expect(decoded == ChangeSet(version: 5, tables: [4: Self.changes(inserted: [10, 11, 13], deleted: [2], modified: [10: 0b10])]))
    }

    @Test func damagedRangesAreRefused() throws {
        func decode(_ words: [UInt64]) throws {
            let bytes = words.flatMap { word in withUnsafeBytes(of: word.littleEndian) { [UInt8]($0) } }
            _ = try bytes.withUnsafeBytes { try ChangeSet.decode($0, version: 1) }
        }
        let flag = ChangeSet.rangesFlag
        try decode([1, 4, flag | 1, 10, 3, 0, 0])  // well formed
        for damaged: [UInt64] in [
            [1, 4, flag | 1, 10, 1 << 40, 0, 0],                  // too many keys
            [1, 4, flag | 2, 10, ChangeSet.maximumRangeKeys, 20, 1, 0, 0],  // too many in all
            [1, 4, flag | 1, UInt64(bitPattern: -1), 1, 0, 0],    // a negative key
            [1, 4, flag | 1, UInt64(Int64.max), 2, 0, 0],          // past the last key
            [1, 4, flag | 1, 10, 0, 0, 0],                         // an empty range
            [1, 4, flag | 1000, 10, 3, 0, 0],                      // more ranges than the bytes hold
            [1, 4, flag | 1, 10],                                  // truncated
        ] {
            #expect(throws: StoreError.self) { try decode(damaged) }
        }
    }

    /// Through the store: objects inserted and some deleted again in one transaction read
    /// back from the log as the ones that stayed.
    @Test func theLogGivesTheInsertedKeysWithGaps() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let session = try store.makeSession()
        let reader = try store.makeSession()
        let people = session.table(named: "Person")!
        let start = reader.version
        try session.beginWrite()
        for i in Int64(0)..<600 { _ = try Self.typedInsert(people, Self.values(i)) }
        try people.delete([ObjectKey(0), ObjectKey(17), ObjectKey(18), ObjectKey(599)])
        _ = try session.commit()
        try session.beginWrite()
        for i in Int64(600)..<610 { _ = try people.insert(Self.values(i)) }
        _ = try session.commit()
        _ = try reader.refresh()
        let changes = try #require(try reader.changes(since: start)).tables[people.tableID]
        let expected = (Int64(0)..<610).filter { ![0, 17, 18, 599].contains($0) }.map(ObjectKey.init)
        #expect(changes?.inserted == expected)
        #expect(changes?.deleted == [])
        reader.close()
        session.close()
        store.close()
    }
}
