public import Foundation
public import StrataStore

/// A collection of distinct values or objects, declared as `@Persisted var tags: MutableSet<T>`.
///
/// ```swift
/// final class Recipe: Object {
///     @Persisted var tags: MutableSet<String>
///     @Persisted var cooks: MutableSet<Person>
/// }
///
/// try db.write { recipe.tags.insert("vegan"); recipe.tags.insert("vegan") }   // held once
/// let vegan = db.objects(Recipe.self).where { $0.tags.contains("vegan") }
/// ```
///
/// An unmanaged set is an in-memory collection; once its object is managed, the set reads and
/// writes the database (writes inside a write transaction). Objects are the same member when
/// they are the same object (for unmanaged objects: the same instance); values when they are
/// equal as stored (strings by their bytes; in a set of ``MixedValue``, numbers by value
/// whatever their kind, so `.int(5)`, `.double(5)` and a decimal 5 are one member, as in
/// Realm). The set keeps the order members were inserted
/// in, and positions index that order, as in RealmSwift; sort it for another order. It is
/// stored as a list whose elements Strata keeps distinct, so it queries (`contains`, `ANY`),
/// observes (callbacks, other actors, the async `changes`), freezes and crosses to other
/// contexts (`ThreadSafeReference`, `@ThreadSafe`) like a ``List``.
public final class MutableSet<Element: CollectionValue>: RandomAccessCollection, CustomStringConvertible {
    /// The storage: an unmanaged list, or the managed object's list column.
    let list: List<Element>

    /// An empty, unmanaged set.
    public init() { list = List() }

    init(list: List<Element>) { self.list = list }

    /// Whether the set belongs to a managed object.
    public var isManaged: Bool { list.isManaged }

    /// The database instance of the set's object; nil while unmanaged.
    public var database: Database? { list.database }

    /// Whether the set belongs to a frozen object.
    public var isFrozen: Bool { list.isFrozen }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { list.count }
    public subscript(position: Int) -> Element { list[position] }

    /// Iterates over the members as they were when iteration starts (see
    /// ``List/makeIterator()``): removing members or deleting member objects inside the loop
    /// skips none.
    public func makeIterator() -> List<Element>.Iterator { list.makeIterator() }
    /// A listing of the first members (up to 100) in RealmSwift's shape
    /// (`MutableSet<Dog> <0x…> (\n\t[0] Dog {…}\n)`); the rest are counted.
    public var description: String {
        let shape = Element._strataElementShape
        let name = "MutableSet<\(ObjectDescription.typeName(kind: shape.kind, objectType: shape.objectType))>"
        return isInvalidated ? CollectionListing.invalidated(name) : CollectionListing.describe(name, identity: self, self)
    }

    /// Whether the set's object has been deleted or its database instance invalidated
    /// (reading the set is then an error). False for an unmanaged set.
    public var isInvalidated: Bool { list.isInvalidated }

    // MARK: Membership

    /// The position of `member`, or nil.
    private func position(of member: Element) -> Int? {
        if list.isManaged {
            // A set of dynamic objects holds objects of one stored type: another type's object
            // with the same key is not a member.
            if let type = list.dynamicElementType, (member as? Object)?._slot.table?.table.schema.name != type { return nil }
            guard let value = Self.storedForm(of: member)?.identity else { return nil }
            return list.storedElements.firstIndex { $0.identity == value }
        }
        return list.firstIndex { Self.same($0, member) }
    }

    /// `member`'s stored form for comparison with a managed set's elements; nil for an object
    /// that is not managed (no managed set can hold it).
    private static func storedForm(of member: Element) -> StoreValue? {
        if let object = member as? Object {
            guard object.isManaged, !object.isInvalidated else { return nil }
            return .link(ObjectKey(object._slot.key))
        }
        return member._strataElement(nil)
    }

    /// Whether two members of an unmanaged set are the same member.
    private static func same(_ a: Element, _ b: Element) -> Bool {
        if let x = a as? Object, let y = b as? Object { return x === y || x.isSameObject(as: y) }
        return a._strataElement(nil).identity == b._strataElement(nil).identity
    }

    /// Whether the set holds `member`.
    public func contains(_ member: Element) -> Bool { position(of: member) != nil }

