/// The synced classes a client declares, sent when it connects. The server keeps the first
/// schema it sees for an app and accepts additions (new classes, new optional properties);
/// a client whose schema disagrees in a breaking way (a property of another kind, another
/// primary key) is refused with ``SyncErrorCode/schemaMismatch``.
public struct SyncSchema: Sendable, Hashable {
    public var classes: [SyncClassSchema]
    public init(classes: [SyncClassSchema]) { self.classes = classes }
}

public struct SyncClassSchema: Sendable, Hashable {
    public var name: String
    public var primaryKey: String
    public var properties: [SyncPropertySchema]
    /// Embedded classes travel inside their parents and are never subscribed to on their own.
    public var isEmbedded: Bool

    public init(name: String, primaryKey: String, properties: [SyncPropertySchema], isEmbedded: Bool = false) {
        self.name = name
        self.primaryKey = primaryKey
        self.properties = properties
        self.isEmbedded = isEmbedded
    }
}

public struct SyncPropertySchema: Sendable, Hashable {
    /// The kind of value: "int", "bool", "float", "double", "string", "data", "date",
    /// "objectId", "uuid", "decimal128", "mixed", "object" (a link or embedded object).
    public var type: String
    public var name: String
    /// `.single`, `.list`, `.set` or `.map`.
    public var collection: Collection
    public var isOptional: Bool
    /// The linked or embedded class, for "object" properties.
    public var objectClass: String?

    public enum Collection: UInt8, Sendable, Hashable { case single, list, set, map }

    public init(name: String, type: String, collection: Collection = .single, isOptional: Bool = false, objectClass: String? = nil) {
        self.name = name
        self.type = type
        self.collection = collection
        self.isOptional = isOptional
        self.objectClass = objectClass
    }
}
