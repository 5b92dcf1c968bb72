import Foundation
import Testing
@testable import StrataRealmFile

/// Every object and value of the fixtures, against their manifests.
@Suite("RealmFile objects")
struct ObjectValueTests {
    @Test("schema-v3: every object and value matches the manifest")
    func schemaV3Values() throws {
        let comparison = try ManifestComparison(file: try Fixtures.open("schema-v3"), manifest: try Fixtures.manifest("schema-v3"))
        #expect(try comparison.compareClass("Item") == 20)
        #expect(try comparison.compareClass("Note") == 4)
    }

    @Test("empty: every class exists and holds no objects")
    func emptyHasNoObjects() throws {
        let file = try Fixtures.open("empty")
        for objectClass in file.schema.classes {
            #expect(try file.objectCount(ofClass: objectClass.name) == 0)
            #expect(try file.objects(ofClass: objectClass.name).isEmpty)
        }
    }

    @Test("all-types: every value of every class matches the manifest",
          arguments: ["Scalars", "OptionalScalars", "MixedValues", "PrimitiveLists", "PrimitiveSets", "PrimitiveDictionaries",
                      "Target", "Links", "Unkeyed", "Owner", "PkInt", "PkString", "PkObjectId", "PkUuid", "PkNullableInt",
                      "Indexed", "IntWidths", "Strings", "Binaries"])
    func allTypesValues(className: String) throws {
        let file = try Fixtures.open("all-types")
        let manifest = try Fixtures.manifest("all-types")
        let comparison = try ManifestComparison(file: file, manifest: manifest)
        let expectedCount = ((manifest["object_counts"] as? [String: Any])?[className] as? NSNumber)?.intValue
        #expect(try file.objectCount(ofClass: className) == expectedCount)
        #expect(try comparison.compareClass(className) > 0)
    }

    @Test("people-50k: 44,961 people across many clusters, every value matching the manifest")
    func peopleValues() throws {
        let file = try Fixtures.open("people-50k")
        #expect(try file.objectCount(ofClass: "Person") == 44_961)
        let comparison = try ManifestComparison(file: file, manifest: try Fixtures.manifest("people-50k"))
        #expect(try comparison.compareClass("Person") == 44_961 * 7)
    }

    @Test("an object is found by its key, and a missing key gives nil")
    func objectByKey() throws {
        let file = try Fixtures.open("people-50k")
        let all = try file.objects(ofClass: "Person")
        let sample = stride(from: 0, to: all.count, by: 997).map { all[$0] }
        for object in sample {
            #expect(try file.object(ofClass: "Person", key: object.key) == object)
        }
        #expect(try file.object(ofClass: "Person", key: 1 << 40) == nil)
        #expect(throws: RealmFileError.noSuchClass("Nobody")) { try file.objects(ofClass: "Nobody") }
    }
}
