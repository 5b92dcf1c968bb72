public import Foundation
import StrataStore

/// Live query results: the objects of one type that match a predicate, in key order or sorted,
/// re-evaluated against the database instance's current version whenever they are read. Lazy:
/// nothing is read until you ask for a count, an element or an iteration, and asking for the
/// first few objects of sorted results selects them without sorting everything.
public struct Results<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    let database: Database
    /// The type's table when the results were made; nil when the file had no table for the
    /// type yet.
    private let knownContext: TableContext?
    let predicate: QueryPredicate?
    let orderings: [QueryOrdering]
    /// For results made from a list (`list.where { }`, `list.sorted(…)`): the list's objects, in
    /// list order, in the current version.
    let listKeys: (() -> [ObjectKey])?
    /// For results made from a list: which list (its owner and property), so that the results
    /// can be found again in another instance (hand-over, thaw, observing on another actor).
    let listOrigin: ListOrigin?
    private let cache = Evaluation()

    init(database: Database, context: TableContext?, predicate: QueryPredicate?, orderings: [QueryOrdering] = [],
         listKeys: (() -> [ObjectKey])? = nil, listOrigin: ListOrigin? = nil) {
        self.database = database
        self.knownContext = context
        self.predicate = predicate
        self.orderings = orderings
        self.listKeys = listKeys
        self.listOrigin = listOrigin
    }

    /// The type's table, or nil while the file has none (the results are then empty). A type's
    /// table is added by the first write that uses the type, after results may have been made,
    /// so results made without one look for it again on each read: they stay live.
    var context: TableContext? {
        if let knownContext, !knownContext.table.isDropped { return knownContext }
        return database.core.withReadLock { (try? database.core.existingContext(for: Element.self)) ?? nil }
    }

    // A frozen instance's results may be read from several threads at once: everything that
    // reaches the store or the evaluation cache (including `OrderedKeys`, which sorts lazily)
    // runs under its lock. Live instances take no lock (see DatabaseCore.withReadLock).

    /// What was last computed, valid while the session's content serial is unchanged.
    final class Evaluation {
        var table: ObjectIdentifier?
        var query: TableQuery?
        var contentSerial: UInt64 = 0
        var ordered: OrderedKeys?
        var count: Int?
    }

    /// The compiled query for the current version (compiled again only when the table changes).
    private func query(_ context: TableContext) -> TableQuery {
        let table = context.table
        let session = context.session
        if cache.contentSerial != session.contentSerial || cache.contentSerial == 0 {
            cache.ordered = nil
            cache.count = nil
            cache.contentSerial = session.contentSerial
        }
        if let query = cache.query, cache.table == ObjectIdentifier(table) { return query }
        do {
            let query = try TableQuery(table: table, predicate: predicate)
            cache.query = query
            cache.table = ObjectIdentifier(table)
            cache.ordered = nil
            cache.count = nil
            return query
        } catch {
            fatalError("\(error)")
        }
    }

    private func run<R>(_ operation: String, _ body: (TableContext, TableQuery) throws -> R, empty: R) -> R {
        database.core.withReadLock { unlockedRun(operation, body, empty: empty) }
    }

    private func unlockedRun<R>(_ operation: String, _ body: (TableContext, TableQuery) throws -> R, empty: R) -> R {
        database.core.verify(operation)
        guard let context else { return empty }
        let query = query(context)
        do { return try body(context, query) } catch let error as QueryError {
            fatalError("\(error)")
        } catch {
            context.fail(error)
        }
    }

    /// The matching objects' keys in order (lazily sorted).
    private func ordered(_ operation: String) -> (TableContext, OrderedKeys)? {
        run(operation, { context, query in
            if let ordered = cache.ordered { return (context, ordered) }
            let ordered = try query.ordered(orderings, base: listKeys?())
            cache.ordered = ordered
            return (context, ordered)
        }, empty: nil)
    }

    /// The matching objects' keys in the current version, in order.
    func keys() -> [ObjectKey] {
        database.core.withReadLock {
            guard let (context, ordered) = ordered("reading Results") else { return [] }
            do { return try ordered.all() } catch { context.fail(error) }
        }
    }

    /// The key at `position` of `ordered` (which may read the store to order more of it).
    private func key(_ ordered: OrderedKeys, at position: Int, _ context: TableContext) -> ObjectKey {
        do { return try ordered.key(at: position) } catch { context.fail(error) }
    }

    /// The compiled query for the current version, or nil while the type has no table.
    func currentQuery() -> TableQuery? {
        run("reading Results", { _, query in query }, empty: nil)
    }

    /// Takes `keys` as the matching objects' keys in order in the current version (a
    /// notification computed them from the change log), so that reading the results delivered
    /// with it does not run the query again.
    func adopt(_ keys: [ObjectKey]) {
        database.core.withReadLock {
            guard listKeys == nil, let context else { return }
            _ = query(context)
            cache.ordered = OrderedKeys(keys: keys)
            cache.count = keys.count
        }
    }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The number of matching objects.
    public var count: Int {
        run("Results.count", { context, query in
            if let count = cache.count { return count }
            let count: Int
            if listKeys != nil || orderings.contains(where: { if case .distinct = $0 { true } else { false } }) {
                let ordered = try cache.ordered ?? query.ordered(orderings, base: listKeys?())
                cache.ordered = ordered
                count = ordered.count
            } else if let ordered = cache.ordered {
                count = ordered.count
            } else {
                count = try query.count()
            }
            cache.count = count
            return count
        }, empty: 0)
    }

    /// Whether no object matches.
    public var isEmpty: Bool { first == nil }

    public subscript(position: Int) -> Element {
        database.core.withReadLock { element(at: position) }
    }

    private func element(at position: Int) -> Element {
        guard let (context, ordered) = ordered("reading Results") else {
            fatalError("Results index \(position) is out of bounds (count 0)")
        }
        require(position >= 0 && position < ordered.count, "Results index \(position) is out of bounds (count \(ordered.count))")
        return context.materialize(Element.self, key: key(ordered, at: position, context))
    }

    /// The first object, or nil. Without sorting, it reads only as far as the first match (or
    /// asks the index).
    public var first: Element? {
        database.core.withReadLock { firstElement }
    }

    private var firstElement: Element? {
        if orderings.isEmpty && cache.ordered == nil && listKeys == nil {
            return run("reading Results", { context, query in
                try query.keys(limit: 1).first.map { context.materialize(Element.self, key: $0) }
            }, empty: nil)
        }
        guard let (context, ordered) = ordered("reading Results"), ordered.count > 0 else { return nil }
        return context.materialize(Element.self, key: key(ordered, at: 0, context))
    }

    /// The last object, or nil.
    public var last: Element? {
        database.core.withReadLock {
            guard let (context, ordered) = ordered("reading Results"), ordered.count > 0 else { return nil }
            return context.materialize(Element.self, key: key(ordered, at: ordered.count - 1, context))
        }
    }

    /// The position of `object` in the results, or nil.
    public func index(of object: Element) -> Int? {
        guard let table = object._slot.table, table === context else { return nil }
        return database.core.withReadLock {
            guard let (context, ordered) = ordered("Results.index(of:)") else { return nil }
            do { return try ordered.position(of: ObjectKey(object._slot.key)) } catch { context.fail(error) }
        }
    }

    /// The position of the first object matching a condition, or nil.
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        let matching = self.where(isIncluded)
        guard let first = matching.first else { return nil }
        return index(of: first)
    }

    /// The objects at `indexes`, in order, without reading the others.
    public func objects(at indexes: IndexSet) -> [Element] {
        database.core.withReadLock { elements(at: indexes) }
    }

    private func elements(at indexes: IndexSet) -> [Element] {
        guard let (context, ordered) = ordered("Results.objects(at:)") else {
            require(indexes.isEmpty, "Results index out of bounds (count 0)")
            return []
        }
        return indexes.map { position in
            require(position >= 0 && position < ordered.count, "Results index \(position) is out of bounds (count \(ordered.count))")
            return context.materialize(Element.self, key: key(ordered, at: position, context))
        }
    }

    /// A listing of the first objects (up to 100), each with its properties, in RealmSwift's
    /// shape (`Results<Dog> <0x…> (\n\t[0] Dog {…}\n)`); the rest are counted.
    public var description: String {
        let name = "Results<\(Element.className())>"
        return isInvalidated ? CollectionListing.invalidated(name) : CollectionListing.describe(name, identity: identity, self)
    }

    /// The object whose address a description shows: shared by copies of these results.
    var identity: AnyObject { cache }

    /// Whether the results can no longer be read: their database instance was invalidated, or
    /// they were made from a list whose object has since been deleted.
    public var isInvalidated: Bool {
        if database.isInvalidatedForObjects { return true }
        guard let origin = listOrigin, !isFrozen else { return false }
        return database.core.withReadLock {
            guard let owners = try? database.core.context(for: origin.ownerType) else { return true }
            return !owners.containsOrStops(ObjectKey(origin.ownerKey))
        }
    }

    /// How the query runs: the index it uses, or how many clusters it scans, and how many
    /// objects it examines one by one. For diagnostics and tests; the text may change.
    public func explain() -> String {
        run("Results.explain()", { _, query in
            _ = try query.ordered(orderings, base: listKeys?())
            return "\(Element.className()) where \(predicate?.description ?? "TRUEPREDICATE"): \(query.plan); \(query.statistics)"
        }, empty: "\(Element.className()): no table yet")
    }

    /// How the last evaluation went (package-internal, for tests).
    var lastStatistics: QueryStatistics? { database.core.withReadLock { cache.query?.statistics } }

    /// Iterates over the objects as they were when iteration starts: a loop that deletes
    /// objects or changes them so that they no longer match still visits every object it
    /// started with (`for item in results { db.delete(item) }` deletes them all). An object
    /// deleted before the loop reaches it is still visited, invalidated (`isInvalidated` is
    /// true and reading its properties stops the process), as in RealmSwift.
    public func makeIterator() -> Iterator {
        database.core.withReadLock { unlockedIterator() }
    }

    private func unlockedIterator() -> Iterator {
        guard let context else { return Iterator(context: nil, keys: [], clusters: []) }
        // Every object, cluster by cluster: the fast path. Inside a write transaction the
        // loop's body may delete or add objects, which changes the writer's clusters under
        // the walk (skipping objects), so the loop walks the keys as they were when it
        // started instead, as the other results always do (RealmSwift iterates a snapshot).
        if predicate == nil && orderings.isEmpty && listKeys == nil && !database.core.session.isInWriteTransaction {
            database.core.verify("iterating Results")
            var clusters: [ClusterView] = []
            do {
                try context.table.forEachCluster { clusters.append($0); return true }
            } catch {
                context.fail(error)
            }
            return Iterator(context: context, keys: [], clusters: clusters)
        }
        return Iterator(context: context, keys: keys(), clusters: [])
    }

    /// Iterates over results, in the order and membership they had when the iteration began
    /// (see ``Results/makeIterator()``).
    ///
    /// An object your code no longer references when the next step begins (no strong,
    /// `weak` or `unowned` reference) may be reused for the next object, as if it had been
    /// freed and a new one allocated at the same address. Objects you keep — in a collection,
    /// a property, a weak reference — are never reused. Classes with stored properties that
    /// are not `@Persisted`, and frozen results, always get a new object per step. A class's
    /// `init()` and `deinit` therefore run once per reused object, not once per step.
    public struct Iterator: IteratorProtocol {
        /// The iteration's state and steps, which do not depend on `Element` (so that they run
        /// as compiled here, with no generic code in the step).
        /// A copy of the iterator continues on its own copy of the walk (value semantics).
        private var walk: ObjectWalk?

        init(context: TableContext?, keys: [ObjectKey], clusters: [ClusterView]) {
            walk = context.map { ObjectWalk(context: $0, keys: keys, clusters: clusters) }
        }

        public mutating func next() -> Element? {
            if !isKnownUniquelyReferenced(&walk), let shared = walk { walk = shared.copy() }
            // Unretained for the call (the iterator holds the walk): a strong local retained
            // and released it at every step.
            guard let reference = walk.map(Unmanaged.passUnretained),
                  let object = reference._withUnsafeGuaranteedRef({ $0.next() }) else { return nil }
            // The walk's objects are made by `Element`'s table context, as `Element` (see
            // `TableContext.materialize(dynamicKey:cluster:row:)`).
            return unsafeDowncast(object, to: Element.self)
        }
    }

    /// Iterates over the objects at `positions` of the results as they are now (for a
    /// section of sectioned results): the keys are taken now, so changes made during the
    /// loop do not move it.
    func makeIterator(positions: [Int]) -> Iterator {
        database.core.withReadLock {
            guard let context else { return Iterator(context: nil, keys: [], clusters: []) }
            let all = keys()
            return Iterator(context: context, keys: positions.compactMap { $0 < all.count ? all[$0] : nil }, clusters: [])
        }
    }

    // MARK: Filtering

    /// Results that also match `predicate`, checked now against the type's properties.
    func adding(_ condition: QueryPredicate) throws(QueryError) -> Results<Element> {
        // A filter after a sort or distinct filters first: the order and the distinct
        // representatives are those of the filtered objects, as in Realm.
        let combined = predicate.map { $0 && condition } ?? condition
        try validate(combined)
        return Results(database: database, context: context, predicate: combined, orderings: orderings, listKeys: listKeys, listOrigin: listOrigin)
    }

    private func validate(_ predicate: QueryPredicate) throws(QueryError) {
        guard let context else { return }
        let made = database.core.withReadLock { Result { () throws(QueryError) in try TableQuery(table: context.table, predicate: predicate) } }
        _ = try made.get()
    }

    /// The results that also match the query built by `isIncluded`:
    /// `todos.where { $0.owner == "Ann" && !$0.done }`.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        let query = isIncluded(Query<Element>())
        do { return try adding(query.asPredicate) } catch { fatalError("\(error)") }
    }

    // MARK: Sorting and distinct

    /// The results sorted by a property (or a key path through to-one links, `"owner.name"`).
    /// Sorting is stable; nil sorts first in ascending order.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The results sorted by a property.
    public func sorted<V>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The results sorted by several keys: the first decides, the next break ties, and so on.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        let keys = descriptors.map { SortKey(path: $0.keyPath.split(separator: ".").map(String.init), ascending: $0.ascending) }
        guard !keys.isEmpty else { return self }
        return ordering(.sort(keys))
    }

    /// The results with only the first object of each distinct combination of values of
    /// `keyPaths` (in the current order).
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        let paths = keyPaths.map { $0.split(separator: ".").map(String.init) }
        guard !paths.isEmpty else { return self }
        return ordering(.distinct(paths))
    }

    /// The results with only the first object of each distinct combination of values.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == PartialKeyPath<Element> {
        let paths = keyPaths.map { KeyPathRecorder.names(partial: $0) }
        guard !paths.isEmpty else { return self }
        return ordering(.distinct(paths))
    }

    private func ordering(_ step: QueryOrdering) -> Results<Element> {
        let results = Results(database: database, context: context, predicate: predicate, orderings: orderings + [step], listKeys: listKeys, listOrigin: listOrigin)
        if let context {
            database.core.withReadLock { check(step, in: context) }
        }
        return results
    }

    private func check(_ step: QueryOrdering, in context: TableContext) {
        do {
            let query = try TableQuery(table: context.table, predicate: predicate)
            switch step {
            case .sort(let keys): for key in keys { try query.checkValuePath(key.path, purpose: "sort") }
            case .distinct(let paths): for path in paths { try query.checkValuePath(path, purpose: "find distinct values") }
            }
        } catch {
            fatalError("\(error)")
        }
    }

    // MARK: Aggregates

    private func aggregate(_ aggregate: QueryAggregate, _ path: [String]) -> StoreValue {
        run("Results aggregate", { _, query in
            let keys: [ObjectKey]? = listKeys != nil || orderings.contains(where: { if case .distinct = $0 { true } else { false } })
                ? try (cache.ordered ?? query.ordered(orderings, base: listKeys?())).all() : nil
            return try query.aggregate(aggregate, path, keys: keys)
        }, empty: aggregate == .sum ? .int(0) : .null)
    }

    private func propertyPath(_ name: String) -> [String] { name.split(separator: ".").map(String.init) }

    /// The smallest value of a number or date property, ignoring nils; nil when there is none.
    public func min<T: _PersistableInsideOptional>(ofProperty property: String) -> T? {
        AggregateValue.convert(aggregate(.min, propertyPath(property)))
    }

    /// The largest value of a number or date property, ignoring nils; nil when there is none.
    public func max<T: _PersistableInsideOptional>(ofProperty property: String) -> T? {
        AggregateValue.convert(aggregate(.max, propertyPath(property)))
    }

    /// The sum of a number property, ignoring nils (0 when there are no objects).
    public func sum<T: _PersistableInsideOptional>(ofProperty property: String) -> T {
        guard let value: T = AggregateValue.convert(aggregate(.sum, propertyPath(property))) ?? AggregateValue.convert(.int(0)) else {
            fatalError("sum(ofProperty: \"\(property)\") cannot be returned as \(T.self)")
        }
        return value
    }

    /// The average of a number property, ignoring nils; nil when there is none.
    public func average<T: _PersistableInsideOptional>(ofProperty property: String) -> T? {
        AggregateValue.convert(aggregate(.average, propertyPath(property)))
    }

    /// The smallest value of a property, ignoring nils.
    public func min<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? {
        AggregateValue.convert(aggregate(.min, KeyPathRecorder.names(keyPath)))
    }
    /// The smallest value of an optional property, ignoring nils.
    public func min<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? {
        AggregateValue.convert(aggregate(.min, KeyPathRecorder.names(keyPath)))
    }

    /// The largest value of a property, ignoring nils.
    public func max<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? {
        AggregateValue.convert(aggregate(.max, KeyPathRecorder.names(keyPath)))
    }
    /// The largest value of an optional property, ignoring nils.
    public func max<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? {
        AggregateValue.convert(aggregate(.max, KeyPathRecorder.names(keyPath)))
    }

    /// The sum of a property, ignoring nils.
    public func sum<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T {
        sum(ofProperty: KeyPathRecorder.names(keyPath).joined(separator: "."))
    }

    /// The average of a property, ignoring nils.
    public func average<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? {
        AggregateValue.convert(aggregate(.average, KeyPathRecorder.names(keyPath)))
    }
    /// The average of an optional property, ignoring nils.
    public func average<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? {
        AggregateValue.convert(aggregate(.average, KeyPathRecorder.names(keyPath)))
    }
}

