/// Whether a client's schema can join an app's, and the app's schema after it does.
///
/// The server keeps one schema per app, the union of every compatible schema its clients
/// declared (``merged(with:)``). A client may know fewer classes and properties than the app
/// (an older version: the server keeps what it does not know) or more (a newer version: new
/// classes, new properties, optional or required, since a client fills a required property
/// other clients do not send with its default). It may not declare a property the app already
/// has in a way that would make another client's values unreadable to it or its values
/// unreadable to them: another type, collection kind, link target or optionality (in either
/// direction: a nil from one side has nowhere to go on a side that requires a value). Nor may a
/// class change its primary key or whether it is embedded.
extension SyncSchema {
    /// Why this schema (a client's) cannot sync with `existing` (the app's), one sentence per
    /// difference; empty when the two are compatible.
    ///
    /// ```swift
    /// let problems = client.breakingDifferences(from: app)
    /// if !problems.isEmpty { /* refuse with .schemaMismatch, joining `problems` */ }
    /// ```
    public func breakingDifferences(from existing: SyncSchema) -> [String] {
        var existingClasses: [String: SyncClassSchema] = [:]
        for objectClass in existing.classes where existingClasses[objectClass.name] == nil {
            existingClasses[objectClass.name] = objectClass
        }
        var differences: [String] = []
        for objectClass in classes {
            guard let known = existingClasses[objectClass.name] else { continue }
            let name = objectClass.name
            if objectClass.primaryKey != known.primaryKey {
                differences.append("class \(name) has the primary key \(objectClass.primaryKey), but the app's is \(known.primaryKey)")
            }
            if objectClass.isEmbedded != known.isEmbedded {
                differences.append("class \(name) is \(Self.embeddedness(objectClass.isEmbedded)), but the app's is \(Self.embeddedness(known.isEmbedded))")
            }
            var knownProperties: [String: SyncPropertySchema] = [:]
            for property in known.properties where knownProperties[property.name] == nil {
                knownProperties[property.name] = property
            }
            for property in objectClass.properties {
                guard let knownProperty = knownProperties[property.name] else { continue }
                let path = "\(name).\(property.name)"
                if property.type != knownProperty.type {
                    differences.append("\(path) is of type \(property.type), but the app's is \(knownProperty.type)")
                }
                if property.collection != knownProperty.collection {
                    differences.append("\(path) is a \(property.collection), but the app's is a \(knownProperty.collection)")
                }
                if property.objectClass != knownProperty.objectClass {
                    differences.append("\(path) refers to \(property.objectClass ?? "no class"), but the app's refers to \(knownProperty.objectClass ?? "no class")")
                }
                if property.isOptional != knownProperty.isOptional {
                    differences.append("\(path) is \(Self.optionality(property.isOptional)), but the app's is \(Self.optionality(knownProperty.isOptional))")
                }
            }
        }
        return differences
    }

    /// The union of this schema (the app's) and `other` (a compatible client's): this schema's
    /// classes and properties as they are, then the classes and properties only `other` has, in
    /// `other`'s order. Check ``breakingDifferences(from:)`` first: where the two disagree, this
    /// schema's declaration is kept.
    public func merged(with other: SyncSchema) -> SyncSchema {
        var result = classes
        var indexByName: [String: Int] = [:]
        for (index, objectClass) in result.enumerated() where indexByName[objectClass.name] == nil {
            indexByName[objectClass.name] = index
        }
        for objectClass in other.classes {
            guard let index = indexByName[objectClass.name] else {
                indexByName[objectClass.name] = result.count
                result.append(objectClass)
                continue
            }
            var knownNames = Set(result[index].properties.map(\.name))
            for property in objectClass.properties where knownNames.insert(property.name).inserted {
                result[index].properties.append(property)
            }
        }
        return SyncSchema(classes: result)
    }

    private static func embeddedness(_ isEmbedded: Bool) -> String { isEmbedded ? "embedded" : "top-level" }
    private static func optionality(_ isOptional: Bool) -> String { isOptional ? "optional" : "required" }
}
