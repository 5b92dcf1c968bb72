public import Foundation
public import StrataStore

/// The objects that link to an object: the inverse side of a to-one link or of a list of links,
/// declared on the linked-to class with `@Persisted(originProperty:)`.
///
/// ```swift
/// final class Person: Object {
///     @Persisted var name = ""
///     @Persisted var dogs: List<Dog>
/// }
///
/// final class Dog: Object {
///     @Persisted var name = ""
///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// }
///
/// let owners = rex.owners          // every Person whose `dogs` holds rex, live
/// ```
///
/// Nothing is stored for a `LinkingObjects` property: it is a live query, evaluated against
/// the database instance's current version each time it is read, over the `Element` objects'
/// origin property (`Person.dogs` above), in the order of the `Element` objects' keys (the
/// order they were added in). It stays current as links are made and broken. Like `Results`,
/// it can be filtered, sorted, aggregated, observed (with a callback, on another actor, or as
/// the async sequence `changes`), frozen, thawed, and handed to another actor with a
/// `ThreadSafeReference`.
/// Reading it costs a scan of the origin property's values, proportional to the number of
/// `Element` objects (more per object through a list than through a to-one link).
///
/// While the declaring object is unmanaged, its linking objects are empty. An object that links
/// more than once (the same dog twice in one person's list) appears once. A subclass that
/// inherits the declaration has no linking objects when the origin property links to the
/// superclass: subclass objects are stored as a type of their own, which such links never
/// point at.
///
/// Queries on the declaring type can go *through* a `LinkingObjects` property, as through a
/// list of objects: `db.objects(Dog.self).where { $0.owners.name == "Ann" }` (some owner is
/// named Ann), `$0.owners.count > 1`, `$0.owners.contains { $0.age > 30 }`, and in string
/// predicates `"ANY owners.name == 'Ann'"`, `"owners.@count > 1"` or
/// `"SUBQUERY(owners, $o, $o.age > 30).@count > 0"` (or, without a declared property,
/// RealmSwift's `"ANY @links.Person.dogs.name == 'Ann'"`). Such a query reads the whole origin
/// property once per evaluation, then visits the linking objects of each object it tests
/// (so its cost grows with the number of links to the objects tested). Sorting by a path
/// through one, and observing key paths through one, are not supported (they would order or watch by a collection).
public struct LinkingObjects<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    /// The name of the property of `Element` whose links this collection gathers.
    public let propertyName: String
    /// The linking objects, while the declaring object is managed.
    private let results: Results<Element>?
    /// The object the links point at, while managed (for thawing and `isInvalidated`).
    private let target: Object?

    /// The objects of `type` that link to the declaring object through `propertyName` (a
    /// to-one link or a list of links). RealmSwift's older spelling; declare properties with
    /// `@Persisted(originProperty:)`. A value made with this initialiser is empty: only a
    /// managed object's `@Persisted(originProperty:)` property reads the database.
    public init(fromType type: Element.Type, property propertyName: String) {
        self.propertyName = propertyName
        self.results = nil
        self.target = nil
    }

    init(propertyName: String, target: Object, results: Results<Element>) {
        self.propertyName = propertyName
        self.target = target
        self.results = results
    }

    /// The linking objects of the managed object `target` through `Element.propertyName`.
    static func of(_ target: Object, through propertyName: String, linksHere: Bool = true) -> LinkingObjects<Element> {
        guard let database = target._database, let table = target._slot.table else {
            return LinkingObjects(fromType: Element.self, property: propertyName)
        }
        if !table.core.isFrozen { table.database.verify("reading LinkingObjects") }
        require(!target.isInvalidated,
                "Object of type '\(table.table.schema.name)' has been deleted or invalidated; check isInvalidated before reading its linking objects.")
        let links = linksHere
            ? QueryPredicate.comparison(QueryComparison(.keyPath([propertyName]), .equal, .constant(.link(ObjectKey(target._slot.key)))))
            : .constant(false)
        let context = database.core.withReadLock { (try? database.core.existingContext(for: Element.self)) ?? nil }
        return LinkingObjects(propertyName: propertyName, target: target,
                              results: Results(database: database, context: context, predicate: links))
    }

    /// The linking objects as `Results`, for the operations that return results; stops with a
    /// message while the declaring object is unmanaged.
    private func managed(_ operation: String) -> Results<Element> {
        guard let results else {
            fatalError("\(operation) needs a managed object: LinkingObjects of an unmanaged object (or made with init(fromType:property:)) are always empty. Add the object to a database first.")
        }
        return results
    }

    // MARK: State

    /// The database instance the linking objects are read from; nil while unmanaged.
    public var database: Database? { results?.database }

    /// Whether the declaring object is managed.
    public var isManaged: Bool { results != nil }

    /// Whether the linking objects belong to a frozen object.
    public var isFrozen: Bool { results?.isFrozen ?? false }

    /// Whether the declaring object has been deleted or its instance invalidated.
    public var isInvalidated: Bool { target?.isInvalidated ?? false }

    /// The object the links point at; nil while unmanaged.
    var linkedObject: Object? { target }

    // MARK: Collection

    public var startIndex: Int { 0 }

    public var endIndex: Int { count }

    /// How many objects link here.
    public var count: Int { results?.count ?? 0 }

    /// Whether no object links here.
    public var isEmpty: Bool { results?.isEmpty ?? true }

    public subscript(position: Int) -> Element {
        guard let results else { fatalError("LinkingObjects index \(position) is out of bounds (an unmanaged object's linking objects are empty)") }
        return results[position]
    }

    /// The first linking object, or nil.
    public var first: Element? { results?.first }

    /// The last linking object, or nil.
    public var last: Element? { results?.last }

    /// The position of `object`, or nil when it does not link here.
    public func index(of object: Element) -> Int? { results?.index(of: object) }

    /// Iterates over the linking objects of the version current when iteration starts.
    public func makeIterator() -> Iterator { Iterator(base: results?.makeIterator()) }

    /// Iterates over linking objects (see `Results.Iterator`).
    public struct Iterator: IteratorProtocol {
        var base: Results<Element>.Iterator?

        public mutating func next() -> Element? { base?.next() }
    }

    /// A listing of the first linking objects (up to 100), each with its properties; the rest
    /// are counted.
    public var description: String {
        let name = "LinkingObjects<\(Element.className())>"
        return isInvalidated ? CollectionListing.invalidated(name) : CollectionListing.describe(name, identity: results?.identity ?? target, self)
    }

    // MARK: Queries

    /// The linking objects that match the query built by `isIncluded`.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        managed("LinkingObjects.where(_:)").where(isIncluded)
    }

    /// The linking objects that match a parsed string predicate (`filter("age > %@", 3)`, from
    /// ``ObjectCollection``, parses the format and calls this).
    public func filter(_ predicate: FilterPredicate) throws(QueryError) -> Results<Element> {
        try managed("LinkingObjects.filter(_:)").filter(predicate)
    }

    /// The linking objects sorted by a property.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        managed("LinkingObjects.sorted(byKeyPath:ascending:)").sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The linking objects sorted by a property.
    public func sorted<V>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        managed("LinkingObjects.sorted(by:ascending:)").sorted(by: keyPath, ascending: ascending)
    }

    /// The linking objects sorted by several properties.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        managed("LinkingObjects.sorted(by:)").sorted(by: descriptors)
    }

    /// One linking object per distinct combination of values of `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        managed("LinkingObjects.distinct(by:)").distinct(by: keyPaths)
    }

    /// The smallest value of a property over the linking objects, or nil when there are none.
    public func min<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { results?.min(ofProperty: property) }

    /// The largest value of a property over the linking objects, or nil when there are none.
    public func max<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { results?.max(ofProperty: property) }

    /// The sum of a numeric property over the linking objects (zero when there are none).
    public func sum<T: _PersistableInsideOptional>(ofProperty property: String) -> T {
        managed("LinkingObjects.sum(ofProperty:)").sum(ofProperty: property)
    }

    /// The average of a numeric property over the linking objects, or nil when there are none.
    public func average<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { results?.average(ofProperty: property) }

    // MARK: Freezing

    /// The linking objects as of the version the database reads, immutable and usable from
    /// any thread or actor. Returns `self` when already frozen.
    public func freeze() -> LinkingObjects<Element> {
        guard let target, let results else { fatalError("Cannot freeze the LinkingObjects of an unmanaged object; add the object to a database first.") }
        if target.isFrozen { return self }
        return LinkingObjects(propertyName: propertyName, target: target.freeze(), results: results.freeze())
    }

    /// The live linking objects in the caller's context, or nil when the declaring object has
    /// been deleted since. Returns `self` when live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> LinkingObjects<Element>? {
        guard let target, let results else { fatalError("Cannot thaw the LinkingObjects of an unmanaged object; add the object to a database first.") }
        guard target.isFrozen else { return self }
        guard let live = target.thaw(_isolation: isolation), let liveResults = results.thaw(_isolation: isolation) else { return nil }
        return LinkingObjects(propertyName: propertyName, target: live, results: liveResults)
    }

    // MARK: Notifications

    /// Calls `block` with the linking objects now (`.initial`), then after each commit that
    /// changes them (`.update`): an object that starts or stops linking here is an insertion or
    /// a deletion. See `Results.observe(keyPaths:on:_:)` for the rules.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<LinkingObjects<Element>>) -> Void) -> NotificationToken {
        let propertyName = propertyName
        guard let target else { fatalError("Cannot observe the LinkingObjects of an unmanaged object; add the object to a database first.") }
        if let queue, let database, !database.core.deliversItself(on: queue) {
            // On another queue, the same object's linking objects there (see QueueObservation.swift).
            database.core.verifyObservable("LinkingObjects.observe(keyPaths:on:_:)")
            return handOverObservation(of: database.core, to: queue, keyPaths: keyPaths, block)
        }
        return managed("LinkingObjects.observe(keyPaths:on:_:)").observe(keyPaths: keyPaths, on: queue) { change in
            block(change.map { LinkingObjects(propertyName: propertyName, target: target, results: $0) })
        }
    }

    /// The linking objects' changes as an asynchronous sequence: `.initial` first, then an
    /// `.update` after each commit that changes them. Start it in the objects' context.
    public var changes: ChangeStream<CollectionChange<LinkingObjects<Element>>> { changes(keyPaths: nil) }

    /// The changes to the properties `keyPaths` name in the linking objects.
    public func changes(keyPaths: [String]?) -> ChangeStream<CollectionChange<LinkingObjects<Element>>> {
        guard let target else { fatalError("Cannot observe the LinkingObjects of an unmanaged object; add the object to a database first.") }
        let results = managed("LinkingObjects.changes")
        results.database.core.verifyObservable("LinkingObjects.changes")
        let propertyName = propertyName
        let paths = keyPaths?.map { $0.split(separator: ".").map(String.init) }
        return ChangeStream(core: results.database.core, initial: .initial(self)) { deliver in
            ResultsObserver(results: results, keyPaths: paths) { change in
                deliver(change.map { LinkingObjects(propertyName: propertyName, target: target, results: $0) })
            }
        }
    }
}

