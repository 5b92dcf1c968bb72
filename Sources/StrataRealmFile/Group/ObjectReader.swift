/// Reads objects out of a table's cluster tree: one column leaf at a time, then one object
/// per row.
final class ObjectReader {
    let graph: NodeGraph
    let group: Group

    /// Embedded objects nested deeper than this are treated as damage (a cycle of embedded
    /// links cannot be written by Realm).
    static let maximumEmbeddingDepth = 100

    init(graph: NodeGraph, group: Group) {
        self.graph = graph
        self.group = group
    }

    /// Calls `body` with every object of `table`, in key order.
    func forEachObject(of table: TableInfo, depth: Int = 0, _ body: (RealmObject) throws -> Void) throws {
        guard let root = table.clusterTreeRef else { return }
        for leaf in try graph.clusterLeaves(root: root) {
            for object in try objects(in: leaf, of: table, depth: depth) {
                try body(object)
            }
        }
    }

    /// The object of `table` with `key`, or nil if there is none.
    func object(of table: TableInfo, key: Int64, depth: Int) throws -> RealmObject? {
        guard let root = table.clusterTreeRef else { return nil }
        guard let (leaf, row) = try graph.findObject(key: key, root: root) else { return nil }
        return try objects(in: leaf, of: table, depth: depth, onlyRow: row).first
    }

    /// The value a link to `objectKey` in the table with `tableKey` reads as: the embedded
    /// object itself for an embedded class, else a link. Negative keys are links to deleted
    /// objects Realm still tracks (tombstones), which read as null.
    func linkValue(tableKey: Int64, objectKey: Int64, depth: Int) throws -> RealmValue {
        guard objectKey >= 0 else { return .null }
        let target = try group.table(key: tableKey)
        guard let className = target.className else {
            throw RealmFileError.corrupted(reason: "a link points into Realm's internal table \(target.name)")
        }
        guard target.isEmbedded else {
            return .link(RealmLink(className: className, objectKey: objectKey))
        }
        guard depth < ObjectReader.maximumEmbeddingDepth else {
            throw RealmFileError.corrupted(reason: "embedded objects nest deeper than \(ObjectReader.maximumEmbeddingDepth) levels")
        }
        guard let object = try object(of: target, key: objectKey, depth: depth + 1) else {
            throw RealmFileError.corrupted(reason: "a link points at embedded object \(objectKey) of \(className), which does not exist")
        }
        return .embedded(object)
    }

    /// Calls `body` with each cluster of `table` in key order: its object keys and, for each
    /// of `columns` (in that order), the value of every object. Only those columns are read,
    /// so a caller that needs a few properties does not pay for the others (nor for embedded
    /// objects behind a link column it does not ask for).
    func forEachCluster(of table: TableInfo, columns: [TableInfo.Column],
                        _ body: (_ keys: [Int64], _ values: [[RealmValue]]) throws -> Void) throws {
        guard let root = table.clusterTreeRef else { return }
        for leaf in try graph.clusterLeaves(root: root) {
            let keys = try graph.objectKeys(of: leaf)
            let rows = Array(keys.indices)
            var values: [[RealmValue]] = []
            values.reserveCapacity(columns.count)
            for column in columns {
                values.append(try columnValues(column, in: leaf, of: table, rowCount: keys.count, rows: rows, depth: 0))
            }
            try body(keys, values)
        }
    }

    private func objects(in leaf: NodeGraph.ClusterLeaf, of table: TableInfo, depth: Int, onlyRow: Int? = nil) throws -> [RealmObject] {
        let keys = try graph.objectKeys(of: leaf)
        let rows = onlyRow.map { [$0] } ?? Array(keys.indices)
        guard let className = table.className else {
            throw RealmFileError.unsupportedFeature("reading objects of Realm's internal table \(table.name)")
        }
        var valuesByRow = Array(repeating: [String: RealmValue](), count: rows.count)
        var backlinksByRow = Array(repeating: [RealmBacklinks](), count: rows.count)
        for column in table.columns {
            if column.type == .backlink {
                let columnLeaf = try self.columnLeaf(column, in: leaf, of: table)
                let source = try backlinkSource(of: column, in: table)
                let perRow = try backlinks(of: columnLeaf, rowCount: keys.count)
                for (position, row) in rows.enumerated() {
                    backlinksByRow[position].append(RealmBacklinks(originClass: source.originClass, originProperty: source.originProperty,
                                                                   objectKeys: perRow[row]))
                }
                continue
            }
            let values = try columnValues(column, in: leaf, of: table, rowCount: keys.count, rows: rows, depth: depth)
            for position in rows.indices { valuesByRow[position][column.name] = values[position] }
        }
        return rows.enumerated().map { position, row in
            RealmObject(key: keys[row], className: className, values: valuesByRow[position], backlinks: backlinksByRow[position])
        }
    }

    /// The leaf of `column` in the cluster `leaf`.
    private func columnLeaf(_ column: TableInfo.Column, in leaf: NodeGraph.ClusterLeaf, of table: TableInfo) throws -> Node {
        guard column.key.clusterSlot < leaf.node.count, let columnRef = try leaf.node.ref(at: column.key.clusterSlot) else {
            throw RealmFileError.corrupted(reason: "the cluster at \(leaf.node.ref) lacks column \(column.name) of \(table.name)")
        }
        return try graph.node(columnRef)
    }

