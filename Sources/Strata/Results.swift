import StrataStore

/// Live query results: the objects of one type that match a predicate, re-evaluated against
/// the database instance's current version whenever they are read. Lazy: nothing is read
/// until you ask for a count, an element or an iteration.
public struct Results<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    let database: Database
    /// The type's table when the results were made; nil when the file had no table for the
    /// type yet.
    private let knownContext: TableContext?
    let predicate: QueryPredicate?
    private let cache = KeyCache()

    init(database: Database, context: TableContext?, predicate: QueryPredicate?) {
        self.database = database
        self.knownContext = context
        self.predicate = predicate
    }

    /// The type's table, or nil while the file has none (the results are then empty). A type's
    /// table is added by the first write that uses the type, after results may have been made,
    /// so results made without one look for it again on each read: they stay live.
    var context: TableContext? {
        if let knownContext, !knownContext.table.isDropped { return knownContext }
        return (try? database.core.existingContext(for: Element.self)) ?? nil
    }

    /// The keys last computed, valid while the session's content serial is unchanged.
    final class KeyCache {
        var contentSerial: UInt64 = 0
        var keys: [ObjectKey] = []
    }

    /// The matching objects' keys in the current version.
    func keys() throws -> [ObjectKey] {
        guard let context else { return [] }
        let session = context.session
        if cache.contentSerial == session.contentSerial && cache.contentSerial != 0 { return cache.keys }
        var keys: [ObjectKey] = []
        if let predicate {
            keys = try predicate.evaluate(in: context)
        } else {
            keys = try context.table.allKeys()
        }
        cache.keys = keys
        cache.contentSerial = session.contentSerial
        return keys
    }

    private func currentKeys() -> [ObjectKey] {
        database.core.verify("reading Results")
        do { return try keys() } catch { context?.fail(error) ?? fatalError("\(error)") }
    }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The number of matching objects.
    public var count: Int {
        guard let context else { return 0 }
        if predicate == nil {
            database.core.verify("Results.count")
            do { return try context.table.count } catch { context.fail(error) }
        }
        return currentKeys().count
    }

    public subscript(position: Int) -> Element {
        let keys = currentKeys()
        require(position >= 0 && position < keys.count, "Results index \(position) is out of bounds (count \(keys.count))")
        return context!.materialize(Element.self, key: keys[position])
    }

    /// The first object, or nil.
    public var first: Element? {
        let keys = currentKeys()
        return keys.first.map { context!.materialize(Element.self, key: $0) }
    }

    /// The last object, or nil.
    public var last: Element? {
        let keys = currentKeys()
        return keys.last.map { context!.materialize(Element.self, key: $0) }
    }

    /// The position of `object` in the results, or nil.
    public func index(of object: Element) -> Int? {
        guard let table = object._slot.pointee.table, table === context else { return nil }
        return currentKeys().firstIndex(of: ObjectKey(object._slot.pointee.key))
    }

    public var description: String { "Results<\(Element.className())>(\(count) objects)" }

    /// Iterates over the objects of the version current when iteration starts.
    public func makeIterator() -> Iterator {
        guard let context else { return Iterator(context: nil, keys: [], clusters: []) }
        if predicate == nil {
            database.core.verify("iterating Results")
            var clusters: [ClusterView] = []
            do {
                try context.table.forEachCluster { clusters.append($0); return true }
            } catch {
                context.fail(error)
            }
            return Iterator(context: context, keys: [], clusters: clusters)
        }
        return Iterator(context: context, keys: currentKeys(), clusters: [])
    }

    /// Iterates over results.
    public struct Iterator: IteratorProtocol {
        let context: TableContext?
        let keys: [ObjectKey]
        let clusters: [ClusterView]
        var position = 0
        var clusterIndex = 0

        init(context: TableContext?, keys: [ObjectKey], clusters: [ClusterView]) {
            self.context = context
            self.keys = keys
            self.clusters = clusters
        }

        public mutating func next() -> Element? {
            guard let context else { return nil }
            if !clusters.isEmpty {
                while clusterIndex < clusters.count {
                    let cluster = clusters[clusterIndex]
                    if position < cluster.count {
                        defer { position += 1 }
                        return context.materialize(Element.self, key: cluster.key(at: position), cluster: cluster, row: position)
                    }
                    clusterIndex += 1
                    position = 0
                }
                return nil
            }
            guard position < keys.count else { return nil }
            defer { position += 1 }
            return context.materialize(Element.self, key: keys[position])
        }
    }

    // MARK: Filtering

    /// The results that also match the query built by `isIncluded`:
    /// `todos.where { $0.owner == "Ann" && $0.done == false }`.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        let query = isIncluded(Query<Element>(path: []))
        guard let condition = query.predicate else {
            fatalError("The where { } closure must return a comparison, e.g. $0.name == \"x\".")
        }
        let combined = predicate.map { QueryPredicate.and($0, condition) } ?? condition
        return Results(database: database, context: context, predicate: combined)
    }
}
