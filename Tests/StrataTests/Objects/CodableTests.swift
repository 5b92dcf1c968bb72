// Codable models. Decoding: JSON into unmanaged objects (missing keys take defaults, nulls
// clear optionals), with lists, sets, maps, links, enums, ObjectIds and mixed values, then
// added. Encoding: managed, unmanaged and frozen objects, through the compiler's code (so
// CodingKeys apply), with every kind of property, links, embedded objects, results and
// linking objects.

import Foundation
import Testing
@testable import Strata

enum Temper: String, PersistableEnum, Decodable {
    case calm, fierce
}

final class Pet: Object, Decodable {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted var name = ""
    @Persisted var age: Int
    @Persisted var nickname: String?
    @Persisted var temper: Temper
    @Persisted var tags: List<String>
    @Persisted var scores: Map<String, Double>
    @Persisted var colors: MutableSet<String>
    @Persisted var friend: Pet?
    @Persisted var extra: MixedValue
}

@Suite struct DecodingTests {
    let folder = TemporaryFolder()

    @Test func jsonDecodesIntoObjectsThatCanBeAdded() throws {
        let json = """
        [{"id": "64b7f0c2a1b2c3d4e5f60718", "name": "Rex", "age": 3, "nickname": null, "temper": "fierce",
          "tags": ["good", "loud"], "scores": {"speed": 9.5}, "colors": ["red", "red", "tan"],
          "friend": {"id": "64b7f0c2a1b2c3d4e5f60719", "name": "Fido"}, "extra": 42},
         {"id": "64b7f0c2a1b2c3d4e5f6071a"}]
        """
        let pets = try JSONDecoder().decode([Pet].self, from: Data(json.utf8))
        #expect(pets.count == 2)
        let rex = pets[0]
        #expect(rex.name == "Rex" && rex.age == 3 && rex.nickname == nil && rex.temper == .fierce)
        #expect(Array(rex.tags) == ["good", "loud"] && rex.scores["speed"] == 9.5 && rex.colors.count == 2)
        #expect(rex.friend?.name == "Fido" && rex.friend?.age == 0 && rex.extra == .int(42))
        // Missing keys take the defaults.
        let plain = pets[1]
        #expect(plain.name == "" && plain.age == 0 && plain.nickname == nil && plain.temper == .calm && plain.tags.isEmpty)
        #expect(plain.extra == .none)

        let db = try Database(configuration: folder.configuration(objectTypes: [Pet.self]))
        try db.write { db.add(pets) }
        #expect(db.objects(Pet.self).count == 3)
        let stored = try #require(db.object(ofType: Pet.self, forPrimaryKey: try ObjectId(string: "64b7f0c2a1b2c3d4e5f60718")))
        #expect(stored.friend?.name == "Fido" && Array(stored.tags) == ["good", "loud"] && stored.extra == .int(42))
    }

