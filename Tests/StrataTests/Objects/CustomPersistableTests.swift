// CustomPersistable and FailableCustomPersistable: types stored as a supported type, as
// properties (optional or not), in lists, sets and maps, through reopen; key-value input;
// queries by value and through persistableValue; a stored value that does not convert.

import Foundation
import Testing
@testable import Strata
import StrataStore

struct Celsius: CustomPersistable, Equatable {
    var degrees: Double
    init(_ degrees: Double) { self.degrees = degrees }
    init(persistedValue: Double) { degrees = persistedValue }
    var persistableValue: Double { degrees }
}

/// An even number; odd stored values do not convert.
struct EvenNumber: FailableCustomPersistable, Hashable {
    let value: Int
    init?(_ value: Int) {
        guard value % 2 == 0 else { return nil }
        self.value = value
    }
    init?(persistedValue: Int) { self.init(persistedValue) }
    var persistableValue: Int { value }
}

final class Reading: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var temperature: Celsius
    @Persisted var peak: Celsius?
    @Persisted var even: EvenNumber?
    @Persisted var history: List<Celsius>
    @Persisted var evens: MutableSet<EvenNumber>
    @Persisted var byPlace: Map<String, Celsius>
}

/// The same schema as `Reading`'s `even` and the rest, with `even` a plain Int: writes values
/// `EvenNumber` cannot read.
final class RawReading: Object {
    override class func className() -> String { "Reading" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var temperature: Double
    @Persisted var peak: Double?
    @Persisted var even: Int?
    @Persisted var history: List<Double>
    @Persisted var evens: MutableSet<Int>
    @Persisted var byPlace: Map<String, Double>
}

/// An identifier stored as a string, as a primary key.
struct BadgeID: CustomPersistable, Hashable {
    var text: String
    init(persistedValue: String) { text = persistedValue }
    var persistableValue: String { text }
}

final class Member: Object {
    @Persisted(primaryKey: true) var id: BadgeID
    @Persisted(indexed: true) var mentor: BadgeID?
}

/// RealmSwift's documented mapping of a type to an embedded object.
final class Location: EmbeddedObject {
    @Persisted var latitude = 0.0
    @Persisted var longitude = 0.0
}

struct Coordinate: CustomPersistable, Equatable {
    var latitude: Double
    var longitude: Double
    init(_ latitude: Double, _ longitude: Double) { (self.latitude, self.longitude) = (latitude, longitude) }
    init(persistedValue: Location) { self.init(persistedValue.latitude, persistedValue.longitude) }
    var persistableValue: Location {
        let location = Location()
        location.latitude = latitude
        location.longitude = longitude
        return location
    }
}

final class Place: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var spot: Coordinate
    @Persisted var alternate: Coordinate?
    @Persisted var route: List<Coordinate>
    @Persisted var marks: Map<String, Coordinate>
}