    /// The values of the property `column` (not a backlink column) for the objects at `rows` of
    /// the cluster `leaf`, which holds `rowCount` objects: one value per element of `rows`.
    private func columnValues(_ column: TableInfo.Column, in leaf: NodeGraph.ClusterLeaf, of table: TableInfo, rowCount: Int,
                              rows: [Int], depth: Int) throws -> [RealmValue] {
        let columnLeaf = try self.columnLeaf(column, in: leaf, of: table)
        guard let kind = ElementKind(column: column) else {
            throw RealmFileError.unsupportedFeature("typed link properties (\(table.name).\(column.name))")
        }
        switch column.collection {
        case .none:
            if case let .link(targetTableKey) = kind {
                // Only the rows asked for: resolving a link can read an embedded object,
                // and reading one object must not read the links of its whole cluster.
                return try rows.map { row in
                    let stored = try columnLeaf.integer(at: row)
                    return stored == 0 ? .null : try linkValue(tableKey: targetTableKey, objectKey: stored - 1, depth: depth)
                }
            }
            let values = try self.values(of: columnLeaf, kind: kind, nullable: column.isNullable, depth: depth)
            guard values.count == rowCount else {
                throw RealmFileError.corrupted(reason: "column \(column.name) of \(table.name) has \(values.count) values for \(rowCount) objects")
            }
            return rows.count == rowCount ? values : rows.map { values[$0] }
        case .list, .set, .dictionary:
            guard columnLeaf.count == rowCount else {
                throw RealmFileError.corrupted(reason: "column \(column.name) of \(table.name) has \(columnLeaf.count) collections for \(rowCount) objects")
            }
            return try rows.map { row in
                let root = try columnLeaf.ref(at: row)
                switch column.collection {
                case .list: return .list(try collectionElements(root: root, kind: kind, nullable: column.isNullable, depth: depth))
                case .set: return .set(try collectionElements(root: root, kind: kind, nullable: column.isNullable, depth: depth))
                default: return .dictionary(try dictionaryEntries(root: root, depth: depth))
                }
            }
        }
    }

    /// The class and property a backlink column answers to.
    func backlinkSource(of column: TableInfo.Column, in table: TableInfo) throws -> RealmBacklinkSource {
        guard let originKey = column.oppositeTableKey, let originColumn = column.oppositeColumnKey else {
            throw RealmFileError.corrupted(reason: "a backlink column of \(table.name) names no origin")
        }
        let origin = try group.table(key: originKey)
        guard let property = origin.columns.first(where: { $0.key.rawValue == originColumn }) else {
            throw RealmFileError.corrupted(reason: "a backlink column of \(table.name) names a column \(originColumn) that \(origin.name) lacks")
        }
        return RealmBacklinkSource(originClass: origin.className ?? origin.name, originProperty: property.name)
    }

    /// A backlink leaf: per object 0 (no links), a tagged key (one link), or a ref to a B+tree
    /// of keys (several links).
    private func backlinks(of leaf: Node, rowCount: Int) throws -> [[Int64]] {
        guard leaf.count == rowCount else {
            throw RealmFileError.corrupted(reason: "the backlink leaf at \(leaf.ref) has \(leaf.count) entries for \(rowCount) objects")
        }
        return try (0..<rowCount).map { row in
            let value = try leaf.integer(at: row)
            if value == 0 { return [] }
            if value & 1 == 1 { return [value >> 1] }
            guard let ref = try leaf.ref(at: row) else { return [] }
            var keys: [Int64] = []
            for keyLeaf in try graph.bPlusTreeLeaves(root: ref) {
                keys.append(contentsOf: try keyLeaf.integers())
            }
            return keys
        }
    }
}

extension NodeGraph {
    /// The cluster and row holding the object with `key`, descending from `root`.
    func findObject(key: Int64, root: Int) throws -> (ClusterLeaf, Int)? {
        var ref = root
        var offset: Int64 = 0
        for _ in 0..<NodeGraph.maximumTreeDepth {
            let current = try node(ref)
            if !current.isInnerBPlusTreeNode {
                let leaf = ClusterLeaf(node: current, keyOffset: offset)
                let keys = try objectKeys(of: leaf)
                var low = 0
                var high = keys.count
                while low < high {
                    let middle = (low + high) / 2
                    if keys[middle] < key { low = middle + 1 } else { high = middle }
                }
                return low < keys.count && keys[low] == key ? (leaf, low) : nil
            }
            guard current.count >= 4 else {
                throw RealmFileError.corrupted(reason: "the cluster tree inner node at \(ref) has \(current.count) elements")
            }
            let depth = try current.tagged(at: 1)
            guard depth >= 1, depth < 8 else {
                throw RealmFileError.corrupted(reason: "the cluster tree inner node at \(ref) claims depth \(depth)")
            }
            let childCount = current.count - 3
            let relative = key &- offset
            var childIndex: Int
            var childOffset: Int64
            if let offsets = try child(of: current, at: 0) {
                guard offsets.count >= childCount else {
                    throw RealmFileError.corrupted(reason: "the cluster tree inner node at \(ref) has fewer key offsets than children")
                }
                childIndex = -1
                for index in 0..<childCount where try offsets.unsignedInteger(at: index) <= relative { childIndex = index }
                guard childIndex >= 0 else { return nil }
                childOffset = try offsets.unsignedInteger(at: childIndex)
            } else {
                guard relative >= 0 else { return nil }
                childIndex = min(Int(relative >> (8 * depth)), childCount - 1)
                childOffset = Int64(childIndex) << (8 * depth)
            }
            guard let childRef = try current.ref(at: childIndex + 3) else {
                throw RealmFileError.corrupted(reason: "the cluster tree inner node at \(ref) has a null child")
            }
            ref = childRef
            offset = offset &+ childOffset
        }
        throw RealmFileError.corrupted(reason: "a cluster tree is deeper than \(NodeGraph.maximumTreeDepth) levels")
    }
}
