import Foundation
import StrataStore

// The dynamic API: objects of a type named at run time, read and written by property name,
// whatever classes the process has — RealmSwift's `DynamicObject`, `dynamicObjects(_:)`,
// `dynamicObject(ofType:forPrimaryKey:)` and `dynamicCreate(_:value:update:)`. Tools that open
// any file, and code that reads types it has no class for (a mixed value's object of a class
// this process never declared), use it.
//
// A `DynamicObject` is an `Object` whose class info is made from the file's stored schema
// (one per type name, `ClassInfo.dynamic`), with a field access per property that reads and
// writes the store by value (`DynamicFieldAccess`): the typed accessors' wrappers and offsets
// are not there, so nothing reads a field of the instance. Its contexts are kept by type name
// (`DatabaseCore.dynamicContext(named:)`).

/// An object of a type named at run time, read and written by property name:
/// `dog["name"]`, or as a member, `dog.name`. Values come as their Swift types (`Int`,
/// `String`, `Date`, …, `MixedValue`, nil for nil); a link as the linked `DynamicObject`; a
/// list or set as an array of its elements, a map as a `[String: Any?]` dictionary. Write them
/// back the same way, inside a write transaction (a link takes a `DynamicObject` or any
/// managed object of the linked type in the same database).
///
/// Get dynamic objects from a database: ``Database/dynamicObjects(_:)``,
/// ``Database/dynamicObject(ofType:forPrimaryKey:)`` and
/// ``Database/dynamicCreate(_:value:update:)``. Queries on them take string predicates
/// (`filter("age > 3")`) and sort by key path names.
///
/// Where RealmSwift's dynamic lists are live `List<DynamicObject>`s, a list or set property
/// reads here as an array of what it holds now (`dynamicList(_:)` is not provided); assign an
/// array to change it. Embedded objects read like linked ones, but are changed through their
/// typed class: a dynamic write cannot give an embedded object a parent. A property whose
/// name is also a member of `Object` (`value`, `description`) reads through the subscript,
/// `object["value"]`.
@dynamicMemberLookup
public final class DynamicObject: Object {
    /// A property's value as a member: `dog.name`, `dog.owner`.
    public subscript(dynamicMember name: String) -> Any? {
        get { value(forKey: name) }
        set { setValue(newValue, forKey: name) }
    }

    /// The name of the object's type, as stored.
    public var typeName: String {
        guard let table = _slot.table else { fatalError("A DynamicObject is made by a database: use dynamicObjects(_:), dynamicObject(ofType:forPrimaryKey:) or dynamicCreate(_:value:update:).") }
        return table.info.schema.name
    }
}
