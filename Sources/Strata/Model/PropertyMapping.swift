// A model class's `propertiesMapping()`: the names the file stores its properties under, where
// they differ from the Swift names. The mapping is applied once, when the class is discovered
// (ClassInfo), by giving each mapped property its `persistedName`; everything above the store
// keeps using the Swift name, and the store matches the file's schema by the persisted one.

public import StrataStore

enum PropertyMapping {
    /// Gives the properties `mapping` names their persisted names. Throws for a key that names
    /// no persisted property of the class (a misspelt mapping would otherwise silently keep
    /// the Swift name in the file) and for an empty persisted name; two properties stored
    /// under one name are caught by the schema's validation.
    static func apply(_ mapping: [String: String], to properties: inout [PropertySchema], linking: [String],
                      className: String) throws(Database.Error) {
        // Sorted so that the first error reported does not depend on dictionary order.
        for (swiftName, persistedName) in mapping.sorted(by: { $0.key < $1.key }) {
            guard let index = properties.firstIndex(where: { $0.name == swiftName }) else {
                if linking.contains(swiftName) {
                    throw Database.Error(.invalidInput, "'\(className).propertiesMapping()' maps '\(swiftName)', a LinkingObjects property, which is not stored and so has no persisted name.")
                }
                let known = properties.map(\.name).joined(separator: ", ")
                throw Database.Error(.invalidInput, "'\(className).propertiesMapping()' maps '\(swiftName)', which is not a @Persisted property of '\(className)' (its properties: \(known)).")
            }
            guard !persistedName.isEmpty else {
                throw Database.Error(.invalidInput, "'\(className).propertiesMapping()' maps '\(swiftName)' to an empty name.")
            }
            properties[index].persistedName = persistedName
        }
    }
}

extension PropertySchema {
    /// The name the file stores the property under (RealmSwift's `Property.columnName`): the
    /// name `propertiesMapping()` gives it, or else its Swift name.
    public var columnName: String { persistedName }
}