extension CollectionChange {
    /// The same change with its collection converted.
    func map<Other>(_ transform: (Collection) -> Other) -> CollectionChange<Other> {
        switch self {
        case .initial(let collection): .initial(transform(collection))
        case .update(let collection, let deletions, let insertions, let modifications):
            .update(transform(collection), deletions: deletions, insertions: insertions, modifications: modifications)
        case .error(let error): .error(error)
        }
    }
}

/// `LinkingObjects` property types (for `@Persisted(originProperty:)`).
public protocol LinkingObjectsProtocol {
    /// The class whose objects link here.
    static var _strataOriginType: Object.Type { get }
    /// A declaration of the inverse of `Element.propertyName`.
    static func _strataDeclaration(_ propertyName: String) -> Self
    /// The name of the origin property.
    var propertyName: String { get }
    /// The managed `object`'s linking objects through `property`.
    static func _strataLinkingObjects(of object: Object, through property: String, linksHere: Bool) -> Self
}

extension LinkingObjects: LinkingObjectsProtocol {
    public static var _strataOriginType: Object.Type { Element.self }
    public static func _strataDeclaration(_ propertyName: String) -> LinkingObjects<Element> {
        LinkingObjects(fromType: Element.self, property: propertyName)
    }
    public static func _strataLinkingObjects(of object: Object, through property: String, linksHere: Bool) -> LinkingObjects<Element> {
        of(object, through: property, linksHere: linksHere)
    }
}

