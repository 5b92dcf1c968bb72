/// One property of an object type.
public struct PropertySchema: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The property's name, as declared in the model class: what code, queries and key-value
    /// access use.
    public var name: String
    /// The name the file stores the property under: `name`, unless the model class maps it to
    /// another (`Object.propertiesMapping()`), so that a file shared with other programs keeps
    /// their name. A schema read from a file has only this name (`name` equals it). Stored
    /// and declared schemas are matched by it, and queries accept it beside `name`.
    public var persistedName: String
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

    /// Creates a property; the store gives it its column id when the schema is stored.
    public init(name: String, kind: PropertyKind, isOptional: Bool = false, isList: Bool = false, isSet: Bool = false,
                isMap: Bool = false, isPrimaryKey: Bool = false, isIndexed: Bool = false, objectType: String? = nil,
                columnID: UInt16 = 0, persistedName: String? = nil) {
        self.name = name
        self.persistedName = persistedName ?? name
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

    /// The property as `name: type`, with `[primary key]` or `[indexed]` when it is.
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

    /// Decodes a property as the file stores it.
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

    /// Encodes the property as the file stores it: under its persisted name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(persistedName, forKey: .name)
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
