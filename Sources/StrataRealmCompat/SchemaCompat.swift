// RealmSwift's names for reading a schema (`realm.schema`, `object.objectSchema`,
// `migration.oldSchema`). Forwarders only; the schema types are Strata's.

public import Strata

extension Schema {
    /// RealmSwift's name for `objectSchemas`: the object types, in the order they were first
    /// stored.
    public var objectSchema: [ObjectSchema] { objectSchemas }
}

extension ObjectSchema {
    /// RealmSwift's name for `name`: the object type's name.
    public var className: String { name }

    /// The primary-key property, nil if the type has none.
    public var primaryKeyProperty: Property? { primaryKeyIndex.map { properties[$0] } }

    /// The property with this name, nil if the type has none.
    public subscript(propertyName: String) -> Property? {
        propertyIndex(named: propertyName).map { properties[$0] }
    }
}

extension Property {
    /// RealmSwift's name for `kind`: how the property's values (a collection's elements) are
    /// stored. Links are `.link` (RealmSwift's `.object`), mixed values `.mixed` (`.any`).
    public var type: PropertyType { kind }

    /// RealmSwift's name for `objectType`: the linked type's name, for links and collections
    /// of objects; nil otherwise.
    public var objectClassName: String? { objectType }

    /// Whether the property is a `List` (not a `MutableSet` or `Map`).
    public var isArray: Bool { isList && !isSet && !isMap }
}

extension PropertyType {
    /// RealmSwift's name for `.link`: a link to an object, or a collection of them.
    public static var object: PropertyType { .link }

    /// RealmSwift's name for `.mixed`: an `AnyRealmValue` property.
    public static var any: PropertyType { .mixed }
}
