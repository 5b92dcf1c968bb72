// The shape of the objects a file holds: object types, their properties, and the stable ids
// the store gives tables and columns so that renames and migrations never rewrite keys.

/// All object types of a file.
public struct Schema: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The object types, in the order they were first stored.
    public var objectSchemas: [ObjectSchema]

    /// Creates a schema of these object types.
    public init(_ objectSchemas: [ObjectSchema]) {
        self.objectSchemas = objectSchemas
    }

    /// The object type with this name.
    public subscript(name: String) -> ObjectSchema? { objectSchemas.first { $0.name == name } }

    /// The index of the object type with this name.
    public func index(of name: String) -> Int? { objectSchemas.firstIndex { $0.name == name } }

    /// Every type, one after another.
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
