import Foundation
import Strata
import Testing
@testable import StrataRealmFile

/// The Realm schema of each fixture mapped to a Strata schema.
@Suite("Realm schema to Strata schema")
struct StrataSchemaMappingTests {
    @Test("every fixture's classes and properties map one to one, with kinds, collections and keys", arguments: ["empty", "schema-v3", "all-types", "people-50k"])
    func mapsEveryProperty(fixture: String) throws {
        let realm = try Fixtures.open(fixture)
        let mapping = try StrataSchemaMapping(realm.schema)
        #expect(mapping.schema.objectSchemas.map(\.name) == realm.schema.classes.map(\.name))
        let kinds: [RealmPropertyType: PropertyType] = [
            .int: .int, .bool: .bool, .string: .string, .binary: .data, .mixed: .mixed, .timestamp: .date,
            .float: .float, .double: .double, .decimal128: .decimal128, .object: .link, .objectID: .objectId, .uuid: .uuid,
        ]
        for realmClass in realm.schema.classes {
            let strataClass = try #require(mapping.schema[realmClass.name])
            #expect(strataClass.isEmbedded == realmClass.isEmbedded)
            #expect(strataClass.properties.map(\.name) == realmClass.properties.map(\.name))
            for (realmProperty, strataProperty) in zip(realmClass.properties, strataClass.properties) {
                let path = "\(realmClass.name).\(realmProperty.name)"
                #expect(strataProperty.kind == kinds[realmProperty.type], "\(path) kind")
                #expect(strataProperty.isList == (realmProperty.collection != .none), "\(path) collection")
                #expect(strataProperty.isSet == (realmProperty.collection == .set), "\(path) set")
                #expect(strataProperty.isMap == (realmProperty.collection == .dictionary), "\(path) map")
                #expect(strataProperty.isPrimaryKey == realmProperty.isPrimaryKey, "\(path) primary key")
                #expect(strataProperty.objectType == realmProperty.linkTarget, "\(path) target")
                if realmProperty.type != .object && realmProperty.type != .mixed {
                    #expect(strataProperty.isOptional == realmProperty.isNullable, "\(path) optional")
                }
            }
        }
    }

    @Test("all-types' backlink sources are kept for the model's LinkingObjects")
    func backlinkSources() throws {
        let mapping = try StrataSchemaMapping(try Fixtures.open("all-types").schema)
        let target = mapping.backlinkSources["Target"] ?? []
        for property in ["to_one", "to_many", "to_dict"] {
            #expect(target.contains(RealmBacklinkSource(originClass: "Links", originProperty: property)), "Links.\(property)")
        }
        #expect(mapping.backlinkSources.values.allSatisfy { !$0.isEmpty })
    }

    /// A schema with `property` (beside a primary key) in class `Holder`.
    private static func schema(with property: RealmProperty) -> RealmSchema {
        let id = RealmProperty(name: "id", type: .int, collection: .none, isNullable: false, isPrimaryKey: true, isIndexed: true,
                               isFullTextIndexed: false, linkTarget: nil)
        return RealmSchema(classes: [
            RealmClassSchema(name: "Holder", isEmbedded: false, isAsymmetric: false, primaryKey: "id", properties: [id, property],
                             backlinkSources: []),
        ])
    }

    @Test("a typed link property (alone or in a collection) is refused with an error naming it, not misread",
          arguments: [RealmCollectionKind.none, .list, .set, .dictionary])
    func typedLinksAreRefused(collection: RealmCollectionKind) throws {
        let property = RealmProperty(name: "anything", type: .typedLink, collection: collection, isNullable: true, isPrimaryKey: false,
                                     isIndexed: false, isFullTextIndexed: false, linkTarget: nil)
        #expect(throws: RealmFileError.unsupportedFeature("Holder.anything is a typed link, which Strata's schema has no kind for")) {
            _ = try StrataSchemaMapping(Self.schema(with: property))
        }
    }
}
