public import Foundation
public import StrataStore

/// Any ``ObjectCollection`` — `Results`, a `List` or `MutableSet` of objects, or
/// `LinkingObjects` — as one type, for properties and parameters that accept any of them.
/// RealmSwift calls it `AnyRealmCollection`.
///
/// It reads, queries, observes, freezes and crosses to other contexts (`ThreadSafeReference`,
/// `@ThreadSafe`) as the collection it wraps does. Two are equal when they wrap the same
/// collection (see `==`).
public struct AnyObjectCollection<Element: Object>: ObjectCollection, CustomStringConvertible {
    /// The wrapped collection; never itself an `AnyObjectCollection` (wrapping one unwraps it).
    let base: any ObjectCollection<Element>

    /// Wraps `base`.
    public init<C: ObjectCollection>(_ base: C) where C.Element == Element {
        if let wrapped = base as? AnyObjectCollection<Element> {
            self.base = wrapped.base
        } else {
            self.base = base
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { base.count }
    public subscript(position: Int) -> Element { base[position] }

    /// Iterates with the wrapped collection's iterator, so over the objects as they were when
    /// iteration starts, as the wrapped collection does.
    public func makeIterator() -> AnyIterator<Element> { Self.iterator(base) }

    private static func iterator<C: ObjectCollection>(_ base: C) -> AnyIterator<Element> where C.Element == Element {
        AnyIterator(base.makeIterator())
    }

    /// The wrapped collection's description (`Results<Dog> <0x…> (…)`, `List<Dog> …`), as
    /// RealmSwift's `AnyRealmCollection` prints.
    public var description: String { String(describing: base) }

    /// The collection this wraps (a `Results`, `List`, `MutableSet` or `LinkingObjects`).
    public var wrappedCollection: any ObjectCollection<Element> { base }

    public var isFrozen: Bool { base.isFrozen }
    public var isInvalidated: Bool { base.isInvalidated }
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { base.where(isIncluded) }
    public func filter(_ predicate: FilterPredicate) throws(QueryError) -> Results<Element> { try base.filter(predicate) }
    public func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Element> { base.sorted(byKeyPath: keyPath, ascending: ascending) }
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor { base.sorted(by: descriptors) }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String { base.distinct(by: keyPaths) }
    public func index(of object: Element) -> Int? { base.index(of: object) }
    public func objects(at indexes: IndexSet) -> [Element] { base.objects(at: indexes) }
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

    public func _thaw(_ isolation: isolated (any Actor)?) -> AnyObjectCollection<Element>? { Self.thaw(base, isolation) }

    private static func thaw<C: ObjectCollection>(_ base: C, _ isolation: isolated (any Actor)?) -> AnyObjectCollection<Element>?
        where C.Element == Element {
        base._thaw(isolation).map { AnyObjectCollection($0) }
    }
}

// MARK: Equality

extension AnyObjectCollection: Equatable {
    /// Whether both wrap the same collection: equal `Results` or `LinkingObjects` (see their
    /// `==`), or the same list or set property of the same object in the same database
    /// instance (for unmanaged ones, the same list or set). Which objects they hold now does
    /// not enter: two collections that happen to hold the same objects are not equal.
    public static func == (lhs: AnyObjectCollection<Element>, rhs: AnyObjectCollection<Element>) -> Bool {
        switch (lhs.base, rhs.base) {
        case (let a as Results<Element>, let b as Results<Element>): a == b
        case (let a as LinkingObjects<Element>, let b as LinkingObjects<Element>): a == b
        case (let a as List<Element>, let b as List<Element>): a.isSameList(as: b)
        case (let a as MutableSet<Element>, let b as MutableSet<Element>): a.list.isSameList(as: b.list)
        default: false
        }
    }
}

// MARK: Hand-over

extension AnyObjectCollection: ThreadConfined {
    /// The wrapped collection's instance.
    public var _confinedDatabase: Database? { base._confinedDatabase }

    /// The wrapped collection's hand-over.
    public var _handover: Handover { base._handover }

    /// The collection the hand-over describes, wrapped. A `MutableSet` is handed over as the
    /// list it is stored as, so it comes back wrapping that list: the same members, in the
    /// same order, read, queried and observed the same way.
    public static func _resolve(_ handover: Handover, in database: Database) -> AnyObjectCollection<Element>? {
        switch handover.target {
        case .results: Results<Element>._resolve(handover, in: database).map { AnyObjectCollection($0) }
        case .list: List<Element>._resolve(handover, in: database).map { AnyObjectCollection($0) }
        case .linkingObjects: LinkingObjects<Element>._resolve(handover, in: database).map { AnyObjectCollection($0) }
        case .object: nil
        }
    }
}
