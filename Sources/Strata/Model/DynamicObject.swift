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
/// `String`, `Date`, …, `MixedValue`, nil for nil). A link comes as an object of the linked
/// type's model class when the instance knows one that fits the file (one of the
/// configuration's `objectTypes` when it lists them, else any class the process has used),
/// and as a `DynamicObject` of the linked type otherwise. A list or set of objects comes as a
/// live `List<DynamicObject>` or `MutableSet<DynamicObject>` (also from any managed object
/// through ``Object/dynamicList(_:)`` and ``Object/dynamicMutableSet(_:)``); a list or set of
/// values as an array of its elements, a map as a `[String: Any?]` dictionary. Write them back
/// the same way, inside a write transaction (a link takes a `DynamicObject` or any managed
/// object of the linked type in the same database; a list or set property takes any
/// collection of them).
///
/// Get dynamic objects from a database: ``Database/dynamicObjects(_:)``,
/// ``Database/dynamicObject(ofType:forPrimaryKey:)`` and
/// ``Database/dynamicCreate(_:value:update:)``. Every type the file stores can be read so,
/// whether or not the process has a class for it: ``Database/schema`` lists them all, with the
/// type each link and collection of objects points to. Queries on dynamic objects take string
/// predicates (`filter("age > 3")`) and sort by key path names.
///
/// Embedded objects read like linked ones, but are changed through their typed class: a
/// dynamic write cannot give an embedded object a parent. A property whose name is also a
/// member of `Object` (`value`, `description`) reads through the subscript, `object["value"]`.
///
/// A migration's objects are `DynamicObject`s too (``MigrationObject``).
@dynamicMemberLookup
public class DynamicObject: Object {
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
