import Foundation
import Testing
@testable import Strata
import StrataTestWorkloads

/// A model with an Int primary key for the key-guessing tests.
final class GuessedItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
}

/// `object(ofType:forPrimaryKey:)` with an Int key first tries the object key that the last
/// index lookup's offset predicts (`TableAccess.locate(primaryKey:)`) and accepts it only
/// when that object's primary key matches. Whatever the keys look like, every lookup must give
/// exactly the object with that primary key, or nil.
@Suite struct PrimaryKeyLookupTests {
    private static func hits(_ db: Database) throws -> Int {
        try #require(try db.core.existingContext(for: GuessedItem.self)).table.primaryKeyGuessHits
    }

    private static func add(_ db: Database, _ ids: some Sequence<Int>) throws {
        try db.write {
            for id in ids {
                let item = GuessedItem()
                item.id = id
                item.value = id &* 3
                db.add(item)
            }
        }
    }

    private static func expectLookups(_ db: Database, present: Set<Int>, absent: [Int]) {
        for id in present.sorted() {
            let item = db.object(ofType: GuessedItem.self, forPrimaryKey: id)
            #expect(item?.id == id && item?.value == id &* 3, "lookup of \(id)")
        }
        for id in absent { #expect(db.object(ofType: GuessedItem.self, forPrimaryKey: id) == nil, "lookup of missing \(id)") }
    }

    @Test func ascendingIdsAreFoundByTheGuess() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [GuessedItem.self]))
        try Self.add(db, 1...2_000)
        Self.expectLookups(db, present: Set(1...2_000), absent: [0, -1, 2_001, 5_000, .max, .min])
        // All but the first lookup (which learns the offset) hit.
        #expect(try Self.hits(db) >= 1_999)
    }

    @Test func deletedAndReaddedObjectsAreFoundWhereTheyAreNow() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [GuessedItem.self]))
        try Self.add(db, 1...1_000)
        // Delete every seventh object and add half of them back: those get new object keys,
        // so the guess for them lands on nothing or on another object.
        let deleted = Array(stride(from: 7, through: 1_000, by: 7))
        try db.write {
            for id in deleted { db.delete(try #require(db.object(ofType: GuessedItem.self, forPrimaryKey: id))) }
        }
        let readded = deleted.filter { $0 % 2 == 0 }
        try Self.add(db, readded)
        let present = Set(1...1_000).subtracting(deleted).union(readded)
        Self.expectLookups(db, present: present, absent: deleted.filter { $0 % 2 == 1 })
        // And inside a write transaction, where new objects are not committed yet.
        try db.write {
            let item = GuessedItem()
            item.id = 5_000
            item.value = 15_000
            db.add(item)
            #expect(db.object(ofType: GuessedItem.self, forPrimaryKey: 5_000)?.value == 15_000)
            #expect(db.object(ofType: GuessedItem.self, forPrimaryKey: 999)?.value == 2_997)
        }
    }

    @Test func unrelatedKeysAreFoundThroughTheIndex() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [GuessedItem.self]))
        var generator = SplitMix64(seed: 11)
        var ids = Set<Int>()
        while ids.count < 1_500 { ids.insert(Int.random(in: -1_000_000...1_000_000, using: &generator)) }
        // Extremes make the guess's subtraction overflow.
        ids.formUnion([.max, .min, .max - 1, .min + 1, 0])
        try Self.add(db, ids.shuffled(using: &generator))
        Self.expectLookups(db, present: ids, absent: [1_000_001, -1_000_001])
        // Lookups in random order over a table whose keys follow the insertion order of
        // shuffled ids: almost every guess misses, and the answers stay right.
        for id in ids.shuffled(using: &generator).prefix(300) {
            #expect(db.object(ofType: GuessedItem.self, forPrimaryKey: id)?.id == id)
        }
    }
}
