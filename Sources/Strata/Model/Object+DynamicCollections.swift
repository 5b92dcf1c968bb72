// A list or set property of objects read as `DynamicObject`s, by name, from any managed object:
// RealmSwift's `dynamicList(_:)` and `dynamicMutableSet(_:)`, for code that works with a type
// it knows only by name (migrations of a property whose class is gone, generic tools).

import StrataStore

extension Object {
    /// The list property `propertyName` as a live `List<DynamicObject>`: the same list the
    /// property reads as, its elements read (and added) as dynamic objects of the linked type.
    ///
    /// Stops with a message for an unmanaged object, a name the type does not have, or a
    /// property that is not a `List` of objects, as RealmSwift does.
    public final func dynamicList(_ propertyName: String) -> List<DynamicObject> {
        List(owner: self, column: dynamicCollectionColumn(propertyName, isSet: false, "dynamicList(_:)"))
    }

    /// The set property `propertyName` as a live `MutableSet<DynamicObject>` (see
    /// ``dynamicList(_:)``).
    public final func dynamicMutableSet(_ propertyName: String) -> MutableSet<DynamicObject> {
        MutableSet(list: List(owner: self, column: dynamicCollectionColumn(propertyName, isSet: true, "dynamicMutableSet(_:)")))
    }

    /// The column of the object's list (or set) property of objects named `name`.
    private func dynamicCollectionColumn(_ name: String, isSet: Bool, _ operation: String) -> Int {
        guard let table = _slot.table else {
            fatalError("\(operation) can only be used on an object managed by a database; add the object first, or use the property itself.")
        }
        table.database.verify(operation)
        let schema = table.table.schema
        guard let column = schema.propertyIndex(named: name) else {
            fatalError("\(operation): '\(schema.name)' has no property named '\(name)'.")
        }
        let property = schema.properties[column]
        let kind = isSet ? "MutableSet" : "List"
        require(property.kind == .link && property.isList && !property.isMap && property.isSet == isSet,
                "\(operation): '\(schema.name).\(name)' is \(property.typeDescription), not a \(kind) of objects.")
        return column
    }
}
