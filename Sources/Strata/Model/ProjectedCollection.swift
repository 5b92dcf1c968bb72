// A list or set of objects seen as the values of one key path of each element: what
// `@Projected(\Person.friends.projectTo.firstName)` reads. It keeps the collection and the key
// path, not the values, so it reads the collection's current elements each time.

/// The values of one key path of each object in a `List` or `MutableSet`, in the collection's
/// order, read live: `person.friends.projectTo.firstName` is a `ProjectedCollection<String>`
/// of the friends' first names. Made by ``ElementMapper`` (the collection's `projectTo`),
/// usually inside a `@Projected` key path. Like the collection, it belongs to its object's
/// thread, queue or actor and is not `Sendable`.
public struct ProjectedCollection<Element>: RandomAccessCollection, CustomStringConvertible {
    private let elementCount: () -> Int
    private let element: (Int) -> Element
    private let elementNames: () -> [String]

    init<Source: RandomAccessCollection>(_ source: Source, keyPath: KeyPath<Source.Element, Element>)
    where Source.Element: Object, Source.Index == Int {
        elementCount = { source.count }
        element = { source[source.startIndex + $0][keyPath: keyPath] }
        elementNames = { KeyPathRecorder.names(keyPath) }
    }

    /// Always 0.
    public var startIndex: Int { 0 }

    /// The number of elements the collection holds now.
    public var endIndex: Int { elementCount() }

    /// The value of the key path for the collection's element at `position`.
    public subscript(position: Int) -> Element {
        precondition(position >= 0 && position < elementCount(), "Index \(position) is out of bounds (the collection has \(elementCount()) elements).")
        return element(position)
    }

    /// The projected values, as an array would print them.
    public var description: String { "ProjectedCollection\(Array(self))" }
}

/// Lets a projection find out which element properties a projected collection reads.
protocol ProjectedCollectionValue {
    func elementPropertyNames() -> [String]
}

extension ProjectedCollection: ProjectedCollectionValue {
    func elementPropertyNames() -> [String] { elementNames() }
}

/// The elements of a list or set of objects, waiting for the key path to project them to:
/// `friends.projectTo.firstName` names each element's `firstName`.
@dynamicMemberLookup
public struct ElementMapper<Source: RandomAccessCollection> where Source.Element: Object, Source.Index == Int {
    let source: Source

    /// The values of `keyPath` for each element of the collection.
    public subscript<V>(dynamicMember keyPath: KeyPath<Source.Element, V>) -> ProjectedCollection<V> {
        ProjectedCollection(source, keyPath: keyPath)
    }
}

extension List where Element: Object {
    /// The list's elements, to be projected to one of their properties:
    /// `person.friends.projectTo.firstName` (a ``ProjectedCollection``).
    public var projectTo: ElementMapper<List<Element>> { ElementMapper(source: self) }
}

extension MutableSet where Element: Object {
    /// The set's elements, to be projected to one of their properties:
    /// `person.pets.projectTo.name` (a ``ProjectedCollection``).
    public var projectTo: ElementMapper<MutableSet<Element>> { ElementMapper(source: self) }
}
