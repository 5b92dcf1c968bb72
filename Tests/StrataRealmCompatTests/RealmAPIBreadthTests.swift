// Smaller corners of RealmSwift's API as its own tests use them — ThreadSafeReference's
// isInvalidated, reading the schema (Schema, ObjectSchema, Property), and Migration.create
// with an array value — compiled against the RealmSwift names.
import Foundation
import Testing
import StrataRealmCompat

class BreadthOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var nickname: String?
    @Persisted var dogs: List<BreadthDog>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var favourite: BreadthDog?
    @Persisted var anything: AnyRealmValue
}

class BreadthDog: Object {
    @Persisted var name = ""
}

/// The type a migration creates objects of (version 1 of the breadth migration schema).
class BreadthPetV1: Object {
    override class func className() -> String { "BreadthPet" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
}

private func breadthConfiguration() -> Realm.Configuration {
    Realm.Configuration(inMemoryIdentifier: "breadth-\(UUID().uuidString)",
                        objectTypes: [BreadthOwner.self, BreadthDog.self])
}

@Suite("RealmSwift API breadth")
struct RealmAPIBreadthTests {
    // MARK: ThreadSafeReference.isInvalidated

    @Test func threadSafeReferenceIsInvalidatedOnlyOnceResolved() throws {
        let realm = try Realm(configuration: breadthConfiguration())
        let owner = BreadthOwner()
        owner.id = 1
        try realm.write { realm.add(owner) }

        let reference = ThreadSafeReference(to: owner)
        let copy = reference
        #expect(!reference.isInvalidated)

        let resolved = realm.resolve(reference)
        #expect(resolved?.id == 1)
        #expect(reference.isInvalidated)
        #expect(copy.isInvalidated, "a copy shares its original's single resolution")
    }

    @Test func threadSafeReferenceToResultsIsInvalidatedOnceResolved() throws {
        let realm = try Realm(configuration: breadthConfiguration())
        try realm.write { realm.create(BreadthOwner.self, value: ["id": 1]) }
        let reference = ThreadSafeReference(to: realm.objects(BreadthOwner.self))
        #expect(!reference.isInvalidated)
        #expect(realm.resolve(reference)?.count == 1)
        #expect(reference.isInvalidated)
    }

    @Test func referenceToDeletedObjectResolvesToNilAndIsThenInvalidated() throws {
        let realm = try Realm(configuration: breadthConfiguration())
        let owner = BreadthOwner()
        try realm.write { realm.add(owner) }
        let reference = ThreadSafeReference(to: owner)
        try realm.write { realm.delete(owner) }
        #expect(!reference.isInvalidated, "deletion alone does not consume the reference")
        #expect(realm.resolve(reference) == nil)
        #expect(reference.isInvalidated)
    }

    // MARK: Schema

    @Test func schemaListsObjectSchemasAndFindsThemByClassName() throws {
        let realm = try Realm(configuration: breadthConfiguration())
        let classNames = Set(realm.schema.objectSchema.map(\.className))
        #expect(classNames == ["BreadthOwner", "BreadthDog"])
        #expect(realm.schema["BreadthOwner"]?.className == "BreadthOwner")
        #expect(realm.schema["NoSuchClass"] == nil)
    }

    @Test func objectSchemaNamesItsPrimaryKeyAndProperties() throws {
        let realm = try Realm(configuration: breadthConfiguration())
        let owner = try #require(realm.schema["BreadthOwner"])
        #expect(owner.primaryKeyProperty?.name == "id")
        #expect(owner.properties.map(\.name) == ["id", "name", "nickname", "dogs", "tags", "scores", "favourite", "anything"])
        #expect(owner["nickname"]?.name == "nickname")
        #expect(owner["missing"] == nil)
        #expect(try #require(realm.schema["BreadthDog"]).primaryKeyProperty == nil)
        #expect(BreadthOwner().objectSchema.className == "BreadthOwner")
    }

    @Test func propertiesDescribeTypeOptionalityIndexingAndTargets() throws {
        let realm = try Realm(configuration: breadthConfiguration())
        let owner = try #require(realm.schema["BreadthOwner"])

        let id = try #require(owner["id"])
        #expect(id.type == .int)
        #expect(!id.isOptional)

        let name = try #require(owner["name"])
        #expect(name.type == .string)
        #expect(name.isIndexed)
        #expect(!name.isOptional)

        let nickname = try #require(owner["nickname"])
        #expect(nickname.type == .string)
        #expect(nickname.isOptional)
        #expect(!nickname.isIndexed)
        #expect(nickname.objectClassName == nil)

        let dogs = try #require(owner["dogs"])
        #expect(dogs.type == .object)
        #expect(dogs.isArray)
        #expect(!dogs.isSet && !dogs.isMap)
        #expect(dogs.objectClassName == "BreadthDog")

        let tags = try #require(owner["tags"])
        #expect(tags.type == .string)
        #expect(tags.isSet && !tags.isArray)

        let scores = try #require(owner["scores"])
        #expect(scores.type == .int)
        #expect(scores.isMap && !scores.isArray)

        let favourite = try #require(owner["favourite"])
        #expect(favourite.type == .object)
        #expect(favourite.isOptional)
        #expect(favourite.objectClassName == "BreadthDog")

        let anything = try #require(owner["anything"])
        #expect(anything.type == .any)
    }

    @Test func propertyTypeMatchesInASwitchWithRealmSwiftCaseNames() throws {
        let realm = try Realm(configuration: breadthConfiguration())
        let owner = try #require(realm.schema["BreadthOwner"])
        let kinds = owner.properties.map { property -> String in
            switch property.type {
            case .object: return "object"
            case .any: return "any"
            case .int: return "int"
            case .string: return "string"
            default: return "other"
            }
        }
        #expect(kinds == ["int", "string", "string", "object", "string", "int", "object", "any"])
    }

    // MARK: Migration.create

    @Test func migrationCreatesObjectsFromArraysInSchemaOrderAndFromDictionaries() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-breadth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fileURL = folder.appendingPathComponent("migration.strata")

        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: fileURL, objectTypes: [BreadthDog.self]))
            try realm.write { realm.create(BreadthDog.self, value: ["name": "Rex"]) }
        }

        let configuration = Realm.Configuration(fileURL: fileURL, schemaVersion: 1, migrationBlock: { migration, oldSchemaVersion in
            guard oldSchemaVersion < 1 else { return }
            migration.create("BreadthPet", value: [1, "Tom", 3])
            migration.create("BreadthPet", value: ["id": 2, "name": "Kit"])
        }, objectTypes: [BreadthDog.self, BreadthPetV1.self])
        let realm = try Realm(configuration: configuration)

        let tom = try #require(realm.object(ofType: BreadthPetV1.self, forPrimaryKey: 1))
        #expect(tom.name == "Tom")
        #expect(tom.age == 3)
        let kit = try #require(realm.object(ofType: BreadthPetV1.self, forPrimaryKey: 2))
        #expect(kit.name == "Kit")
        #expect(kit.age == 0, "a property the dictionary leaves out starts at its default")
        #expect(realm.objects(BreadthPetV1.self).count == 2)
    }
}
