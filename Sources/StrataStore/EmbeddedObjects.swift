// Embedded objects in the store: a type whose objects each belong to the one object whose link
// or list holds them (the schema's `isEmbedded`). The store keeps the rule whatever layer
// writes: a link or list may take an embedded object only while it is new and has no parent
// (StoreSession.adoptEmbedded), the object it stops holding is deleted, deleting an object
// deletes the embedded objects it holds, and a commit deletes new ones nothing took.

extension TableAccess {
    /// For a link or list-of-links property whose target type is embedded: that type's table.
    func embeddedTarget(of index: Int) -> TableAccess? {
        let property = schema.properties[index]
        guard property.kind == .link, let target = property.objectType, let table = session.table(named: target),
              table.schema.isEmbedded else { return nil }
        return table
    }

    /// The embedded objects `keys` hold through their links and lists, by embedded table.
    func embeddedChildren(of keys: [ObjectKey]) throws(StoreError) -> [(TableAccess, [ObjectKey])] {
        var children: [(TableAccess, [ObjectKey])] = []
        for index in schema.properties.indices {
            guard let embedded = embeddedTarget(of: index) else { continue }
            var found: [ObjectKey] = []
            for key in keys {
                if schema.properties[index].isList {
                    for case .link(let child) in try list(key, property: index) { found.append(child) }
                } else if try contains(key), case .link(let child) = try value(key, property: index) {
                    found.append(child)
                }
            }
            if !found.isEmpty { children.append((embedded, found)) }
        }
        return children
    }
}
