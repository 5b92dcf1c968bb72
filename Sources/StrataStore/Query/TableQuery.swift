import Foundation

/// A predicate compiled for one table of one session: counts, keys and aggregates, through an
/// index when one answers the predicate.
package final class TableQuery {
    // Alive while used: the session holds its tables for life, and is held while queries run.
    unowned(unsafe) let table: TableAccess
    let node: QueryNode
    let predicate: QueryPredicate?
    private let evaluator: QueryEvaluator
    /// An equality on an indexed property (or the primary key) that every match must satisfy,
    /// and the rest of the predicate.
    let indexed: (property: Int, value: StoreValue, rest: QueryNode)?
    package private(set) var statistics = QueryStatistics(index: nil, objectsExamined: 0, clustersScanned: 0)
    /// The properties the predicate reads, when column kernels alone evaluate it.
    let predicateColumns: Set<Int>?
    /// Whether counts, filters and sorts may take their fast paths (column scans, index
    /// counts, top-k selection). Tests turn it off to compare them with the general path.
    var allowsFastPaths = true
    /// Column scans made for this query (one per set of columns read), kept for reuse.
    private var scans: [ColumnScan] = []
    /// `ANY list == object` on a list of links (what `LinkingObjects` through a list asks):
    /// answered from the stored lists alone, without locating each object.
    let listContains: (property: Int, target: ObjectKey)?

    /// Compiles `predicate` (nil: every object) for `table`. Throws for unknown properties and
    /// mismatched types.
    package init(table: TableAccess, predicate: QueryPredicate?) throws(QueryError) {
        self.table = table
        self.predicate = predicate
        var compiler = QueryCompiler(root: table)
        node = try predicate.map { p throws(QueryError) in try compiler.compile(p) } ?? .constant(true)
        evaluator = QueryEvaluator(node: node, table: table)
        indexed = Self.indexPlan(node, table: table)
        predicateColumns = Self.kernelColumns(node)
        listContains = Self.listPlan(node)
    }

    /// Whether `node` is exactly `ANY links == object` for a list of links.
    private static func listPlan(_ node: QueryNode) -> (property: Int, target: ObjectKey)? {
        guard case .general(let comparison) = node, comparison.op == .equal, comparison.options.isEmpty,
              comparison.modifier == .any, case .path(let path) = comparison.lhs, case .root = path.origin,
              path.steps.count == 1, path.steps[0].isList, !path.steps[0].isInverse, path.steps[0].kind == .link,
              case .constant(.link(let target)) = comparison.rhs else { return nil }
        return (path.steps[0].property, target)
    }

    /// The matching keys from the stored lists, when the list plan applies and can run now.
    private func listedKeys() throws -> [ObjectKey]? {
        guard allowsFastPaths, let listContains,
              let keys = try table.keys(withList: listContains.property, holding: listContains.target) else { return nil }
        statistics = QueryStatistics(index: "lists of '\(table.schema.properties[listContains.property].name)'",
                                     objectsExamined: 0, clustersScanned: 0)
        return keys
    }

    /// Whether `node` is (or is an AND with) `property == constant` on an indexed property.
    private static func indexPlan(_ node: QueryNode, table: TableAccess) -> (property: Int, value: StoreValue, rest: QueryNode)? {
        func equality(_ node: QueryNode) -> (Int, StoreValue)? {
            let comparison: GeneralComparison
            switch node {
            case .kernel(let kernel): comparison = kernel.fallback
            case .general(let general): comparison = general
            default: return nil
            }
            guard comparison.op == .equal, comparison.options.isEmpty,
                  case .path(let path) = comparison.lhs, case .root = path.origin, path.steps.count == 1, !path.isCollection,
                  case .constant(let value) = comparison.rhs else { return nil }
            let property = table.schema.properties[path.steps[0].property]
            guard property.isIndexed || property.isPrimaryKey, property.kind.canBeIndexed || property.isPrimaryKey, !value.isNull,
                  value.kind == property.kind || (property.kind == .mixed && MixedEncoding.isIndexLookupExact(value)) else { return nil }
            return (path.steps[0].property, value)
        }
        if let (property, value) = equality(node) { return (property, value, .constant(true)) }
        if case .and(let parts) = node {
            for (i, part) in parts.enumerated() {
                if let (property, value) = equality(part) {
                    var rest = parts
                    rest.remove(at: i)
                    return (property, value, rest.count == 1 ? rest[0] : .and(rest))
                }
            }
        }
        return nil
    }

    /// Whether an index answers the predicate.
    var isIndexed: Bool { indexed != nil }

    /// A description of the plan, e.g. `index on 'owner'` or `scan (owner == "Ann")`.
    package var plan: String {
        if let indexed {
            let property = table.schema.properties[indexed.property]
            return (property.isPrimaryKey ? "primary key '" : "index on '") + property.name + "'"
        }
        return "scan"
    }

    // MARK: Running

    /// The matching keys from the index, confirmed against the rest of the predicate.
    private func indexedKeys(limit: Int = .max) throws -> [ObjectKey] {
        guard let indexed else { return [] }
        let property = table.schema.properties[indexed.property]
        statistics.index = (property.isPrimaryKey ? "primary key '" : "index on '") + property.name + "'"
        let candidates = try table.find(indexed.value, inIndexOf: indexed.property).sorted()
        statistics.objectsExamined += candidates.count
        if case .constant(true) = indexed.rest { return Array(candidates.prefix(limit)) }
        var keys: [ObjectKey] = []
        for key in candidates {
            guard let (cluster, row) = try table.locate(key) else { continue }
            if try evaluator.general.matches(indexed.rest, .cluster(cluster, row, table)) {
                keys.append(key)
                if keys.count >= limit { break }
            }
        }
        return keys
    }

    /// The properties the predicate reads when it is made of column kernels only (AND, OR and
    /// NOT of comparisons of the object's own properties with constants); nil when a part of
    /// it needs whole objects (links, lists, aggregates, subqueries, string options).
    static func kernelColumns(_ node: QueryNode) -> Set<Int>? {
        switch node {
        case .constant: return []
        case .kernel(let kernel): return [kernel.column]
        case .general: return nil
        case .not(let inner): return kernelColumns(inner)
        case .and(let parts), .or(let parts):
            var all: Set<Int> = []
            for part in parts {
                guard let columns = kernelColumns(part) else { return nil }
                all.formUnion(columns)
            }
            return all
        }
    }

    /// A column scan reading the predicate's columns plus `columns`, and the keys when `keys`;
    /// nil when the predicate needs whole objects or the transaction changed the table.
    private func columnScan(columns: [Int], keys: Bool) -> ColumnScan? {
        guard allowsFastPaths, let predicateColumns = predicateColumns else { return nil }
        let wanted = predicateColumns.union(columns)
        if let scan = scans.first(where: { $0.readsKeys == keys && $0.properties == wanted.sorted() }) {
            return scan.canRun ? scan : nil
        }
        let scan = ColumnScan(table: table, properties: wanted, keys: keys)
        scans.append(scan)
        return scan.canRun ? scan : nil
    }

    /// Calls `body` with each cluster and its match mask; stops when it returns false.
    ///
    /// `columns` are the properties `body` reads (nil: any) and `keys` whether it reads object
    /// keys. When the predicate is made of column kernels and `columns` is given, only those
    /// columns (and the predicate's) are read, into a view that is reused for every cluster:
    /// `body` must not keep it, and must not read other columns.
    package func forEachMatchingCluster(columns: [Int]? = nil, keys: Bool = true,
                                        _ body: (ClusterView, UnsafeMutablePointer<UInt64>) throws -> Bool) throws {
        statistics = QueryStatistics(index: nil, objectsExamined: 0, clustersScanned: 0)
        let before = evaluator.objectsTested
        defer { statistics.objectsExamined += evaluator.objectsTested - before }
        if let columns, let scan = columnScan(columns: columns, keys: keys) {
            try scan.run { cluster in
                statistics.clustersScanned += 1
                let mask = try evaluator.evaluate(cluster)
                return try body(cluster, mask)
            }
            return
        }
        try table.forEachCluster { cluster in
            statistics.clustersScanned += 1
            let mask = try evaluator.evaluate(cluster)
            return try body(cluster, mask)
        }
    }

    /// The number of matching objects.
    package func count() throws -> Int {
        if case .constant(true) = node { return try table.count }
        if let indexed {
            statistics = QueryStatistics(index: nil, objectsExamined: 0, clustersScanned: 0)
            let property = table.schema.properties[indexed.property]
            if allowsFastPaths, case .constant(true) = indexed.rest, !property.isPrimaryKey,
               let count = try table.countIndexEntries(indexed.value, property: indexed.property) {
                // The index alone answers: no object is examined.
                statistics.index = "index on '" + property.name + "'"
                return count
            }
            return try indexedKeys().count
        }
        if let listed = try listedKeys() { return listed.count }
        var total = 0
        try forEachMatchingCluster(columns: [], keys: false) { cluster, mask in
            for w in 0..<maskWords(cluster.count) { total &+= mask[w].nonzeroBitCount }
            return true
        }
        return total
    }

    /// The matching keys in key order.
    package func keys(limit: Int = .max) throws -> [ObjectKey] {
        if indexed != nil {
            statistics = QueryStatistics(index: nil, objectsExamined: 0, clustersScanned: 0)
            return try indexedKeys(limit: limit)
        }
        if let listed = try listedKeys() { return Array(listed.prefix(limit)) }
        var keys: [ObjectKey] = []
        if case .constant(true) = node, limit == .max { keys.reserveCapacity(try table.count) }
        try forEachMatchingCluster(columns: []) { cluster, mask in
            for w in 0..<maskWords(cluster.count) {
                var bits = mask[w]
                while bits != 0 {
                    let bit = bits.trailingZeroBitCount
                    bits &= bits &- 1
                    keys.append(cluster.key(at: w &* 64 &+ bit))
                    if keys.count >= limit { return false }
                }
            }
            return true
        }
        return keys
    }

    /// Whether the object with `key` matches.
    package func matches(_ key: ObjectKey) throws -> Bool {
        guard let (cluster, row) = try table.locate(key) else { return false }
        return try evaluator.matches(cluster, row: row)
    }
}
