// The shape of the objects a file holds: object types, their properties, and the stable ids
// the store gives tables and columns so that renames and migrations never rewrite keys.

/// How a property's values are stored.
public enum PropertyKind: UInt8, Sendable, Hashable, Codable, CustomStringConvertible {
    case bool = 1, int, float, double, string, data, date, uuid, objectId, decimal128
    /// A link to an object of another (or the same) type.
    case link
    /// A value of any of the kinds above, or nil: RealmSwift's `AnyRealmValue`. Stored with
    /// variable width, a tag byte (the value's kind) before the value's bytes; a link names
    /// its target's table (`StoreValue.typedLink`). Always optional: nil is `.none`.
    case mixed

    /// Bytes per value in a fixed-width column; 0 for variable-width kinds.
    public var width: Int {
        switch self {
        case .bool: 1
        case .int, .double, .date, .link: 8
        case .float: 4
        case .string, .data, .mixed: 0
        case .uuid, .decimal128: 16
        case .objectId: 12
        }
    }

    /// Whether the values have a variable length (strings and data).
    public var isVariable: Bool { self == .string || self == .data || self == .mixed }

    /// Kinds a primary key may have.
    public var canBePrimaryKey: Bool {
        switch self {
        case .int, .string, .objectId, .uuid, .bool: true
        default: false
        }
    }

    /// Whether a property of this kind stores a (non-nil) value of kind `kind`: its own kind,
    /// or for a mixed property any kind but a plain link (a mixed value's object names its
    /// table: `StoreValue.typedLink`, of kind `.mixed`).
    @inline(__always)
    public func stores(_ kind: PropertyKind) -> Bool {
        kind == self || (self == .mixed && kind != .link)
    }

    /// Kinds whose values `@sum` and `@avg` add up (and `@min` and `@max` order, with dates):
    /// numbers, and mixed values, of which the numbers count.
    public var isSummable: Bool {
        switch self {
        case .int, .float, .double, .decimal128, .mixed: true
        default: false
        }
    }

    /// Kinds a secondary index may cover.
    public var canBeIndexed: Bool {
        switch self {
        case .int, .string, .bool, .date, .objectId, .uuid, .mixed: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .uuid: "uuid"
        case .objectId: "objectId"
        case .decimal128: "decimal128"
        case .link: "object"
        case .mixed: "mixed"
        }
    }
}

