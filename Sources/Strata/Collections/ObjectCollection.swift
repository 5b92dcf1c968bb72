public import Foundation
public import StrataStore

/// The live collections of objects a database hands out — ``Results``, a ``List`` of objects and
/// ``LinkingObjects`` — as one protocol, for code that works with any of them:
///
/// ```swift
/// func names<C: ObjectCollection<Person>>(_ people: C) -> [String] {
///     people.sorted(byKeyPath: "name").map(\.name)
/// }
/// ```
///
/// ``AnyObjectCollection`` holds any of them as one type. RealmSwift calls these
/// `RealmCollection` and `AnyRealmCollection` (the names `StrataRealmCompat` gives them).
/// You do not conform your own types to this protocol.
public protocol ObjectCollection<Element>: RandomAccessCollection where Element: Object, Index == Int {
    /// Whether the collection belongs to a frozen snapshot.
    var isFrozen: Bool { get }
    /// The objects that match the query built by `isIncluded`.
    func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element>
    /// The objects that match a parsed string predicate.
    func filter(_ predicate: FilterPredicate) throws(QueryError) -> Results<Element>
    /// The objects sorted by a property (or a path through to-one links).
    func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Element>
    /// The objects sorted by several keys.
    func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor
    /// One object per distinct combination of values of `keyPaths`.
    func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String
    /// The position of `object`, or nil.
    func index(of object: Element) -> Int?
    /// The smallest value of a property, ignoring nils; nil when there is none.
    func min<T: _PersistableInsideOptional>(ofProperty property: String) -> T?
    /// The largest value of a property, ignoring nils; nil when there is none.
    func max<T: _PersistableInsideOptional>(ofProperty property: String) -> T?
    /// The sum of a numeric property, ignoring nils.
    func sum<T: _PersistableInsideOptional>(ofProperty property: String) -> T
    /// The average of a numeric property, ignoring nils; nil when there is none.
    func average<T: _PersistableInsideOptional>(ofProperty property: String) -> T?
    /// Calls `block` with the collection now and after each commit that changes it.
    func observe(keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (CollectionChange<Self>) -> Void) -> NotificationToken
    /// The collection as of the version its database reads, immutable and usable anywhere.
    func freeze() -> Self
}

extension ObjectCollection {
    /// The objects that match a string predicate: `filter("age > %@", 3)`. A malformed
    /// predicate stops the program with a message; use `filter(_:)` with a `FilterPredicate`
    /// to get a ``QueryError`` instead.
    public func filter(_ format: String, _ arguments: Any...) -> Results<Element> {
        do { return try filter(FilterPredicate(format, argumentArray: arguments)) } catch { fatalError("\(error)") }
    }

    /// The objects sorted by a property, ascending.
    public func sorted(byKeyPath keyPath: String) -> Results<Element> { sorted(byKeyPath: keyPath, ascending: true) }

    /// Calls `block` with the collection now and after each commit that changes it, on the
    /// collection's own thread, queue or actor.
    public func observe(_ block: @escaping (CollectionChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: nil, on: nil, block)
    }
}

extension Results: ObjectCollection {}

extension List: ObjectCollection where Element: Object {
    /// The list's objects that match a parsed string predicate, in list order.
    public func filter(_ predicate: FilterPredicate) throws(QueryError) -> Results<Element> {
        try asResults().filter(predicate)
    }
}

extension LinkingObjects: ObjectCollection {}

/// Any ``ObjectCollection`` — `Results`, a `List` of objects or `LinkingObjects` — as one type,
/// for properties and parameters that accept any of them. RealmSwift calls it
/// `AnyRealmCollection`.
public struct AnyObjectCollection<Element: Object>: ObjectCollection {
    private let base: any ObjectCollection<Element>

    /// Wraps `base`.
    public init<C: ObjectCollection>(_ base: C) where C.Element == Element { self.base = base }

    public var startIndex: Int { 0 }
    public var endIndex: Int { base.count }
    public subscript(position: Int) -> Element { base[position] }

    /// Iterates with the wrapped collection's iterator, so over the objects as they were when
    /// iteration starts, as the wrapped collection does.
    public func makeIterator() -> AnyIterator<Element> { Self.iterator(base) }

    private static func iterator<C: ObjectCollection>(_ base: C) -> AnyIterator<Element> where C.Element == Element {
        AnyIterator(base.makeIterator())
    }

    public var isFrozen: Bool { base.isFrozen }
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { base.where(isIncluded) }
    public func filter(_ predicate: FilterPredicate) throws(QueryError) -> Results<Element> { try base.filter(predicate) }
    public func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Element> { base.sorted(byKeyPath: keyPath, ascending: ascending) }
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor { base.sorted(by: descriptors) }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String { base.distinct(by: keyPaths) }
    public func index(of object: Element) -> Int? { base.index(of: object) }
    public func min<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { base.min(ofProperty: property) }
    public func max<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { base.max(ofProperty: property) }
    public func sum<T: _PersistableInsideOptional>(ofProperty property: String) -> T { base.sum(ofProperty: property) }
    public func average<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { base.average(ofProperty: property) }

    public func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                        _ block: @escaping (CollectionChange<AnyObjectCollection<Element>>) -> Void) -> NotificationToken {
        Self.observe(base, keyPaths: keyPaths, queue: queue, block)
    }

    private static func observe<C: ObjectCollection>(_ base: C, keyPaths: [String]?, queue: DispatchQueue?,
                                                     _ block: @escaping (CollectionChange<AnyObjectCollection<Element>>) -> Void) -> NotificationToken
        where C.Element == Element {
        base.observe(keyPaths: keyPaths, on: queue) { change in block(change.map { AnyObjectCollection($0) }) }
    }

    public func freeze() -> AnyObjectCollection<Element> { Self.freeze(base) }

    private static func freeze<C: ObjectCollection>(_ base: C) -> AnyObjectCollection<Element> where C.Element == Element {
        AnyObjectCollection(base.freeze())
    }
}
