// Decodable models: JSON into unmanaged objects (missing keys take defaults, nulls clear
// optionals), with lists, sets, maps, links, enums, ObjectIds and mixed values, then added.

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
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(Pet.self, from: Data(#"{"id": "64b7f0c2a1b2c3d4e5f60718", "extra": [1]}"#.utf8))
        }
    }
}
