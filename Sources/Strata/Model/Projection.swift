// A projection: a view model over one object, declared as a class of `@Projected` key paths.
// It holds its root object and nothing else, so every read goes to the root (live, frozen or
// invalidated as the root is); its schema (the projected properties, and the root properties
// each one reads) is discovered once per class with Mirror and cached.

import Foundation
import StrataStore
import StrataStorage

/// What every projection class offers: its root object, and a way to project another root.
/// ``Projection`` is the one conforming class; the protocol carries the API that returns
/// `Self` (observation, `Database.objects(_:)`).
public protocol ProjectionObservable: AnyObject {
    /// The projected model class.
    associatedtype Root: Object
    /// The object this projection reads and writes.
    var rootObject: Root { get }
    /// A projection of `object`.
    init(projecting object: Root)
}

/// A light view of a model object: a class whose `@Projected` properties read (and write)
/// key paths of the object it projects.
///
/// ```swift
/// class Person: Object {
///     @Persisted var firstName = ""
///     @Persisted var lastName = ""
///     @Persisted var address: Address?
///     @Persisted var friends: List<Person>
/// }
///
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.firstName) var name
///     @Projected(\Person.lastName.localizedUppercase) var lastNameCaps
///     @Projected(\Person.address?.city) var homeCity
///     @Projected(\Person.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
/// }
///
/// let people = database.objects(PersonProjection.self)   // every Person, projected
/// let one = PersonProjection(projecting: person)
/// let token = one.observe(keyPaths: ["name"]) { change in … }
/// ```
///
/// A projection holds only its ``rootObject``: it is managed, frozen or invalidated exactly
/// when the root is, belongs to the root's thread, queue or actor, and is not `Sendable`.
/// Changes to root properties that no `@Projected` property reads do not notify its
/// observers. Several projections (of one or several classes) may project the same object.
/// See <doc:Projections>.
open class Projection<Root: Object>: ProjectionObservable, Hashable, CustomStringConvertible {
    /// The object this projection reads and writes.
    public let rootObject: Root

    /// A projection of `object`. Checks the class's `@Projected` properties the first time a
    /// class is used, so that a key path that reads no persisted property stops here with a
    /// message rather than at the first observation.
    public required init(projecting object: Root) {
        rootObject = object
        _ = ProjectionSchema.of(self)
    }

    /// Whether both project the same object (the same row of the same database, or the same
    /// unmanaged instance), whatever their projection classes.
    public static func == (lhs: Projection, rhs: Projection) -> Bool {
        lhs.rootObject.isSameObject(as: rhs.rootObject)
    }

    /// Hashes the projected object's identity, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        if rootObject.isManaged {
            hasher.combine(rootObject._slot.key)
            hasher.combine(Root.className())
        } else {
            hasher.combine(ObjectIdentifier(rootObject))
        }
    }

    /// The projection's class and root class, then each projected property with the key path
    /// it reads and its value.
    open var description: String {
        let header = "\(type(of: self))<\(type(of: rootObject).className())>"
        if rootObject.isInvalidated { return "\(header) (invalidated)" }
        let lines = ProjectionSchema.of(self).properties.map { property in
            "\t\(property.label)(\\.\(property.originPath)) = \(describe(rootObject[keyPath: property.keyPath(in: self)]));"
        }
        return "\(header) {\n" + lines.joined(separator: "\n") + "\n}"
    }

    private func describe(_ value: Any?) -> String {
        guard let value = value.flatMap(unwrapAny) else { return "nil" }
        if let object = value as? Object { return type(of: object).className() }
        return value is String ? "\"\(value)\"" : "\(value)"
    }

    // MARK: Confinement

    /// The database managing the root object; nil while it is unmanaged.
    public var database: Database? { rootObject.database }

    /// Whether the root object was deleted or its database invalidated.
    public var isInvalidated: Bool { rootObject.isInvalidated }

    /// Whether the root object is frozen.
    public var isFrozen: Bool { rootObject.isFrozen }

    /// A projection of the frozen root (see `Object.freeze()`), readable from any thread.
    public func freeze() -> Self { Self(projecting: rootObject.freeze()) }

    /// A projection of the live root in the caller's context, or nil when the object has been
    /// deleted since (see `Object.thaw()`). Returns `self` when the root is live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> Self? {
        guard rootObject.isFrozen else { return self }
        return rootObject.thaw().map { Self(projecting: $0) }
    }
}

