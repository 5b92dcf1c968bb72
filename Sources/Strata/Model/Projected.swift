// `@Projected`: one property of a `Projection`, read (and, through a writable key path,
// written) on the projection's root object. The wrapper holds only the key path; the value
// always comes from the root, so a projection is as live, frozen or invalidated as its root.

/// Declares a property of a ``Projection`` as a key path into the projected object:
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.firstName) var name                 // a rename
///     @Projected(\Person.lastName.localizedUppercase) var caps // a computed value
///     @Projected(\Person.address?.city) var homeCity           // through a link
///     @Projected(\Person.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
/// }
/// ```
///
/// Reading the property reads the key path on ``Projection/rootObject``. Assigning to it
/// assigns through the key path, which must then be writable (a stored property of the root
/// or of an object it links to) and, for a managed root, happen inside a write transaction;
/// assigning through a read-only key path stops the process with a message.
@propertyWrapper
public struct Projected<Root: Object, Value> {
    /// The key path into the root object.
    let keyPath: KeyPath<Root, Value>

    /// Declares a projected property reading `keyPath` on the root object.
    public init(_ keyPath: KeyPath<Root, Value>) {
        self.keyPath = keyPath
    }

    /// Not available: a `@Projected` property belongs to a ``Projection`` subclass, which reads
    /// it through `subscript(_enclosingInstance:wrapped:storage:)`.
    @available(*, unavailable, message: "@Projected can only be used on a property of a Projection subclass")
    public var wrappedValue: Value {
        get { fatalError("@Projected can only be used on a property of a Projection subclass") }
        // swiftlint:disable:next unused_setter_value
        set { fatalError("@Projected can only be used on a property of a Projection subclass") }
    }

    /// Reads and writes the property of a projection through its key path on the root.
    public static subscript<EnclosingSelf: Projection<Root>>(
        _enclosingInstance projection: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Self>
    ) -> Value {
        get {
            projection.rootObject[keyPath: projection[keyPath: storageKeyPath].keyPath]
        }
        set {
            let keyPath = projection[keyPath: storageKeyPath].keyPath
            guard let writable = keyPath as? ReferenceWritableKeyPath<Root, Value> else {
                preconditionFailure("The projected property '\(wrappedKeyPath)' reads a key path that cannot be written (a computed value or a projected collection); write to the root object instead.")
            }
            projection.rootObject[keyPath: writable] = newValue
        }
    }
}

/// A `@Projected` property seen without its value type, for the projection's schema.
protocol AnyProjected {
    /// The key path into the root object, type-erased.
    var anyKeyPath: AnyKeyPath { get }
}

extension Projected: AnyProjected {
    var anyKeyPath: AnyKeyPath { keyPath }
}