extension LinkingObjects: _Persistable {
    // A LinkingObjects property has no column: schema discovery keeps it out of the stored
    // schema (ClassInfo.linkingProperties), and a managed object's wrapper holds the index past
    // the stored columns that `_strataGet` receives.
    public static var _strataShape: _PropertyShape { _PropertyShape(kind: .link, objectType: Element.className()) }
    public static func _strataDefault() -> LinkingObjects<Element> { LinkingObjects(fromType: Element.self, property: "") }
    public static func _strataGet(_ object: Object, _ column: Int) -> LinkingObjects<Element> {
        guard let info = object._slot.table?.info else { fatalError("internal error: LinkingObjects read through an unmanaged accessor") }
        let linking = info.linkingProperties[column - info.schema.properties.count]
        return of(object, through: linking.originProperty, linksHere: linking.linksHere)
    }
    public static func _strataSet(_ object: Object, _ column: Int, _ value: LinkingObjects<Element>) {
        fatalError("LinkingObjects properties are read-only: change the links on the '\(Element.className())' side instead.")
    }
    public func _strataStored(_ database: Database?) -> _StoredProperty { .list([]) }
    public static func _strataFrom(any value: Any, _ database: Database?) -> LinkingObjects<Element>? { nil }
    public var _strataAny: Any { self }
    public static func _strataRecordingValue(_ recorder: KeyPathRecorder) -> LinkingObjects<Element> {
        LinkingObjects(fromType: Element.self, property: "")
    }
}

