public import Strata

/// How a Realm file's schema becomes a Strata schema: the first step of importing a file.
///
/// Each class becomes an object type of the same name (embedded classes stay embedded), and
/// each stored property a property of the same name: Realm's types map to Strata's kinds
/// (`binary` → `.data`, `timestamp` → `.date`, `object` → `.link` with the same target), lists,
/// sets and dictionaries to lists, sets and maps, nullability, primary keys and indexes as
/// they are. Realm's linking-objects properties are not stored in a Realm file, so they are
/// returned as `backlinkSources` for the importing app's model classes to declare.
public struct StrataSchemaMapping: Sendable {
    /// The Strata schema the file's data fits.
    public let schema: Schema
    /// Per class, the link properties that point at it (the origins of the
    /// `LinkingObjects` properties the app's model may declare).
    public let backlinkSources: [String: [RealmBacklinkSource]]

    /// Maps `realmSchema`.
    ///
    /// - Throws: ``RealmFileError/unsupportedFeature(_:)`` for what Strata's schema cannot
    ///   hold: typed-link properties, a primary key of a kind Strata does not key by, or a
    ///   schema Strata's validation refuses (its reason is in the message).
    public init(_ realmSchema: RealmSchema) throws {
        var objectSchemas: [ObjectSchema] = []
        var sources: [String: [RealmBacklinkSource]] = [:]
        for realmClass in realmSchema.classes {
            var properties: [Property] = []
            for realmProperty in realmClass.properties {
                let kind = try StrataSchemaMapping.kind(of: realmProperty, in: realmClass.name)
                if realmProperty.isPrimaryKey && !kind.canBePrimaryKey {
                    throw RealmFileError.unsupportedFeature(
                        "\(realmClass.name).\(realmProperty.name) is a \(realmProperty.type.rawValue) primary key, which Strata cannot key objects by")
                }
                properties.append(Property(
                    name: realmProperty.name, kind: kind, isOptional: realmProperty.isNullable || kind == .link,
                    isList: realmProperty.collection == .list, isSet: realmProperty.collection == .set,
                    isMap: realmProperty.collection == .dictionary, isPrimaryKey: realmProperty.isPrimaryKey,
                    isIndexed: realmProperty.isIndexed && !realmProperty.isPrimaryKey && kind.canBeIndexed,
                    objectType: realmProperty.linkTarget))
            }
            objectSchemas.append(ObjectSchema(name: realmClass.name, properties: properties, isEmbedded: realmClass.isEmbedded))
            if !realmClass.backlinkSources.isEmpty { sources[realmClass.name] = realmClass.backlinkSources }
        }
        let schema = Schema(objectSchemas)
        do {
            try schema.validate()
        } catch {
            throw RealmFileError.unsupportedFeature("a schema Strata cannot hold: \(error)")
        }
        self.schema = schema
        backlinkSources = sources
    }

    private static func kind(of property: RealmProperty, in className: String) throws -> PropertyType {
        switch property.type {
        case .int: return .int
        case .bool: return .bool
        case .string: return .string
        case .binary: return .data
        case .mixed: return .mixed
        case .timestamp: return .date
        case .float: return .float
        case .double: return .double
        case .decimal128: return .decimal128
        case .object: return .link
        case .objectID: return .objectId
        case .uuid: return .uuid
        case .typedLink:
            throw RealmFileError.unsupportedFeature("\(className).\(property.name) is a typed link, which Strata's schema has no kind for")
        }
    }
}