@Suite struct CustomPersistableTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Reading.self]) }

    @Test func valuesAreStoredAsTheirPersistedTypeThroughReopen() throws {
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                let reading = Reading()
                reading.id = 1
                reading.temperature = Celsius(21.5)
                reading.even = EvenNumber(4)
                reading.history.append(objectsIn: [Celsius(1), Celsius(2)])
                reading.evens.insert(try #require(EvenNumber(2)))
                reading.evens.insert(try #require(EvenNumber(2)))
                reading.byPlace["attic"] = Celsius(30)
                db.add(reading)
                db.create(Reading.self, value: ["id": 2, "temperature": 18.0, "peak": Celsius(19), "history": [3.0, Celsius(4)],
                                                "byPlace": ["cellar": 12.0]])
            }
            let schema = try #require(db.core.session.table(named: "Reading")?.schema)
            #expect(schema.properties.map(\.typeDescription) == ["int", "double", "double?", "int?", "list<double>", "set<int>", "map<string, double>"])
        }
        let db = try Database(configuration: configuration)
        let first = try #require(db.object(ofType: Reading.self, forPrimaryKey: 1))
        #expect(first.temperature == Celsius(21.5) && first.peak == nil && first.even == EvenNumber(4))
        #expect(Array(first.history) == [Celsius(1), Celsius(2)])
        let two = try #require(EvenNumber(2))
        #expect(first.evens.count == 1 && first.evens.contains(two))
        #expect(first.byPlace["attic"] == Celsius(30))
        let second = try #require(db.object(ofType: Reading.self, forPrimaryKey: 2))
        #expect(second.temperature == Celsius(18) && second.peak == Celsius(19))
        #expect(Array(second.history) == [Celsius(3), Celsius(4)] && second.byPlace["cellar"] == Celsius(12))
        try db.write {
            second["temperature"] = Celsius(-3)
            second.setValue(8, forKey: "even")
        }
        #expect(second.temperature == Celsius(-3) && second.even == EvenNumber(8))
        #expect(second.value(forKey: "temperature") as? Celsius == Celsius(-3))
        // A property declared without an initial value starts at the stored type's default.
        #expect(Reading().temperature == Celsius(0))
    }

    @Test func queriesCompareTheStoredValues() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            for (id, degrees) in [(1, 10.0), (2, 20.0), (3, 30.0)] {
                db.create(Reading.self, value: ["id": id, "temperature": Celsius(degrees), "peak": id == 2 ? NSNull() : Celsius(degrees + 1) as Any,
                                                "even": EvenNumber(id * 2) as Any, "history": [Celsius(degrees)]])
            }
        }
        func ids(_ results: Results<Reading>) -> [Int] { results.map(\.id).sorted() }
        let all = db.objects(Reading.self)
        #expect(ids(all.where { $0.temperature == Celsius(20) }) == [2])
        #expect(ids(all.where { $0.temperature > Celsius(15) }) == [2, 3])
        #expect(ids(all.where { $0.temperature.persistableValue < 25 }) == [1, 2])
        #expect(ids(all.where { $0.peak.persistableValue > 15 }) == [3])
        #expect(ids(all.where { $0.peak == nil }) == [2])
        #expect(ids(all.where { $0.even == EvenNumber(4) }) == [2])
        #expect(ids(all.where { $0.history.contains(Celsius(30)) }) == [3])
        #expect(ids(all.filter("temperature >= %@", Celsius(20))) == [2, 3])
        #expect(ids(all.filter("ANY history == %@", Celsius(10))) == [1])
        #expect(all.sorted(byKeyPath: "temperature", ascending: false).map(\.id) == [3, 2, 1])
    }

    @Test func aCustomTypeCanBeAPrimaryKeyAndIndexed() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [Member.self]))
        try db.write {
            db.create(Member.self, value: ["id": BadgeID(persistedValue: "a-1")])
            db.create(Member.self, value: ["id": "b-2", "mentor": BadgeID(persistedValue: "a-1")])
        }
        #expect(db.object(ofType: Member.self, forPrimaryKey: BadgeID(persistedValue: "b-2"))?.mentor?.text == "a-1")
        #expect(db.objects(Member.self).where { $0.mentor == BadgeID(persistedValue: "a-1") }.map(\.id.text) == ["b-2"])
        try db.write { db.create(Member.self, value: ["id": "a-1", "mentor": "z"], update: .modified) }
        #expect(db.objects(Member.self).count == 2)
        #expect(db.object(ofType: Member.self, forPrimaryKey: BadgeID(persistedValue: "a-1"))?.mentor?.text == "z")
    }

    @Test func aTypeStoredAsAnEmbeddedObject() throws {
        let configuration = folder.configuration(objectTypes: [Place.self])
        func locations(_ db: Database) -> Int { (try? db.core.session.table(named: "Location")?.count) ?? -1 }
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                let place = Place()
                place.id = 1
                place.spot = Coordinate(59.9, 10.7)
                place.route.append(objectsIn: [Coordinate(1, 2), Coordinate(3, 4)])
                place.marks["home"] = Coordinate(9, 9)
                db.add(place)
                db.create(Place.self, value: ["id": 2, "alternate": Coordinate(5, 6)])
            }
            // Place 2's spot was not given: it holds the default, stored as an object too.
            #expect(locations(db) == 6)
            let place = try #require(db.object(ofType: Place.self, forPrimaryKey: 1))
            try db.write {
                place.spot = Coordinate(60, 11)  // the old embedded object goes
                place.route.remove(at: 0)
                place.alternate = Coordinate(7, 8)
                place.marks["home"] = Coordinate(8, 8)
                place.marks["work"] = Coordinate(7, 7)
            }
            #expect(locations(db) == 7)
            #expect(db.core.session.table(named: "Place")?.schema.properties.map(\.typeDescription)
                    == ["int", "object<Location>", "object<Location>", "list<object<Location>>", "map<string, object<Location>>"])
        }
        let db = try Database(configuration: configuration)
        let place = try #require(db.object(ofType: Place.self, forPrimaryKey: 1))
        #expect(place.spot == Coordinate(60, 11) && place.alternate == Coordinate(7, 8))
        #expect(Array(place.route) == [Coordinate(3, 4)])
        #expect(place.marks["home"] == Coordinate(8, 8) && place.marks["work"] == Coordinate(7, 7) && place.marks.count == 2)
        let other = try #require(db.object(ofType: Place.self, forPrimaryKey: 2))
        #expect(other.spot == Coordinate(0, 0) && other.alternate == Coordinate(5, 6))
        #expect(db.objects(Place.self).where { $0.spot.persistableValue.latitude > 50 }.map(\.id) == [1])
        #expect(db.objects(Place.self).filter("ANY route.latitude == 3").map(\.id) == [1])
        #expect(db.objects(Place.self).filter("alternate.longitude == 6").map(\.id) == [2])
        try db.write { db.delete(place) }
        #expect(locations(db) == 2)
        #expect(problems(db).isEmpty)
    }

    @Test func aStoredValueThatDoesNotConvertReadsAsNilWhereOptional() throws {
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [RawReading.self]))
            try db.write {
                db.create(RawReading.self, value: ["id": 1, "even": 3, "evens": [2, 5], "temperature": 1.0])
            }
        }
        let db = try Database(configuration: configuration)
        let reading = try #require(db.object(ofType: Reading.self, forPrimaryKey: 1))
        #expect(reading.even == nil)
        #expect(reading.temperature == Celsius(1))
        // In a set, a value that does not convert reads as the type's value for the default (0).
        #expect(Set(reading.evens.map(\.value)) == [2, 0])
    }
}
