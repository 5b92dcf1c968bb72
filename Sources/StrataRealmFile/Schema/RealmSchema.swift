/// The schema as a Realm file stores it: its classes (tables named `class_…`) and their
/// properties.
public struct RealmSchema: Sendable, Equatable {
    /// The classes in the order of the file's table list.
    public let classes: [RealmClassSchema]

    /// The class named `name`, if the file has it.
    public subscript(className name: String) -> RealmClassSchema? {
        classes.first { $0.name == name }
    }
}

/// One class: its name, kind, primary key and stored properties.
public struct RealmClassSchema: Sendable, Equatable {
    /// The class name (the table name without Realm's `class_` prefix).
    public let name: String
    /// Whether objects of this class are embedded in others (Realm's `EmbeddedObject`).
    public let isEmbedded: Bool
    /// Whether the class is asymmetric (sync-only, write-only).
    public let isAsymmetric: Bool
    /// The primary key property's name, if the class has one.
    public let primaryKey: String?
    /// The stored properties, in column order. Linking-objects properties are not stored in
    /// a Realm file; `backlinkSources` lists what is.
    public let properties: [RealmProperty]
    /// The link properties (in this or other classes) that point at this class: Realm keeps
    /// one hidden backlink column for each.
    public let backlinkSources: [RealmBacklinkSource]

    /// The property named `name`.
    public subscript(property name: String) -> RealmProperty? {
        properties.first { $0.name == name }
    }
}

/// A link property that points at a class, for which Realm keeps a backlink column there.
public struct RealmBacklinkSource: Sendable, Hashable {
    /// The class that holds the link property.
    public let originClass: String
    /// The link property.
    public let originProperty: String
}

/// The type of a property's values (of its elements, for a collection).
public enum RealmPropertyType: String, Sendable, Equatable {
    /// Integers.
    case int
    /// Booleans.
    case bool
    /// Strings.
    case string
    /// Binary data.
    case binary
    /// Mixed values (`AnyRealmValue`).
    case mixed
    /// Dates.
    case timestamp
    /// `Float`s.
    case float
    /// `Double`s.
    case double
    /// `Decimal128`s.
    case decimal128
    /// A link to an object of `RealmProperty.linkTarget`.
    case object
    /// `ObjectId`s.
    case objectID = "object_id"
    /// `UUID`s.
    case uuid
    /// A link to an object of any class (Realm's typed link).
    case typedLink = "typed_link"
}

/// How a property holds its values.
public enum RealmCollectionKind: String, Sendable, Equatable {
    /// One value.
    case none
    /// A `List`.
    case list
    /// A `MutableSet`.
    case set
    /// A `Map` with string keys.
    case dictionary
}

/// One stored property.
public struct RealmProperty: Sendable, Equatable {
    /// The property's name as stored (Realm's persisted name).
    public let name: String
    /// The type of the value, or of each element of a collection.
    public let type: RealmPropertyType
    /// Whether the property holds one value or a collection, and which.
    public let collection: RealmCollectionKind
    /// Whether the value (each element, for a collection) may be null.
    public let isNullable: Bool
    /// Whether the property is the class's primary key.
    public let isPrimaryKey: Bool
    /// Whether the file keeps a search index for the property (primary keys always have one).
    public let isIndexed: Bool
    /// Whether the index is a full-text index.
    public let isFullTextIndexed: Bool
    /// The target class of a link property.
    public let linkTarget: String?
}