/// One property of an object type.
public struct PropertySchema: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The property's name, as declared in the model class.
    public var name: String
    /// How values are stored.
    public var kind: PropertyKind
    /// Whether the property can hold nil. Links are always optional.
    public var isOptional: Bool
    /// Whether the property is a list of values (`List<T>`, or `MutableSet<T>` with `isSet`).
    public var isList: Bool
    /// Whether the list holds each value at most once (`MutableSet<T>`). Stored as a list; only
    /// the object layer keeps the elements distinct.
    public var isSet: Bool
    /// Whether the property maps string keys to values (`Map<String, T>`). Its values are
    /// stored as a list, in the order of their keys, and its keys beside them
    /// (`TableAccess.mapKeys`); `kind`, `isOptional` and `objectType` describe the values.
    public var isMap: Bool
    /// Whether this is the type's primary key.
    public var isPrimaryKey: Bool
    /// Whether a secondary index covers this property.
    public var isIndexed: Bool
    /// For links and lists of objects: the name of the target type.
    public var objectType: String?
    /// The column's id in the file, given by the store; 0 until the schema is stored.
    public var columnID: UInt16

    public init(name: String, kind: PropertyKind, isOptional: Bool = false, isList: Bool = false, isSet: Bool = false,
                isMap: Bool = false, isPrimaryKey: Bool = false, isIndexed: Bool = false, objectType: String? = nil,
                columnID: UInt16 = 0) {
        self.name = name
        self.kind = kind
        self.isOptional = isOptional || kind == .mixed  // a mixed value may always be nil
        self.isList = isList || isSet || isMap
        self.isSet = isSet
        self.isMap = isMap
        self.isPrimaryKey = isPrimaryKey
        self.isIndexed = isIndexed
        self.objectType = objectType
        self.columnID = columnID
    }

    /// The type as a user would write it, e.g. `string?`, `list<int>`, `object<Person>`.
    public var typeDescription: String {
        var base = kind == .link ? "object<\(objectType ?? "?")>" : kind.description
        if isOptional && kind != .link && kind != .mixed { base += "?" }
        if isMap {
            base = "map<string, \(base)>"
        } else if isList {
            base = isSet ? "set<\(base)>" : "list<\(base)>"
        }
        return base
    }

    public var description: String {
        var text = "\(name): \(typeDescription)"
        if isPrimaryKey { text += " [primary key]" }
        if isIndexed { text += " [indexed]" }
        return text
    }

    /// Whether two properties store values the same way (ignoring ids and indexing).
    public func hasSameStorage(as other: PropertySchema) -> Bool {
        holdsValuesLike(other) && isOptional == other.isOptional && isPrimaryKey == other.isPrimaryKey
    }

    /// Whether two properties hold their values the same way, whether or not either is
    /// optional or the primary key (column chunks record their own nulls): a migration that
    /// makes a property optional, required or the primary key keeps its values in its column,
    /// turns the nulls of one made required into its type's default, and builds the key's
    /// index from the values.
    public func holdsValuesLike(_ other: PropertySchema) -> Bool {
        kind == other.kind && isList == other.isList && isSet == other.isSet
            && isMap == other.isMap && objectType == other.objectType
    }

    // Coded by hand so that `isSet` and `isMap` are written only when true: files without sets
    // and maps keep the stored schema they had, and readers that predate them read them unchanged.
    private enum CodingKeys: String, CodingKey {
        case name, kind, isOptional, isList, isSet, isMap, isPrimaryKey, isIndexed, objectType, columnID
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name),
                  kind: try container.decode(PropertyKind.self, forKey: .kind),
                  isOptional: try container.decode(Bool.self, forKey: .isOptional),
                  isList: try container.decode(Bool.self, forKey: .isList),
                  isSet: try container.decodeIfPresent(Bool.self, forKey: .isSet) ?? false,
                  isMap: try container.decodeIfPresent(Bool.self, forKey: .isMap) ?? false,
                  isPrimaryKey: try container.decode(Bool.self, forKey: .isPrimaryKey),
                  isIndexed: try container.decode(Bool.self, forKey: .isIndexed),
                  objectType: try container.decodeIfPresent(String.self, forKey: .objectType),
                  columnID: try container.decode(UInt16.self, forKey: .columnID))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(kind, forKey: .kind)
        try container.encode(isOptional, forKey: .isOptional)
        try container.encode(isList, forKey: .isList)
        if isSet { try container.encode(true, forKey: .isSet) }
        if isMap { try container.encode(true, forKey: .isMap) }
        try container.encode(isPrimaryKey, forKey: .isPrimaryKey)
        try container.encode(isIndexed, forKey: .isIndexed)
        try container.encodeIfPresent(objectType, forKey: .objectType)
        try container.encode(columnID, forKey: .columnID)
    }
}

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

    public init(name: String, properties: [PropertySchema], tableID: UInt32 = 0, isEmbedded: Bool = false) {
        self.name = name
        self.properties = properties
        self.tableID = tableID
        self.isEmbedded = isEmbedded
    }

    // Coded by hand so that `isEmbedded` is written only when true: files without embedded
    // types keep their schema bytes.
    private enum CodingKeys: String, CodingKey { case name, properties, tableID, isEmbedded }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name),
                  properties: try container.decode([PropertySchema].self, forKey: .properties),
                  tableID: try container.decode(UInt32.self, forKey: .tableID),
                  isEmbedded: try container.decodeIfPresent(Bool.self, forKey: .isEmbedded) ?? false)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(properties, forKey: .properties)
        try container.encode(tableID, forKey: .tableID)
        if isEmbedded { try container.encode(true, forKey: .isEmbedded) }
    }

    /// The index of the primary-key property, if there is one.
    public var primaryKeyIndex: Int? { properties.firstIndex(where: \.isPrimaryKey) }

    /// The index of the property with this name.
    public func propertyIndex(named name: String) -> Int? { properties.firstIndex { $0.name == name } }

    public var description: String {
        (isEmbedded ? "embedded " : "") + "\(name) {\n" + properties.map { "    \($0)" }.joined(separator: "\n") + "\n}"
    }

    /// Checks the rules every object type must follow.
    public func validate() throws(StoreError) {
        if isEmbedded, let key = primaryKeyIndex {
            throw .invalidSchema(type: name, property: properties[key].name, reason: "an embedded type cannot have a primary key")
        }
        var seen: Set<String> = []
        var primaryKeys = 0
        for property in properties {
            guard seen.insert(property.name).inserted else {
                throw .invalidSchema(type: name, property: property.name, reason: "the property is declared twice")
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

/// All object types of a file.
public struct Schema: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The object types, in the order they were first stored.
    public var objectSchemas: [ObjectSchema]

    public init(_ objectSchemas: [ObjectSchema]) {
        self.objectSchemas = objectSchemas
    }

    /// The object type with this name.
    public subscript(name: String) -> ObjectSchema? { objectSchemas.first { $0.name == name } }

    /// The index of the object type with this name.
    public func index(of name: String) -> Int? { objectSchemas.firstIndex { $0.name == name } }

    public var description: String { objectSchemas.map(\.description).joined(separator: "\n") }

    /// Checks every type and that every link points at a type of the schema.
    public func validate() throws(StoreError) {
        var names: Set<String> = []
        for object in objectSchemas {
            guard names.insert(object.name).inserted else {
                throw .invalidSchema(type: object.name, property: nil, reason: "two object types have this name")
            }
            try object.validate()
        }
        for object in objectSchemas {
            for property in object.properties where property.kind == .link {
                guard let target = property.objectType, names.contains(target) else {
                    throw .invalidSchema(type: object.name, property: property.name,
                                         reason: "it links to '\(property.objectType ?? "?")', which is not one of the database's object types")
                }
            }
        }
    }
}