/// One `@Projected` property of a projection class, as its schema records it.
struct ProjectionProperty: Sendable {
    /// The property's name in the projection class.
    let label: String
    /// The root properties its key path reads, outermost first (`["address", "city"]`); for a
    /// projected collection, the collection then the element's properties.
    let originNames: [String]

    /// `originNames` as one dotted key path, as observers take it.
    var originPath: String { originNames.joined(separator: ".") }

    /// The property's key path in `projection`'s own wrapper.
    func keyPath<P: ProjectionObservable>(in projection: P) -> AnyKeyPath {
        for child in Mirror(reflecting: projection).children where child.label == "_" + label {
            if let wrapper = child.value as? any AnyProjected { return wrapper.anyKeyPath }
        }
        fatalError("internal error: the projected property '\(label)' of \(type(of: projection)) is missing")
    }
}

/// The projected properties of a projection class, discovered once per class.
struct ProjectionSchema: Sendable {
    let properties: [ProjectionProperty]

    private static let cache = Locked<[ObjectIdentifier: ProjectionSchema]>([:])

    /// The schema of `projection`'s class, discovered from `projection` on first use.
    static func of<P: ProjectionObservable>(_ projection: P) -> ProjectionSchema {
        let id = ObjectIdentifier(type(of: projection))
        if let known = cache.withLock({ $0[id] }) { return known }
        let schema = discover(projection)
        cache.withLock { $0[id] = schema }
        return schema
    }

    /// The schema of the projection class `type`, discovered from a projection of a new
    /// unmanaged root on first use.
    static func of<P: ProjectionObservable>(_ type: P.Type) -> ProjectionSchema {
        if let known = cache.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        return of(P(projecting: P.Root()))
    }

    private static func discover<P: ProjectionObservable>(_ projection: P) -> ProjectionSchema {
        var properties: [ProjectionProperty] = []
        // Mirror lists a class's own fields: walk up so a superclass's properties come first.
        var mirrors: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: projection)
        while let current = mirror {
            mirrors.append(current)
            mirror = current.superclassMirror
        }
        for current in mirrors.reversed() {
            for child in current.children {
                guard let label = child.label, label.hasPrefix("_"), let wrapper = child.value as? any AnyProjected else { continue }
                let name = String(label.dropFirst())
                guard let keyPath = wrapper.anyKeyPath as? PartialKeyPath<P.Root> else {
                    fatalError("'\(P.self).\(name)' projects a key path of \(type(of: wrapper.anyKeyPath).rootType), not of \(P.Root.self).")
                }
                var names = KeyPathRecorder.names(partial: keyPath)
                // A collection of the root itself (`\.friends.projectTo.firstName`) is read on a
                // new unmanaged root, whose collections are empty, to ask which element
                // properties it reads. Deeper ones (through a link, which an unmanaged root
                // may not have) are observed as collections.
                if names.count == 1, type(of: keyPath).valueType is any ProjectedCollectionValue.Type,
                   let collection = P.Root()[keyPath: keyPath] as? any ProjectedCollectionValue {
                    names += collection.elementPropertyNames()
                }
                properties.append(ProjectionProperty(label: name, originNames: names))
            }
        }
        require(!properties.isEmpty, "'\(P.self)' has no @Projected properties; declare them as @Projected(\\\(P.Root.self).name) var name.")
        return ProjectionSchema(properties: properties)
    }
}

extension Projection: ThreadConfined {
    /// The root object's instance.
    public var _confinedDatabase: Database? { rootObject._confinedDatabase }

    /// The root object's hand-over: a `ThreadSafeReference` to a projection finds its object
    /// again and projects it with the same class.
    public var _handover: Handover { rootObject._handover }

    /// A projection of the object `handover` finds in `database`; nil when it was deleted.
    public static func _resolve(_ handover: Handover, in database: Database) -> Self? {
        Root._resolve(handover, in: database).map { Self(projecting: $0) }
    }
}