enum AggregateValue {
    static func convert<T: _PersistableInsideOptional>(_ value: StoreValue) -> T? {
        if value.isNull { return nil }
        switch (T._strataKind, value) {
        case (.int, .double(let v)): return integer(v).flatMap { T._strataLoad(.int($0), nil) }
        case (.int, .float(let v)): return integer(Double(v)).flatMap { T._strataLoad(.int($0), nil) }
        case (.double, .int(let v)): return T._strataLoad(.double(Double(v)), nil)
        case (.double, .float(let v)): return T._strataLoad(.double(Double(v)), nil)
        case (.float, .double(let v)): return T._strataLoad(.float(Float(v)), nil)
        case (.float, .int(let v)): return T._strataLoad(.float(Float(v)), nil)
        case (.decimal128, .int(let v)): return T._strataLoad(.decimal128(Decimal128(v)), nil)
        case (.decimal128, .double(let v)): return T._strataLoad(.decimal128(Decimal128(v)), nil)
        case (.double, .decimal128(let v)): return T._strataLoad(.double(v.doubleValue), nil)
        default: return T._strataLoad(value, nil)
        }
    }

    /// A double as an integer, truncated toward zero; the nearest end of Int64's range for a
    /// value beyond it; nil for NaN, which no integer stands for.
    static func integer(_ value: Double) -> Int64? {
        if value.isNaN { return nil }
        if value >= 0x1p63 { return .max }
        if value < -0x1p63 { return .min }
        return Int64(value.rounded(.towardZero))
    }
}

extension Results: Equatable {
    /// Whether both are the same live collection: the same query — the same type, conditions,
    /// sort order and distinct keys, over the same list when made from one — on the same
    /// database instance. Which objects they hold now does not enter: results of two different
    /// queries that happen to match the same objects are not equal, and results compare equal
    /// to themselves however the database changes.
    public static func == (lhs: Results<Element>, rhs: Results<Element>) -> Bool {
        if lhs.cache === rhs.cache { return true }
        guard lhs.database.core === rhs.database.core, lhs.predicate == rhs.predicate, lhs.orderings == rhs.orderings,
              (lhs.listKeys == nil) == (rhs.listKeys == nil) else { return false }
        switch (lhs.listOrigin, rhs.listOrigin) {
        case (nil, nil): break
        case (let a?, let b?):
            guard ObjectIdentifier(a.ownerType) == ObjectIdentifier(b.ownerType), a.ownerKey == b.ownerKey, a.column == b.column else { return false }
        default: return false
        }
        // The stored type (results of `DynamicObject` name it; for other types it is `Element`).
        return lhs.database.core.withReadLock { lhs.context?.table === rhs.context?.table }
    }
}
