// Embedded objects: objects that belong to exactly one parent object, through one of its links
// or lists, as RealmSwift's `EmbeddedObject`s do.

/// A model whose objects live inside another object: declare it as
/// `final class Address: EmbeddedObject { @Persisted var street = "" }` and hold it in a
/// parent's property, `@Persisted var address: Address?` or `@Persisted var addresses: List<Address>`.
///
/// An embedded object has exactly one parent:
/// - it is created by assigning an unmanaged object to a managed parent's property (or by
///   adding a parent that holds one); it cannot be added, created or queried on its own;
/// - it is deleted when its parent is deleted, when the parent's link is set to another object
///   or to nil, and when it leaves the parent's list;
/// - assigning an embedded object that already has a parent to another property is an error:
///   copy it instead, e.g. `Address(value: old)`.
///
/// Query embedded objects through their parent: `db.objects(Person.self).where { $0.address.city == "Oslo" }`.
/// An embedded type cannot have a primary key. Changing a type between `Object` and
/// `EmbeddedObject` needs a migration (a higher `schemaVersion`). When a migration makes a type
/// embedded, after its block runs each object of the type gets exactly one parent, as
/// RealmSwift's migrations give them: an object nothing links to is deleted, and an object that
/// several links or list entries hold is copied (with the embedded objects it holds) for every
/// holder after the first. Objects of the type that link to each other in a cycle and are held
/// twice cannot be split that way: the migration fails with an error saying so.
open class EmbeddedObject: Object {
    /// An unmanaged embedded object with its properties' initial values.
    public required init() { super.init() }
}

/// Lists and sets seen through `Any`, for copying their embedded elements.
protocol ObjectCollectionElements {
    var holdsEmbeddedObjects: Bool { get }
    var elementsAsAny: [Any] { get }
}

extension List: ObjectCollectionElements {
    var holdsEmbeddedObjects: Bool { Element.self is EmbeddedObject.Type }
    var elementsAsAny: [Any] { map { $0 as Any } }
}

extension MutableSet: ObjectCollectionElements {
    var holdsEmbeddedObjects: Bool { Element.self is EmbeddedObject.Type }
    var elementsAsAny: [Any] { map { $0 as Any } }
}
