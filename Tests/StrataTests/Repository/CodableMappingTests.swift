import Foundation
import Testing
@testable import Strata

@Suite("Codable mapping to columns")
struct CodableMappingTests {
    @Test("each stored property of a Codable type gets the column its type maps to")
    func columnsFollowTheType() throws {
        let table = try CodableTable(EveryKind.self, typeName: "EveryKind", indexes: ["string"])
        let properties = Dictionary(uniqueKeysWithValues: table.schema.properties.map { ($0.name, $0) })
        #expect(table.schema.properties.first?.name == "id")
        #expect(properties["id"]?.isPrimaryKey == true)
        let expected: [String: PropertyType] = [
            "int": .int, "int8": .int, "uint32": .int, "uint64": .int, "double": .double, "float": .float, "bool": .bool,
            "string": .string, "date": .date, "data": .data, "uuid": .uuid, "url": .string, "decimal": .decimal128,
            "decimal128": .decimal128, "objectId": .objectId, "priority": .string, "level": .int,
        ]
        for (name, kind) in expected {
            #expect(properties[name]?.kind == kind, "\(name)")
            #expect(properties[name]?.isOptional == false, "\(name)")
            #expect(properties[name]?.isList == false, "\(name)")
        }
        #expect(properties["string"]?.isIndexed == true)
        #expect(properties["optionalString"]?.isOptional == true && properties["optionalString"]?.kind == .string)
        #expect(properties["optionalDate"]?.isOptional == true && properties["optionalDate"]?.kind == .date)
        #expect(properties["optionalLevel"]?.isOptional == true && properties["optionalLevel"]?.kind == .int)
        #expect(properties["tags"]?.isList == true && properties["tags"]?.kind == .string && properties["tags"]?.isMap == false)
        #expect(properties["maybes"]?.isList == true && properties["maybes"]?.isOptional == true)
        #expect(properties["counts"]?.isMap == true && properties["counts"]?.kind == .int)
        #expect(table.jsonKeys == ["optionalTags", "note"])
        #expect(properties["optionalTags"]?.isOptional == true)
        #expect(properties["note"]?.kind == .string)
        #expect(properties["address"]?.kind == .link && properties["address"]?.objectType == "EveryKind_RepositoryAddress")
        #expect(properties["secondAddress"]?.kind == .link && properties["secondAddress"]?.objectType == "EveryKind_RepositoryAddress")
        #expect(properties["history"]?.kind == .link && properties["history"]?.isList == true)
        #expect(properties["place"]?.objectType == "EveryKind_RepositoryPlace")
        let embedded = Dictionary(uniqueKeysWithValues: table.schemas.dropFirst().map { ($0.name, $0) })
        #expect(Set(embedded.keys) == ["EveryKind_RepositoryAddress", "EveryKind_RepositoryPlace", "EveryKind_RepositoryPlace_RepositoryAddress"])
        #expect(embedded.values.allSatisfy { $0.isEmbedded })
        let place = embedded["EveryKind_RepositoryPlace"]
        #expect(place?.properties.map(\.name) == ["name", "address", "labels", "counts", "visited"])
        #expect(place?.properties[1].objectType == "EveryKind_RepositoryPlace_RepositoryAddress")
        #expect(place?.properties[2].isList == true && place?.properties[3].isMap == true && place?.properties[4].isOptional == true)
    }

    @Test("an enum the probe cannot decode from placeholders is a typed error naming the property")
    func nonCaseIterableEnumIsATypedError() {
        #expect {
            _ = try CodableTable(Diary.self, typeName: "Diary", indexes: [])
        } throws: { error in
            guard case .cannotDeriveSchema(let type, let property, _) = error as? RepositoryError else { return false }
            return type == "Diary" && property == "mood"
        }
    }

    @Test("an id encoded under another key is refused")
    func idUnderAnotherKeyIsRefused() {
        #expect {
            _ = try CodableTable(RenamedIdentifier.self, typeName: "RenamedIdentifier", indexes: [])
        } throws: { error in
            if case .unsupportedIdentifier(type: "RenamedIdentifier", _) = error as? RepositoryError { return true }
            return false
        }
    }

    @Test("a type that contains itself is probed once: the recursive properties are JSON")
    func recursiveTypeStopsTheProbe() throws {
        let table = try CodableTable(Outline.self, typeName: "Outline", indexes: [])
        #expect(table.schema.properties.map(\.name) == ["id", "title", "children", "byName"])
        #expect(table.jsonKeys == ["children", "byName"])
    }

    @Test("an index on a property that cannot take one is a typed error")
    func indexOnAListIsRefused() {
        #expect(throws: RepositoryError.self) { _ = try CodableTable(EveryKind.self, typeName: "EveryKind", indexes: ["tags"]) }
        #expect(throws: RepositoryError.self) { _ = try CodableTable(EveryKind.self, typeName: "EveryKind", indexes: ["nope"]) }
    }
}