    @Test func aValueOfTheWrongTypeIsADecodingError() {
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(Pet.self, from: Data(#"{"id": "64b7f0c2a1b2c3d4e5f60718", "age": "three"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(Pet.self, from: Data(#"{"id": "64b7f0c2a1b2c3d4e5f60718", "name": null}"#.utf8))
        }
    }

    @Test func aJSONArrayOrObjectInAMixedValueIsANestedCollection() throws {
        let pet = try JSONDecoder().decode(Pet.self, from: Data(#"{"id": "64b7f0c2a1b2c3d4e5f60718", "extra": [1, {"a": "b"}]}"#.utf8))
        #expect(pet.extra == .fromArray([.int(1), .fromDictionary(["a": .string("b")])]))
    }
}

enum Gait: String, PersistableEnum, Codable {
    case walk, trot
}

final class Paw: EmbeddedObject, Codable {
    @Persisted var size = 0
}

final class Rambler: Object, Codable {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var nickname: String?
    @Persisted var born: Date
    @Persisted var photo: Data
    @Persisted var tag: ObjectId
    @Persisted var gait: Gait
    @Persisted var weights: List<Double>
    @Persisted var colors: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var buddy: Rambler?
    @Persisted var pack: List<Rambler>
    @Persisted var paw: Paw?
    @Persisted var extra: MixedValue

    convenience init(id: Int, name: String) {
        self.init()
        self.id = id
        self.name = name
    }
}

/// Keys renamed and one property left out, as CodingKeys do for any Swift type.
final class Renamed: Object, Codable {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted var secret = "kept"

    enum CodingKeys: String, CodingKey {
        case id = "_id"
        case title = "name"
    }
}

final class Shelter: Object, Encodable {
    @Persisted var name = ""
    @Persisted var beagles: List<Beagle>

    enum CodingKeys: String, CodingKey { case name }
}

final class Beagle: Object, Encodable {
    @Persisted var name = ""
    @Persisted(originProperty: "beagles") var shelters: LinkingObjects<Shelter>
}

/// Decodable too: its CodingKeys leave the linking objects out.
final class Pup: Object, Codable {
    @Persisted var name = ""
    @Persisted(originProperty: "pups") var litters: LinkingObjects<Litter>

    enum CodingKeys: String, CodingKey { case name }
}

final class Litter: Object {
    @Persisted var pups: List<Pup>
}

/// A model class that is not Encodable.
final class Pebble: Object {
    @Persisted var weight = 0
}

@Suite struct EncodingTests {
    let folder = TemporaryFolder()

    /// The JSON of `value` as a dictionary or array.
    func json(_ value: some Encodable) throws -> Any {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try JSONSerialization.jsonObject(with: encoder.encode(value))
    }

    func text(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A rambler with every property set, and a buddy and a pack member.
    func fullWalker() throws -> Rambler {
        let rambler = Rambler(id: 1, name: "Rex")
        rambler.nickname = "R"
        rambler.born = Date(timeIntervalSinceReferenceDate: 1_000)
        rambler.photo = Data([1, 2, 3])
        rambler.tag = try ObjectId(string: "64b7f0c2a1b2c3d4e5f60718")
        rambler.gait = .trot
        rambler.weights.append(objectsIn: [3.5, 4.0])
        rambler.colors.insert("tan")
        rambler.scores["speed"] = 9
        rambler.scores["bark"] = 7
        // (An ObjectId never set or read takes a new value when first read, which an
        // unmanaged object's encoding does not keep: these are set.)
        rambler.buddy = Rambler(id: 2, name: "Fido")
        rambler.buddy?.tag = try ObjectId(string: "64b7f0c2a1b2c3d4e5f60719")
        rambler.pack.append(Rambler(id: 3, name: "Bolt"))
        rambler.pack[0].tag = try ObjectId(string: "64b7f0c2a1b2c3d4e5f6071a")
        rambler.paw = Paw(value: ["size": 4])
        rambler.extra = .string("hello")
        return rambler
    }

    @Test func managedObjectsEncodeTheirStoredValues() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [Rambler.self]))
        let rambler = try fullWalker()
        let unmanaged = try text(rambler)
        try db.write { db.add(rambler) }
        // The same JSON once managed: the values now come from the database.
        #expect(try text(rambler) == unmanaged)
        // Changes made in the database show, the wrapper's old unmanaged value does not.
        try db.write {
            rambler.name = "Rexy"
            rambler.nickname = nil
            rambler.weights.append(5)
            rambler.scores["speed"] = nil
            rambler.buddy?.name = "Fidel"
            rambler.extra = .object(rambler.pack[0])
            rambler.paw?.size = 5
        }
        // The encoder's own forms for dates and data apply.
        let iso = JSONEncoder()
        iso.dateEncodingStrategy = .iso8601
        iso.dataEncodingStrategy = .custom { data, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(data.count)
        }
        let isoText = String(decoding: try iso.encode(rambler), as: UTF8.self)
        #expect(isoText.contains(#""born":"2001-01-01T00:16:40Z""#) && isoText.contains(#""photo":3"#))
        let object = try #require(try json(rambler) as? [String: Any])
        #expect(object["id"] as? Int == 1 && object["name"] as? String == "Rexy")
        #expect(object["nickname"] is NSNull)
        #expect(object["born"] as? Double == 1_000 && object["photo"] as? String == "AQID")
        #expect(object["tag"] as? String == "64b7f0c2a1b2c3d4e5f60718" && object["gait"] as? String == "trot")
        #expect(object["weights"] as? [Double] == [3.5, 4.0, 5.0] && object["colors"] as? [String] == ["tan"])
        #expect(object["scores"] as? [String: Int] == ["bark": 7])
        #expect((object["buddy"] as? [String: Any])?["name"] as? String == "Fidel")
        #expect((object["pack"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Bolt"])
        #expect((object["paw"] as? [String: Any])?["size"] as? Int == 5)
        #expect((object["extra"] as? [String: Any])?["name"] as? String == "Bolt", "a mixed object encodes as the object")
        // The JSON decodes back into an equal object, which a second database takes. (A mixed
        // value decodes from JSON's plain kinds only.)
        try db.write { rambler.extra = .int(12) }
        let decoded = try JSONDecoder().decode(Rambler.self, from: JSONEncoder().encode(rambler))
        #expect(decoded.name == "Rexy" && decoded.nickname == nil && decoded.weights.count == 3 && decoded.paw?.size == 5)
        #expect(decoded.buddy?.name == "Fidel" && decoded.extra == .int(12) && decoded.pack.first?.name == "Bolt")
        let copy = try Database(configuration: folder.configuration("copy.strata", objectTypes: [Rambler.self]))
        try copy.write { copy.add(decoded, update: .modified) }
        let stored = try #require(copy.object(ofType: Rambler.self, forPrimaryKey: 1))
        #expect(try text(stored) == (try text(rambler)))
    }

    @Test func frozenObjectsAndResultsEncode() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [Rambler.self]))
        try db.write {
            for i in 0..<5 { db.add(Rambler(id: i, name: "w\(i)")) }
        }
        let results = db.objects(Rambler.self).sorted(byKeyPath: "id")
        let names = try #require(try json(results) as? [[String: Any]]).map { $0["name"] as? String }
        #expect(names == ["w0", "w1", "w2", "w3", "w4"])
        // One object at a time while iterating: each accessor encodes its own object.
        var each: [String] = []
        for rambler in results { each.append(try text(rambler)) }
        #expect(each.count == 5 && Set(each).count == 5)
        let frozen = results.freeze()
        try db.write { results[0].name = "changed" }
        #expect(try text(frozen[0]).contains(#""name":"w0""#), "a frozen object encodes its version")
        #expect(try text(results[0]).contains(#""name":"changed""#))
    }

    @Test func codingKeysRenameAndLeaveOutProperties() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [Renamed.self]))
        let object = Renamed()
        object.id = 7
        object.title = "Dune"
        object.secret = "hidden"
        try db.write { db.add(object) }
        #expect(try text(object) == #"{"_id":7,"name":"Dune"}"#)
        let decoded = try JSONDecoder().decode(Renamed.self, from: Data(#"{"_id":8,"name":"Emma"}"#.utf8))
        #expect(decoded.id == 8 && decoded.title == "Emma" && decoded.secret == "kept")
    }

    @Test func linkingObjectsEncodeAsArrays() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [Shelter.self, Beagle.self]))
        try db.write {
            let beagle = db.create(Beagle.self, value: ["name": "Ace"])
            for name in ["North", "South"] {
                let shelter = db.create(Shelter.self, value: ["name": name])
                shelter.beagles.append(beagle)
            }
        }
        let beagle = try #require(db.objects(Beagle.self).first)
        let object = try #require(try json(beagle) as? [String: Any])
        let shelters = (object["shelters"] as? [[String: Any]])?.compactMap { $0["name"] as? String }.sorted()
        #expect(object["name"] as? String == "Ace" && shelters == ["North", "South"])
    }

    @Test func aDecodableModelLeavesItsLinkingObjectsOut() throws {
        let pup = try JSONDecoder().decode(Pup.self, from: Data(#"{"name": "Kit"}"#.utf8))
        let db = try Database(configuration: folder.configuration(objectTypes: [Pup.self, Litter.self]))
        try db.write { db.create(Litter.self).pups.append(pup) }
        #expect(pup.litters.count == 1)
        #expect(try text(pup) == #"{"name":"Kit"}"#)
    }

    @Test func aMixedValueHoldingANonEncodableObjectIsAnEncodingError() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [Rambler.self, Pebble.self]))
        let rambler = Rambler(id: 1, name: "Rex")
        try db.write {
            db.add(rambler)
            rambler.extra = .object(db.create(Pebble.self, value: ["weight": 3]))
        }
        #expect(throws: EncodingError.self) { _ = try JSONEncoder().encode(rambler) }
        // The other kinds encode as JSON reads them back.
        for (value, expected) in [(MixedValue.none, "null"), (.int(4), "4"), (.bool(true), "true"), (.double(2.5), "2.5"), (.string("a"), #""a""#)] {
            try db.write { rambler.extra = value }
            #expect(try text(rambler).contains(#""extra":\#(expected)"#))
            let decoded = try JSONDecoder().decode(Rambler.self, from: JSONEncoder().encode(rambler))
            #expect(decoded.extra == value)
        }
    }
}
