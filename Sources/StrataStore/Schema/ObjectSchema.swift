/// One object type: a table of objects.
public struct ObjectSchema: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The type's name (the model class's name).
    public var name: String
    /// Its properties, in declaration order (superclass properties first).
    public var properties: [PropertySchema]
    /// The table's id in the file, given by the store; 0 until the schema is stored.
    public var tableID: UInt32
    /// Whether the type's objects are embedded: each belongs to the one object whose link or
    /// list holds it, is deleted with it or when that link stops pointing at it, and cannot
    /// exist on its own (RealmSwift's `EmbeddedObject`).
    public var isEmbedded: Bool

    /// Creates an object type; the store gives it its table id when the schema is stored.
    public init(name: String, properties: [PropertySchema], tableID: UInt32 = 0, isEmbedded: Bool = false) {
        self.name = name
        self.properties = properties
        self.tableID = tableID
        self.isEmbedded = isEmbedded
    }

    // Coded by hand so that `isEmbedded` is written only when true: files without embedded
    // types keep their schema bytes.
    private enum CodingKeys: String, CodingKey { case name, properties, tableID, isEmbedded }

    /// Decodes a type as the file stores it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name),
                  properties: try container.decode([PropertySchema].self, forKey: .properties),
                  tableID: try container.decode(UInt32.self, forKey: .tableID),
                  isEmbedded: try container.decodeIfPresent(Bool.self, forKey: .isEmbedded) ?? false)
    }

    /// Encodes the type as the file stores it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(properties, forKey: .properties)
        try container.encode(tableID, forKey: .tableID)
        if isEmbedded { try container.encode(true, forKey: .isEmbedded) }
    }

    /// The index of the primary-key property, if there is one.
    public var primaryKeyIndex: Int? { properties.firstIndex(where: \.isPrimaryKey) }

    /// The index of the property with this name, or else with this persisted name (see
    /// `PropertySchema.persistedName`): queries and key paths may use either, as RealmSwift's
    /// do.
    public func propertyIndex(named name: String) -> Int? {
        properties.firstIndex { $0.name == name } ?? properties.firstIndex { $0.persistedName == name }
    }

    /// The index of the property the file stores under this name.
    public func propertyIndex(persistedAs name: String) -> Int? { properties.firstIndex { $0.persistedName == name } }

    /// The type and its properties, one per line between braces.
    public var description: String {
        (isEmbedded ? "embedded " : "") + "\(name) {\n" + properties.map { "    \($0)" }.joined(separator: "\n") + "\n}"
    }

    /// Checks the rules every object type must follow.
    public func validate() throws(StoreError) {
        if isEmbedded, let key = primaryKeyIndex {
            throw .invalidSchema(type: name, property: properties[key].name, reason: "an embedded type cannot have a primary key")
        }
        var seen: Set<String> = []
        var persisted: Set<String> = []
        var primaryKeys = 0
        for property in properties {
            guard seen.insert(property.name).inserted else {
                throw .invalidSchema(type: name, property: property.name, reason: "the property is declared twice")
            }
            guard !property.persistedName.isEmpty else {
                throw .invalidSchema(type: name, property: property.name, reason: "its persisted name is empty")
            }
            guard persisted.insert(property.persistedName).inserted else {
                throw .invalidSchema(type: name, property: property.name,
                                     reason: "its persisted name '\(property.persistedName)' is another property's persisted name too")
            }
            if property.isPrimaryKey {
                primaryKeys += 1
                guard primaryKeys == 1 else {
                    throw .invalidSchema(type: name, property: property.name,
                                         reason: "a type can have only one primary key, and '\(properties.first(where: \.isPrimaryKey)!.name)' is one already")
                }
                guard property.kind.canBePrimaryKey && !property.isList else {
                    throw .invalidSchema(type: name, property: property.name,
                                         reason: "a primary key must be Int, String, ObjectId, UUID or Bool (or an optional of one), not \(property.typeDescription)")
                }
            }
            if property.isIndexed && !(property.kind.canBeIndexed && !property.isList) {
                throw .invalidSchema(type: name, property: property.name,
                                     reason: "only Int, String, Bool, Date, ObjectId, UUID and mixed properties can be indexed, not \(property.typeDescription)")
            }
            if property.columnID >= 0x8000 {
                throw .invalidSchema(type: name, property: property.name,
                                     reason: "the type has used up its 32,767 column ids (each property added by a migration takes a new one)")
            }
            if property.isMap && property.isSet {
                throw .invalidSchema(type: name, property: property.name, reason: "a property cannot be both a map and a set")
            }
            if property.kind == .link && property.objectType == nil {
                throw .invalidSchema(type: name, property: property.name, reason: "a link needs a target type")
            }
        }
    }
}