    /// Adds `member` unless the set holds it already. An unmanaged object added to a managed
    /// set is added to the database. A nested list or dictionary (`.list`, `.dictionary`) is
    /// refused, as by RealmSwift: the program stops with advice.
    public func insert(_ member: Element) {
        Self.requireNotNestedCollection(member)
        if list.changesInPlace, let database = list.database {
            // The store tests membership by hash: a loop of inserts in one write is linear.
            let value = list.storedElement(member, database)
            list.changeStored { table, key, column throws(StoreError) in _ = try table.insertIntoSet(value, for: key, property: column) }
            return
        }
        if position(of: member) == nil { list.append(member) }
    }

    /// Stops on a nested list or dictionary offered to a `MutableSet<MixedValue>`: a set's
    /// members are compared by value, and RealmSwift refuses collections in sets too.
    static func requireNotNestedCollection(_ member: Element) {
        guard let value = member as? MixedValue else { return }
        switch value {
        case .list, .dictionary:
            fatalError("A MutableSet<AnyRealmValue>/MutableSet<MixedValue> cannot hold a nested list or dictionary (RealmSwift refuses them too): keep the collection in a List or Map of AnyRealmValue, or in an AnyRealmValue property.")
        default:
            return
        }
    }

    /// Adds each of `members` the set does not hold yet.
    public func insert<S: Sequence>(objectsIn members: S) where S.Element == Element {
        for member in members { insert(member) }
    }

    /// Removes `member` if the set holds it.
    public func remove(_ member: Element) {
        if let position = position(of: member) { list.remove(at: position) }
    }

    /// Removes every member.
    public func removeAll() { list.removeAll() }

    /// Whether every member of this set is in `other`.
    public func isSubset(of other: MutableSet<Element>) -> Bool { allSatisfy { other.contains($0) } }

    /// Whether the two sets share a member.
    public func intersects(_ other: MutableSet<Element>) -> Bool { contains { other.contains($0) } }

    /// Keeps only the members `other` holds too.
    public func formIntersection(_ other: MutableSet<Element>) {
        for member in Array(self) where !other.contains(member) { remove(member) }
    }

    /// Adds the members of `other`.
    public func formUnion(_ other: MutableSet<Element>) { insert(objectsIn: Array(other)) }

    /// Removes the members of `other`.
    public func subtract(_ other: MutableSet<Element>) {
        for member in Array(other) { remove(member) }
    }

    /// The members, each once, in the order first met.
    static func distinct<S: Sequence>(_ members: S) -> [Element] where S.Element == Element {
        var result: [Element] = []
        for member in members where !result.contains(where: { same($0, member) }) { result.append(member) }
        return result
    }

    // MARK: Freezing

    /// The set as of the version its object's database reads, immutable and usable from any
    /// thread or actor. Returns `self` when already frozen. Freezing an unmanaged set is a
    /// programming error.
    public func freeze() -> MutableSet<Element> {
        guard list.isManaged else { fatalError("Cannot freeze an unmanaged MutableSet; only sets of managed objects can be frozen.") }
        if isFrozen { return self }
        return MutableSet(list: list.freeze())
    }

    /// The live set in the caller's context, or nil when its object has been deleted since.
    /// Returns `self` when live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> MutableSet<Element>? {
        guard list.isManaged else { fatalError("Cannot thaw an unmanaged MutableSet; only sets of managed objects can be frozen and thawed.") }
        guard isFrozen else { return self }
        return list.thaw(_isolation: isolation).map { MutableSet(list: $0) }
    }

    // MARK: Notifications

    /// Calls `block` with the set now (`.initial`), then after each commit that changes it;
    /// see `List.observe(keyPaths:on:_:)`.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<MutableSet<Element>>) -> Void) -> NotificationToken {
        list.observe(keyPaths: keyPaths, on: queue) { change in block(change.map { MutableSet(list: $0) }) }
    }
}

