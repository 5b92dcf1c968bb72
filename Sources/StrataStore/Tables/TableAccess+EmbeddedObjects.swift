// Embedded objects in the store: a type whose objects each belong to the one object whose link
// or list holds them (the schema's `isEmbedded`). The store keeps the rule whatever layer
// writes: a link or list may take an embedded object only while it is new and has no parent
// (StoreSession.adoptEmbedded), the object it stops holding is deleted, deleting an object
// deletes the embedded objects it holds, and a commit deletes new ones nothing took.

extension TableAccess {
    /// For a link or list-of-links property whose target type is embedded: that type's table.
    /// (Called by every `set`: other kinds are turned away before the property is read.)
    @inline(__always)
    func embeddedTarget(of index: Int) -> TableAccess? {
        guard kinds[index] == .link, let target = schema.properties[index].objectType,
              let table = session.table(named: target), table.schema.isEmbedded else { return nil }
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
                } else if let (view, row) = try locate(key), case .link(let child) = try view.column(index).value(row, kind: .link) {
                    found.append(child)
                }
            }
            if !found.isEmpty { children.append((embedded, found)) }
        }
        return children
    }
}
