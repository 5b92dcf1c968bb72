/// The synced classes a client declares, sent when it connects. The server keeps, per app, the
/// union of the compatible schemas its clients declared (``merged(with:)``): additions (new
/// classes, new properties) are accepted; a client whose schema disagrees in a breaking way
/// (``breakingDifferences(from:)``: a property of another type, collection, link target or
/// optionality, another primary key or embedded-ness) is refused with
/// ``SyncErrorCode/schemaMismatch``.
public struct SyncSchema: Sendable, Hashable {
    /// The synced classes, in declaration order.
    public var classes: [SyncClassSchema]
    /// Makes a schema.
    public init(classes: [SyncClassSchema]) { self.classes = classes }
}

/// One synced class: its name, primary key and properties.
public struct SyncClassSchema: Sendable, Hashable {
    /// The class's persisted name.
    public var name: String
    /// The primary key property's name (empty for embedded classes).
    public var primaryKey: String
    /// The class's properties, in declaration order.
    public var properties: [SyncPropertySchema]
    /// Embedded classes travel inside their parents and are never subscribed to on their own.
    public var isEmbedded: Bool

    /// Makes a class schema.
    public init(name: String, primaryKey: String, properties: [SyncPropertySchema], isEmbedded: Bool = false) {
        self.name = name
        self.primaryKey = primaryKey
        self.properties = properties
        self.isEmbedded = isEmbedded
    }
}

/// One property of a synced class.
public struct SyncPropertySchema: Sendable, Hashable {
    /// The kind of value: "int", "bool", "float", "double", "string", "data", "date",
    /// "objectId", "uuid", "decimal128", "mixed", "object" (a link or embedded object).
    public var type: String
    /// The property's persisted name.
    public var name: String
    /// `.single`, `.list`, `.set` or `.map`.
    public var collection: Collection
    /// Whether the property (or each element of its collection) may be nil.
    public var isOptional: Bool
    /// The linked or embedded class, for "object" properties.
    public var objectClass: String?

    /// Whether a property holds one value or a collection of them (the raw value travels).
    public enum Collection: UInt8, Sendable, Hashable { case single, list, set, map }

    /// Makes a property schema.
    public init(name: String, type: String, collection: Collection = .single, isOptional: Bool = false, objectClass: String? = nil) {
        self.name = name
        self.type = type
        self.collection = collection
        self.isOptional = isOptional
        self.objectClass = objectClass
    }
}