extension MutableSet: _Persistable {
    public static var _strataShape: _PropertyShape {
        let shape = Element._strataElementShape
        return _PropertyShape(kind: shape.kind, isOptional: shape.optional, isList: true, isSet: true, objectType: shape.objectType,
                              linkTarget: Element._strataLinkType)
    }
    public static func _strataDefault() -> MutableSet<Element> { MutableSet() }
    public static func _strataGet(_ object: Object, _ column: Int) -> MutableSet<Element> {
        MutableSet(list: List(owner: object, column: column))
    }
    public static func _strataSet(_ object: Object, _ column: Int, _ value: MutableSet<Element>) {
        for member in value { requireNotNestedCollection(member) }
        let values = distinct(value).map { $0._strataElement(object._database) }
        object._setStored(.list(values), column)
    }
    public func _strataStored(_ database: Database?) -> _StoredProperty {
        .list(Self.distinct(self).map { $0._strataElement(database) })
    }
    public static func _strataFrom(any value: Any, _ database: Database?) -> MutableSet<Element>? {
        // Always a new set holding the members, as for a list (`List._strataFrom(any:_:)`).
        guard let list = List<Element>._strataFrom(any: value, database) else { return nil }
        let set = MutableSet()
        set.insert(objectsIn: Array(list))
        return set
    }
    public var _strataAny: Any { self }
    public static func _strataRecordingValue(_ recorder: KeyPathRecorder) -> MutableSet<Element> { MutableSet() }
}

extension MutableSet: _LinkTarget where Element: Object {
    public static var _strataLinkTarget: Object.Type { Element.self }
}

extension MutableSet: ListQueryable where Element: _PersistableInsideOptional {
    public typealias QueryElement = Element
}

extension MutableSet: ObjectCollection where Element: Object {
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { list.where(isIncluded) }
    public func filter(_ predicate: FilterPredicate) throws(QueryError) -> Results<Element> { try list.filter(predicate) }
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> { list.sorted(byKeyPath: keyPath, ascending: ascending) }
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor { list.sorted(by: descriptors) }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String { list.distinct(by: keyPaths) }
    public func index(of object: Element) -> Int? { position(of: object) }
    public func min<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { list.min(ofProperty: property) }
    public func max<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { list.max(ofProperty: property) }
    public func sum<T: _PersistableInsideOptional>(ofProperty property: String) -> T { list.sum(ofProperty: property) }
    public func average<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { list.average(ofProperty: property) }
    public func _thaw(_ isolation: isolated (any Actor)?) -> MutableSet<Element>? { thaw(_isolation: isolation) }
}

extension MutableSet where Element: Object {
    /// The smallest value of a property of the set's objects, ignoring nils (managed or not).
    public func min<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? { list.min(of: keyPath) }
    /// The smallest value of an optional property of the set's objects, ignoring nils.
    public func min<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? { list.min(of: keyPath) }
    /// The largest value of a property of the set's objects, ignoring nils.
    public func max<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? { list.max(of: keyPath) }
    /// The largest value of an optional property of the set's objects, ignoring nils.
    public func max<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? { list.max(of: keyPath) }
    /// The sum of a property of the set's objects, ignoring nils (0 for none).
    public func sum<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T { list.sum(of: keyPath) }
    /// The average of a property of the set's objects, ignoring nils.
    public func average<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? { list.average(of: keyPath) }
    /// The average of an optional property of the set's objects, ignoring nils.
    public func average<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? { list.average(of: keyPath) }
}

extension MutableSet {
    /// Calls `block` on `actor` with the set now (`.initial`) and after each commit that changes
    /// it, each time with that actor's copy of the set (see `List.observe(keyPaths:on:_:)`).
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<MutableSet<Element>>) -> Void) async -> NotificationToken {
        await list.observe(as: MutableSet<Element>.self, keyPaths: keyPaths, on: actor, operation: "MutableSet.observe(keyPaths:on:_:)", block)
    }

    /// The set's changes as an asynchronous sequence: `.initial` first, then an `.update` after
    /// each commit that changes it. Start it in the set's context.
    public var changes: ChangeStream<CollectionChange<MutableSet<Element>>> { changes(keyPaths: nil) }

    /// The changes to the properties `keyPaths` name in the set's objects.
    public func changes(keyPaths: [String]?) -> ChangeStream<CollectionChange<MutableSet<Element>>> {
        list.changes(as: MutableSet<Element>.self, keyPaths: keyPaths, operation: "MutableSet.changes")
    }
}

extension MutableSet: ThreadConfined {
    /// The set's instance (`database`).
    public var _confinedDatabase: Database? { database }

    /// The set's hand-over: its object and property, as a list's.
    public var _handover: Handover { list._handover }

    /// The same set of the same object in `database`, or nil if the object was deleted.
    public static func _resolve(_ handover: Handover, in database: Database) -> MutableSet<Element>? {
        List<Element>._resolve(handover, in: database).map { MutableSet(list: $0) }
    }
}
