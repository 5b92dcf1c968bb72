// min(), max(), sum() and average() of lists and sets of values, managed and unmanaged,
// with nils ignored and the empty cases RealmSwift defines.

import Foundation
import Testing
@testable import Strata
import StrataStore

final class Measurements: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var counts: List<Int>
    @Persisted var small: List<Int8>
    @Persisted var readings: List<Double?>
    @Persisted var weights: List<Float>
    @Persisted var prices: List<Decimal128>
    @Persisted var days: List<Date>
    @Persisted var optionalDays: List<Date?>
    @Persisted var scores: MutableSet<Int?>
    @Persisted var words: List<String>
}

@Suite struct ValueAggregateTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Measurements.self]) }

    /// A filled object, written and read back (or left unmanaged).
    func measurements(managed: Bool) throws -> (Measurements, Database?) {
        let m = Measurements()
        m.counts.append(objectsIn: [4, -2, 10, 3])
        m.small.append(objectsIn: [100, 100, 100])
        m.readings.append(objectsIn: [nil, 1.5, nil, 4.5, 3.0])
        m.weights.append(objectsIn: [0.5, 0.25])
        m.prices.append(objectsIn: [Decimal128(1), Decimal128(2), Decimal128(4)])
        m.days.append(objectsIn: [Date(timeIntervalSince1970: 200), Date(timeIntervalSince1970: 100), Date(timeIntervalSince1970: 300)])
        m.optionalDays.append(objectsIn: [nil, Date(timeIntervalSince1970: 50), nil])
        m.scores.insert(objectsIn: [7, nil, 1, 7, 4])
        guard managed else { return (m, nil) }
        let db = try Database(configuration: configuration)
        try db.write { db.add(m) }
        let stored = try #require(db.object(ofType: Measurements.self, forPrimaryKey: 0))
        return (stored, db)
    }

    @Test(arguments: [false, true])
    func aggregatesOfNumbersAndDates(managed: Bool) throws {
        let (m, db) = try measurements(managed: managed)
        #expect(m.isManaged == managed)
        #expect(m.counts.min() == -2 && m.counts.max() == 10)
        #expect(m.counts.sum() == 15)
        let countsMean: Double? = m.counts.average()
        #expect(countsMean == 3.75)
        // Integers add in 64 bits; the sum is then an Int8, truncated.
        #expect(m.small.sum() == Int8(truncatingIfNeeded: 300))
        let smallMean: Double? = m.small.average()
        #expect(smallMean == 100)
        // Nils are ignored; the results of a list of optionals are optionals.
        #expect(m.readings.min() == .some(1.5) && m.readings.max() == .some(4.5))
        #expect(m.readings.sum() == 9.0)
        let readingsMean: Double? = m.readings.average()
        #expect(readingsMean == 3.0)
        #expect(m.weights.sum() == 0.75 && m.weights.min() == 0.25)
        #expect(m.prices.sum() == Decimal128(7))
        let pricesMean: Decimal128? = m.prices.average()
        #expect(pricesMean == Decimal128(7) / Decimal128(3))
        #expect(m.days.min() == Date(timeIntervalSince1970: 100) && m.days.max() == Date(timeIntervalSince1970: 300))
        #expect(m.optionalDays.max() == .some(Date(timeIntervalSince1970: 50)))
        #expect(m.scores.sum() == 12 && m.scores.min() == .some(1) && m.scores.max() == .some(7))
        let scoresMean: Double? = m.scores.average()
        #expect(scoresMean == 4)
        _ = db
    }

    @Test(arguments: [false, true])
    func emptyAndAllNilCollections(managed: Bool) throws {
        let m = Measurements()
        m.readings.append(objectsIn: [nil, nil])
        m.scores.insert(nil)
        var db: Database?
        var subject = m
        if managed {
            let opened = try Database(configuration: configuration)
            try opened.write { opened.add(m) }
            subject = try #require(opened.object(ofType: Measurements.self, forPrimaryKey: 0))
            db = opened
        }
        // The sum of nothing is 0; the other aggregates of nothing are nil.
        #expect(subject.counts.sum() == 0)
        #expect(subject.counts.min() == nil && subject.counts.max() == nil)
        let none: Double? = subject.counts.average()
        #expect(none == nil)
        #expect(subject.readings.sum() == .some(0))
        #expect(subject.readings.min() == nil && subject.readings.max() == nil)
        let noReading: Double? = subject.readings.average()
        #expect(noReading == nil)
        #expect(subject.scores.sum() == .some(0) && subject.scores.max() == nil)
        #expect(subject.days.min() == nil)
        _ = db
    }

    @Test func aggregatesFollowWrites() throws {
        let (m, db) = try measurements(managed: true)
        let database = try #require(db)
        try database.write {
            m.counts.append(100)
            m.readings.append(nil)
            m.readings.append(-1)
            m.scores.remove(7)
        }
        #expect(m.counts.sum() == 115 && m.counts.max() == 100)
        #expect(m.readings.min() == .some(-1) && m.readings.sum() == 8.0)
        #expect(m.scores.sum() == 5 && m.scores.max() == .some(4))
        // A frozen list keeps its version's aggregates.
        let frozen = m.counts.freeze()
        try database.write { m.counts.removeAll() }
        #expect(frozen.sum() == 115 && m.counts.sum() == 0)
    }

    @Test(arguments: [false, true])
    func sortedAndDistinctValues(managed: Bool) throws {
        let (m, db) = try measurements(managed: managed)
        // Strings sort by their bytes: "B" < "a" < "é"; a decomposed "é" differs from the
        // precomposed one.
        let decomposed = "e\u{301}"
        if managed {
            try #require(db).write { m.words.append(objectsIn: ["a", "é", "B", "a", decomposed]) }
        } else {
            m.words.append(objectsIn: ["a", "é", "B", "a", decomposed])
        }
        // (Compared as bytes: Swift's == takes the two spellings of "é" as equal.)
        func bytes(_ words: [String]) -> [[UInt8]] { words.map { Array($0.utf8) } }
        #expect(bytes(m.words.sorted()) == bytes(["B", "a", "a", decomposed, "é"]))
        #expect(bytes(m.words.sorted(ascending: false)) == bytes(["é", decomposed, "a", "a", "B"]))
        #expect(bytes(m.words.distinct()) == bytes(["a", "é", "B", decomposed]))
        #expect(m.counts.sorted() == [-2, 3, 4, 10])
        #expect(m.counts.sorted(ascending: false) == [10, 4, 3, -2])
        // nil first when ascending, last when descending.
        #expect(m.readings.sorted() == [nil, nil, 1.5, 3.0, 4.5])
        #expect(m.readings.sorted(ascending: false) == [4.5, 3.0, 1.5, nil, nil])
        #expect(m.readings.distinct() == [nil, 1.5, 4.5, 3.0])
        #expect(m.scores.sorted() == [nil, 1, 4, 7])
        #expect(m.days.sorted().map(\.timeIntervalSince1970) == [100, 200, 300])
        #expect(m.small.distinct() == [100])
    }
}
