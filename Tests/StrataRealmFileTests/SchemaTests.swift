import Foundation
import Testing
@testable import StrataRealmFile

/// The schema the reader finds in each fixture, against the manifest's schema.
@Suite("RealmFile schema")
struct SchemaTests {
    @Test("every fixture's classes, properties, keys and indexes match the manifest", arguments: ["empty", "schema-v3", "all-types", "people-50k"])
    func schemaMatchesManifest(fixture: String) throws {
        let file = try Fixtures.open(fixture)
        let manifest = try Fixtures.manifest(fixture)
        let expectedClasses = manifest["schema"] as? [[String: Any]] ?? []
        #expect(Set(file.schema.classes.map(\.name)) == Set(expectedClasses.compactMap { $0["name"] as? String }))
        for expected in expectedClasses {
            let name = expected["name"] as? String ?? ""
            guard let actual = file.schema[className: name] else {
                Issue.record("class \(name) not found")
                continue
            }
            #expect(actual.isEmbedded == (expected["embedded"] as? Bool ?? false), "\(name) embedded")
            #expect(actual.primaryKey == expected["primary_key"] as? String, "\(name) primary key")
            let properties = expected["properties"] as? [[String: Any]] ?? []
            let stored = properties.filter { $0["computed"] as? Bool != true }
            #expect(actual.properties.map(\.name) == stored.compactMap { $0["name"] as? String }, "\(name) property order")
            for property in stored {
                let propertyName = property["name"] as? String ?? ""
                guard let read = actual[property: propertyName] else {
                    Issue.record("\(name).\(propertyName) not found")
                    continue
                }
                #expect(read.type.rawValue == property["type"] as? String, "\(name).\(propertyName) type")
                #expect(read.collection.rawValue == property["collection"] as? String, "\(name).\(propertyName) collection")
                #expect(read.isNullable == (property["nullable"] as? Bool ?? false), "\(name).\(propertyName) nullable")
                #expect(read.isPrimaryKey == (property["primary_key"] as? Bool ?? false), "\(name).\(propertyName) primary key")
                #expect(read.isIndexed == (property["indexed"] as? Bool ?? false), "\(name).\(propertyName) indexed")
                #expect(read.linkTarget == property["link_target"] as? String, "\(name).\(propertyName) link target")
            }
            for computed in properties where computed["computed"] as? Bool == true {
                guard let origin = computed["backlink_origin"] as? [String: Any] else { continue }
                let source = RealmBacklinkSource(originClass: origin["class"] as? String ?? "", originProperty: origin["property"] as? String ?? "")
                #expect(actual.backlinkSources.contains(source), "\(name) keeps backlinks for \(source)")
            }
        }
    }

    @Test("the file format and schema version come from the header and the metadata table", arguments: ["empty", "schema-v3", "all-types", "people-50k"])
    func versions(fixture: String) throws {
        let file = try Fixtures.open(fixture)
        let manifest = try Fixtures.manifest(fixture)
        #expect(file.fileFormatVersion == manifest["file_format_version"] as? Int)
        #expect(file.schemaVersion == (manifest["schema_version"] as? NSNumber).map { UInt64($0.int64Value) })
        #expect(file.isStreamingForm == false)
    }

    @Test("a removed column leaves no property behind (schema-v3 dropped Item.qty)")
    func removedColumnIsGone() throws {
        let file = try Fixtures.open("schema-v3")
        let item = try #require(file.schema[className: "Item"])
        #expect(item[property: "qty"] == nil)
        #expect(item[property: "price"]?.type == .double)
        #expect(item[property: "tags"]?.collection == .list)
    }
}