extension Persisted where Value: LinkingObjectsProtocol {
    /// The objects of `Value`'s element type whose property `originProperty` (a to-one link or
    /// a list of links) points at this object:
    /// `@Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>`.
    @inlinable
    public init(originProperty: String) {
        self.init(wrappedValue: Value._strataDeclaration(originProperty))
    }
}

/// A `@Persisted(originProperty:)` wrapper, as schema discovery sees it.
protocol LinkingObjectsDeclaration {
    static var originType: Object.Type { get }
    /// The managed `object`'s linking objects through `property`, as `Any` (key-value access).
    static func linkingObjects(of object: Object, through property: String, linksHere: Bool) -> Any
    /// The origin property's name, as declared ("" when declared without `originProperty:`).
    var originProperty: String { get }
}

extension Persisted: LinkingObjectsDeclaration where Value: LinkingObjectsProtocol {
    static var originType: Object.Type { Value._strataOriginType }
    static func linkingObjects(of object: Object, through property: String, linksHere: Bool) -> Any {
        Value._strataLinkingObjects(of: object, through: property, linksHere: linksHere)
    }
    var originProperty: String {
        if case .unmanaged(let value) = storage { return value.propertyName }
        return ""
    }
}

extension LinkingObjects: Equatable {
    /// Whether both are the linking objects of the same object, in the same database
    /// instance, through the same property (for unmanaged objects: through the same property;
    /// both are then empty). Which objects link there now does not enter.
    public static func == (lhs: LinkingObjects<Element>, rhs: LinkingObjects<Element>) -> Bool {
        lhs.propertyName == rhs.propertyName && lhs.results == rhs.results
    }
}
