import Foundation
import Testing
@testable import StrataRealmFile

/// `RealmFile.forEachCluster`, the importer's read: a cluster's columns at a time must give
/// exactly the objects and values the object-by-object read gives (which the manifests check).
@Suite("RealmFile cluster columns")
struct ClusterColumnsTests {
    /// Every object of `className` read column by column, as (key, property → value).
    private static func objectsByColumns(_ file: RealmFile, className: String, properties: [String]) throws -> [(Int64, [String: RealmValue])] {
        var objects: [(Int64, [String: RealmValue])] = []
        try file.forEachCluster(ofClass: className, properties: properties) { keys, values in
            #expect(values.count == properties.count, "one column per property asked for")
            for column in values { #expect(column.count == keys.count, "one value per object in every column") }
            for (row, key) in keys.enumerated() {
                var object: [String: RealmValue] = [:]
                for (position, name) in properties.enumerated() { object[name] = values[position][row] }
                objects.append((key, object))
            }
        }
        return objects
    }

    @Test("every class of every fixture reads the same objects and values by columns as by objects",
          arguments: ["all-types", "people-50k", "schema-v3", "empty"])
    func columnsMatchObjects(fixture: String) throws {
        let file = try Fixtures.open(fixture)
        for objectClass in file.schema.classes where !objectClass.isEmbedded {
            let names = objectClass.properties.map(\.name)
            let byColumns = try ClusterColumnsTests.objectsByColumns(file, className: objectClass.name, properties: names)
            let byObjects = try file.objects(ofClass: objectClass.name)
            #expect(byColumns.map(\.0) == byObjects.map(\.key), "\(fixture) \(objectClass.name): the same keys in the same order")
            for ((_, values), object) in zip(byColumns, byObjects) {
                for name in names {
                    #expect(values[name] == object[name], "\(fixture) \(objectClass.name)[\(object.key)].\(name)")
                }
            }
        }
    }

    @Test("only the properties asked for are read, in the order asked")
    func readsOnlyTheColumnsAskedFor() throws {
        let file = try Fixtures.open("people-50k")
        let byColumns = try ClusterColumnsTests.objectsByColumns(file, className: "Person", properties: ["friend", "id"])
        #expect(byColumns.count == 44_961)
        let first = try #require(try file.objects(ofClass: "Person").first)
        #expect(byColumns.first?.1 == ["friend": first["friend"] ?? .null, "id": first["id"] ?? .null])
        #expect(byColumns.first?.1.count == 2)
    }

    @Test("a property the class lacks is a typed error")
    func unknownPropertyIsAnError() throws {
        let file = try Fixtures.open("people-50k")
        #expect(throws: RealmFileError.self) {
            try file.forEachCluster(ofClass: "Person", properties: ["no_such_property"]) { _, _ in }
        }
        #expect(throws: RealmFileError.self) {
            try file.forEachCluster(ofClass: "NoSuchClass", properties: ["id"]) { _, _ in }
        }
    }
}
