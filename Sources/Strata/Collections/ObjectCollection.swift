public import Foundation
public import StrataStore

/// The live collections of objects a database hands out — ``Results``, a ``List`` or
/// ``MutableSet`` of objects and ``LinkingObjects`` — as one protocol, for code that works with
/// any of them:
///
/// ```swift
/// func names<C: ObjectCollection<Person>>(_ people: C) -> [String] {
///     people.sorted(by: \.name).map(\.name)
/// }
/// ```
///
/// Everything generic code needs is available through the protocol: queries, sorting,
/// aggregates (by name or by key path), positions, observation (on the collection's own
/// context, a queue or an actor), freezing and thawing, and hand-over to other contexts
/// (the protocol refines ``ThreadConfined``).
///
/// ``AnyObjectCollection`` holds any of them as one type. RealmSwift calls these
/// `RealmCollection` and `AnyRealmCollection` (the names `StrataRealmCompat` gives them).
/// You do not conform your own types to this protocol.
public protocol ObjectCollection<Element>: RandomAccessCollection, ThreadConfined where Element: Object, Index == Int {
    /// Whether the collection belongs to a frozen snapshot.
    var isFrozen: Bool { get }
    /// Whether the collection can no longer be read: its database instance was invalidated, or
    /// (for a list, a set or linking objects) the object it belongs to was deleted.
    var isInvalidated: Bool { get }
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
    /// The objects at `indexes`, in ascending index order. An index out of bounds stops the
    /// program with a message.
    func objects(at indexes: IndexSet) -> [Element]
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
    /// Strata's hook behind ``thaw(_isolation:)``: the live collection in the context of
    /// `isolation` (the caller's). Call `thaw()` instead.
    func _thaw(_ isolation: isolated (any Actor)?) -> Self?
}

extension ObjectCollection {
    /// The database instance the collection belongs to; nil while it belongs to an unmanaged
    /// object. RealmSwift calls it `realm`.
    // Disfavoured: inside Strata, `Results` has a stored `database` of its own that
    // `_confinedDatabase` returns; this one (which calls `_confinedDatabase`) must never be
    // chosen over it, or the two would call each other.
    @_disfavoredOverload
    public var database: Database? { _confinedDatabase }

    /// The live collection in the caller's context (this thread, or the actor the caller is
    /// isolated to), at the newest version; nil when the object it belongs to has been deleted
    /// since. Returns `self` when already live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> Self? { _thaw(isolation) }

    /// The objects at `indexes`, read one by one.
    public func objects(at indexes: IndexSet) -> [Element] {
        let count = self.count
        return indexes.map { index in
            require(index >= 0 && index < count, "Index \(index) is out of bounds for objects(at:) (the collection has \(count) objects)")
            return self[index]
        }
    }

    // MARK: Queries

    /// The objects that match a string predicate: `filter("age > %@", 3)`. A malformed
    /// predicate stops the program with a message; use `filter(_:)` with a `FilterPredicate`
    /// to get a ``QueryError`` instead.
    public func filter(_ format: String, _ arguments: Any...) -> Results<Element> {
        do { return try filter(FilterPredicate(format, argumentArray: arguments)) } catch { fatalError("\(error)") }
    }

    /// The position of the first object, in this collection's order, that matches the query
    /// built by `isIncluded`; nil when none does.
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        self.where(isIncluded).first.flatMap { index(of: $0) }
    }

    /// The position of the first object that matches a string predicate
    /// (`index(matching: "age > %@", 3)`); nil when none does. A malformed predicate stops the
    /// program with a message; use `index(matching:)` with a `FilterPredicate` to get a
    /// ``QueryError`` instead. (RealmSwift's `index(matching: NSPredicate)`.)
    public func index(matching format: String, _ arguments: Any...) -> Int? {
        let predicate: FilterPredicate
        do { predicate = try FilterPredicate(format, argumentArray: arguments) } catch { fatalError("\(error)") }
        do { return try index(matching: predicate) } catch { fatalError("\(error)") }
    }

    /// The position of the first object that matches a parsed string predicate; nil when none
    /// does. Throws when the predicate names a property the type does not have or compares
    /// values of the wrong type.
    /// On an unmanaged `List` or `MutableSet` the predicate is evaluated in memory
    /// (`ObjectPredicateEvaluator`: a form it does not support throws `.unsupported`).
    public func index(matching predicate: FilterPredicate) throws(QueryError) -> Int? {
        if database == nil {
            return try ObjectPredicateEvaluator().firstIndex(matching: predicate.predicate, in: map { $0 as Object })
        }
        return try filter(predicate).first.flatMap { index(of: $0) }
    }

    // MARK: Sorting

    /// The objects sorted by a property, ascending unless `ascending` is false.
    public func sorted(byKeyPath keyPath: String) -> Results<Element> { sorted(byKeyPath: keyPath, ascending: true) }

    /// The objects sorted by a property named with a key path (`\.name`, `\.owner?.name`).
    public func sorted<V>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        sorted(byKeyPath: Self.propertyName(keyPath), ascending: ascending)
    }

    /// One object per distinct combination of the values at `keyPaths` (`[\.name, \.age]`).
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == PartialKeyPath<Element> {
        distinct(by: keyPaths.map { KeyPathRecorder.names(partial: $0).joined(separator: ".") })
    }

    // MARK: Aggregates by key path

    private static func propertyName<V>(_ keyPath: KeyPath<Element, V>) -> String {
        KeyPathRecorder.names(keyPath).joined(separator: ".")
    }

    /// The smallest value of a property, ignoring nils; nil when there is none.
    public func min<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? {
        min(ofProperty: Self.propertyName(keyPath))
    }
    /// The smallest value of an optional property, ignoring nils; nil when there is none.
    public func min<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? {
        min(ofProperty: Self.propertyName(keyPath))
    }

    /// The largest value of a property, ignoring nils; nil when there is none.
    public func max<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? {
        max(ofProperty: Self.propertyName(keyPath))
    }
    /// The largest value of an optional property, ignoring nils; nil when there is none.
    public func max<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? {
        max(ofProperty: Self.propertyName(keyPath))
    }

    /// The sum of a numeric property, ignoring nils (zero when there are no objects).
    public func sum<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T {
        sum(ofProperty: Self.propertyName(keyPath))
    }

    /// The average of a numeric property, ignoring nils; nil when there is none.
    public func average<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? {
        average(ofProperty: Self.propertyName(keyPath))
    }
    /// The average of an optional numeric property, ignoring nils; nil when there is none.
    public func average<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? {
        average(ofProperty: Self.propertyName(keyPath))
    }

    // MARK: Observation

    /// Calls `block` with the collection now (`.initial`), then after each commit that changes
    /// it (`.update`), on the collection's own thread or actor, or on `queue` (the serial queue
    /// the database is confined to). Without `keyPaths` a change to any property of the
    /// objects counts; with them, only changes to those. See `Results.observe(keyPaths:on:_:)`.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths, on: queue, block)
    }

    /// Like `observe(keyPaths:on:_:)`, with key paths of the objects (`\.name`, `\.owner?.name`).
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0).joined(separator: ".") }, on: queue, block)
    }
}

// MARK: Conformances

extension Results: ObjectCollection {
    public func _thaw(_ isolation: isolated (any Actor)?) -> Results<Element>? { thaw(_isolation: isolation) }
}

extension List: ObjectCollection where Element: Object {
    /// The list's objects that match a parsed string predicate, in list order.
    public func filter(_ predicate: FilterPredicate) throws(QueryError) -> Results<Element> {
        try asResults().filter(predicate)
    }

    public func _thaw(_ isolation: isolated (any Actor)?) -> List<Element>? { thaw(_isolation: isolation) }
}

extension LinkingObjects: ObjectCollection {
    public func _thaw(_ isolation: isolated (any Actor)?) -> LinkingObjects<Element>? { thaw(_isolation: isolation) }
}
