import Foundation

// Sorting and distinct for query results. Both run after the predicate, in the order they were
// chained (`sorted(a).distinct(b).sorted(c)`); sorts are stable, so a later sort keeps the
// earlier order among its ties. The last sort of a chain is lazy: asking for the first k
// objects selects them in one pass (O(n log k)) instead of sorting all n.
//
// Order: nil first in ascending order (last in descending), then values; numbers by value,
// strings and data by their bytes (UTF-8: Unicode scalar order), dates by time, booleans false
// before true, ObjectIds and UUIDs by their bytes. NaN sorts after nil and before numbers.

/// One sort key: a key path from the object (through to-one links) and a direction.
package struct SortKey: Sendable, Hashable {
    package var path: [String]
    package var ascending: Bool
    package init(path: [String], ascending: Bool) {
        self.path = path
        self.ascending = ascending
    }
}

/// A step after the predicate.
package enum QueryOrdering: Sendable, Hashable {
    case sort([SortKey])
    case distinct([[String]])
}

/// The values of one sort key for the objects being ordered, by position.
enum SortColumn {
    case int([Int64], nulls: [Bool]?)
    case double([Double], nulls: [Bool]?)
    case general([StoreValue])

    /// -1, 0 or 1 comparing the values at positions `a` and `b` (ascending).
    @inline(__always)
    func compare(_ a: Int, _ b: Int) -> Int {
        switch self {
        case .int(let values, let nulls):
            if let nulls, nulls[a] || nulls[b] { return nulls[a] == nulls[b] ? 0 : (nulls[a] ? -1 : 1) }
            let x = values[a], y = values[b]
            return x < y ? -1 : (x == y ? 0 : 1)
        case .double(let values, let nulls):
            if let nulls, nulls[a] || nulls[b] { return nulls[a] == nulls[b] ? 0 : (nulls[a] ? -1 : 1) }
            return SortColumn.compare(values[a], values[b])
        case .general(let values):
            return SortColumn.compare(values[a], values[b])
        }
    }

    @inline(__always)
    static func compare(_ x: Double, _ y: Double) -> Int {
        if x < y { return -1 }
        if x > y { return 1 }
        if x == y { return 0 }
        return x.isNaN ? (y.isNaN ? 0 : -1) : 1
    }

    static func compare(_ x: StoreValue, _ y: StoreValue) -> Int {
        switch (x, y) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        default:
            if let order = QueryValueComparison.order(x, y) { return order }
            // Values of different kinds (a mixed property) sort by kind.
            if let order = QueryValueComparison.rankOrder(x, y) { return order }
            if case .typedLink(let a, let b) = x, case .typedLink(let c, let d) = y {
                return a != c ? (a < c ? -1 : 1) : (b == d ? 0 : (b < d ? -1 : 1))
            }
            // Unordered numbers (NaN) sort first among values.
            let xNaN = QueryValueComparison.isNumeric(x) && QueryValueComparison.order(x, x) == nil
            let yNaN = QueryValueComparison.isNumeric(y) && QueryValueComparison.order(y, y) == nil
            if xNaN != yNaN { return xNaN ? -1 : 1 }
            return 0
        }
    }
}

/// A strict order on positions: the sort keys, then position (so sorting is stable).
struct PositionOrder {
    let columns: [SortColumn]
    let ascending: [Bool]

    @inline(__always)
    func less(_ a: Int32, _ b: Int32) -> Bool {
        for i in 0..<columns.count {
            let c = columns[i].compare(Int(a), Int(b))
            if c != 0 { return ascending[i] ? c < 0 : c > 0 }
        }
        return a < b
    }
}

/// One object's sort key when a single number, date or bool property decides: a rank (nil, NaN,
/// value), the value mapped to an unsigned integer that orders like it, and the position
/// (ties keep their order). Descending sorts invert rank and value.
struct SortEntry {
    var rank: UInt32
    var position: Int32
    var value: UInt64

    @inline(__always)
    static func < (a: SortEntry, b: SortEntry) -> Bool {
        if a.rank != b.rank { return a.rank < b.rank }
        if a.value != b.value { return a.value < b.value }
        return a.position < b.position
    }

    /// An integer's order-preserving unsigned form.
    @inline(__always)
    static func ordered(_ v: Int64) -> UInt64 { UInt64(bitPattern: v) ^ 0x8000_0000_0000_0000 }

    /// A double's order-preserving unsigned form (-0 and +0 are the same; NaN is ranked apart).
    @inline(__always)
    static func ordered(_ v: Double) -> UInt64 {
        let bits = (v == 0 ? 0.0 : v).bitPattern
        return bits & 0x8000_0000_0000_0000 != 0 ? ~bits : bits | 0x8000_0000_0000_0000
    }

    @inline(__always)
    init(position: Int, null: Bool, nan: Bool = false, value: UInt64, ascending: Bool) {
        let rank: UInt32 = null ? 0 : (nan ? 1 : 2)
        self.rank = ascending ? rank : 2 - rank
        self.position = Int32(truncatingIfNeeded: position)
        self.value = null || nan ? 0 : (ascending ? value : ~value)
    }
}

/// Rearranges `entries[range]` so that its first `count` elements are its smallest, in any
/// order (quickselect, expected linear time).
func selectSmallest(_ entries: inout [SortEntry], in range: Range<Int>, count: Int) {
    guard count > 0, count < range.count else { return }
    let target = range.lowerBound + count - 1
    var low = range.lowerBound, high = range.upperBound - 1
    entries.withUnsafeMutableBufferPointer { a in
        while low < high {
            let mid = low + (high - low) / 2
            // Median of three as the pivot.
            if a[mid] < a[low] { a.swapAt(mid, low) }
            if a[high] < a[low] { a.swapAt(high, low) }
            if a[high] < a[mid] { a.swapAt(high, mid) }
            let pivot = a[mid]
            var i = low, j = high
            while i <= j {
                while a[i] < pivot { i += 1 }
                while pivot < a[j] { j -= 1 }
                if i <= j {
                    a.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if target <= j { high = j } else if target >= i { low = i } else { return }
        }
    }
}

/// Objects in query order: the keys, a permutation of them and how much of it is sorted.
package final class OrderedKeys {
    private var keys: [ObjectKey]
    private var order: [Int32]
    private var sortedCount: Int
    private var ordering: PositionOrder?
    /// For a single number/date/bool sort key: the entries, sorted up to `sortedCount`.
    private var entries: [SortEntry]?
    /// For a top selection: the number of matches (`keys` holds only the first ones, in order)
    /// and how to order all of them when a later position is asked for.
    private var selectedCount: Int?
    private var complete: (() throws -> OrderedKeys)?

    /// Keys already in their final order.
    package init(keys: [ObjectKey]) {
        self.keys = keys
        order = []
        sortedCount = keys.count
        ordering = nil
    }

    /// Keys to be sorted by precomputed entries (one per key, same positions), lazily.
    init(keys: [ObjectKey], entries: [SortEntry]) {
        self.keys = keys
        order = []
        sortedCount = 0
        ordering = nil
        self.entries = entries
    }

    private func sortEntries(through position: Int) {
        guard var entries else { return }
        self.entries = nil  // keep it uniquely referenced while sorting
        let n = entries.count
        let wanted = min(n, max(128, (position + 1) * 2) - sortedCount)
        if sortedCount + wanted * 4 >= n {
            entries[sortedCount...].sort(by: <)
            sortedCount = n
        } else {
            selectSmallest(&entries, in: sortedCount..<n, count: wanted)
            entries[sortedCount..<(sortedCount + wanted)].sort(by: <)
            sortedCount += wanted
        }
        self.entries = entries
    }

    /// Keys still to be sorted by `ordering`, lazily.
    init(keys: [ObjectKey], ordering: PositionOrder) {
        self.keys = keys
        order = (0..<Int32(keys.count)).map { $0 }
        sortedCount = 0
        self.ordering = ordering
    }

    /// The first keys of a sort (chosen by a `TopSelection`) out of `count` matches; `complete`
    /// orders all of them, the first time a position past the chosen ones is asked for.
    init(first keys: [ObjectKey], count: Int, complete: @escaping () throws -> OrderedKeys) {
        self.keys = keys
        order = []
        sortedCount = keys.count
        ordering = nil
        selectedCount = keys.count < count ? count : nil
        self.complete = keys.count < count ? complete : nil
    }

    package var count: Int { selectedCount ?? keys.count }

    /// Replaces a top selection by the full order.
    private func completeSelection() throws {
        guard let complete else { return }
        let full = try complete()
        keys = full.keys
        order = full.order
        sortedCount = full.sortedCount
        ordering = full.ordering
        entries = full.entries
        selectedCount = nil
        self.complete = nil
    }

    /// The key at `position` of the ordered results.
    package func key(at position: Int) throws -> ObjectKey {
        if complete != nil {
            if position < keys.count { return keys[position] }
            try completeSelection()
        }
        if entries != nil {
            if position >= sortedCount { sortEntries(through: position) }
            return keys[Int(entries.unsafelyUnwrapped[position].position)]
        }
        guard let ordering else { return keys[position] }
        if position >= sortedCount { sort(through: position, ordering) }
        return keys[Int(order[position])]
    }

    /// All keys in order.
    package func all() throws -> [ObjectKey] {
        try completeSelection()
        if entries != nil {
            if sortedCount < keys.count { sortEntries(through: keys.count - 1) }
            return entries.unsafelyUnwrapped.map { keys[Int($0.position)] }
        }
        guard let ordering else { return keys }
        if sortedCount < keys.count { sort(through: keys.count - 1, ordering) }
        return order.map { keys[Int($0)] }
    }

    /// The position of `key`, if present.
    package func position(of key: ObjectKey) throws -> Int? {
        try completeSelection()
        guard ordering != nil || entries != nil else { return keys.firstIndex(of: key) }
        return try all().firstIndex(of: key)
    }

    private func sort(through position: Int, _ ordering: PositionOrder) {
        let n = order.count
        let wanted = max(128, (position + 1) * 2)
        if wanted * 8 >= n {
            order.sort { ordering.less($0, $1) }
            sortedCount = n
            return
        }
        // Select the `wanted` smallest with a max-heap, then sort them.
        var heap: [Int32] = []
        heap.reserveCapacity(wanted)
        for candidate in order {
            if heap.count < wanted {
                heap.append(candidate)
                var child = heap.count - 1
                while child > 0 {
                    let parent = (child - 1) / 2
                    guard ordering.less(heap[parent], heap[child]) else { break }
                    heap.swapAt(parent, child)
                    child = parent
                }
            } else if ordering.less(candidate, heap[0]) {
                heap[0] = candidate
                var parent = 0
                while true {
                    let left = 2 * parent + 1
                    if left >= wanted { break }
                    var largest = left
                    if left + 1 < wanted, ordering.less(heap[left], heap[left + 1]) { largest = left + 1 }
                    guard ordering.less(heap[parent], heap[largest]) else { break }
                    heap.swapAt(parent, largest)
                    parent = largest
                }
            }
        }
        heap.sort { ordering.less($0, $1) }
        var chosen = [Bool](repeating: false, count: n)
        for p in heap { chosen[Int(p)] = true }
        var rest: [Int32] = []
        rest.reserveCapacity(n - heap.count)
        for p in order where !chosen[Int(p)] { rest.append(p) }
        order = heap + rest
        sortedCount = heap.count
    }
}

extension TableQuery {
    /// The matching keys after `orderings`, in order.
    package func ordered(_ orderings: [QueryOrdering], base: [ObjectKey]? = nil) throws -> OrderedKeys {
        if let base {
            // A list's objects, in list order: filter them here, then order as usual.
            var matching: [ObjectKey] = []
            if case .constant(true) = node {
                matching = base
            } else {
                for key in base where try matches(key) { matching.append(key) }
            }
            return try order(matching, by: orderings, columns: nil)
        }
        guard !orderings.isEmpty else { return OrderedKeys(keys: try keys()) }
        if allowsFastPaths, orderings.count == 1, case .sort(let sortKeys) = orderings[0], sortKeys.count == 1,
           let top = try topSorted(sortKeys[0], limit: Self.topSelectionLimit) {
            return OrderedKeys(first: top.keys, count: top.count) { [self] in
                guard let full = try scanWithSortEntries(sortKeys[0]) else { preconditionFailure("a top selection's sort has no entries") }
                return OrderedKeys(keys: full.keys, entries: full.entries)
            }
        }
        if orderings.count == 1, case .sort(let sortKeys) = orderings[0], sortKeys.count == 1,
           let fast = try scanWithSortEntries(sortKeys[0]) {
            return OrderedKeys(keys: fast.keys, entries: fast.entries)
        }
        if case .sort(let sortKeys) = orderings[0], let fast = try scanWithSortColumns(sortKeys) {
            return try order(fast.keys, by: orderings, columns: fast.columns)
        }
        return try order(try self.keys(), by: orderings, columns: nil)
    }

    /// Applies `orderings` to `keys`; `columns` are the first sort's columns when already read.
    private func order(_ keys: [ObjectKey], by orderings: [QueryOrdering], columns: [SortColumn]?) throws -> OrderedKeys {
        var keys = keys
        var columns = columns
        for (i, ordering) in orderings.enumerated() {
            let isLast = i == orderings.count - 1
            switch ordering {
            case .sort(let sortKeys):
                let sortColumns = try columns ?? sortKeys.map { key throws in try sortColumn(key.path, keys: keys) }
                columns = nil
                let order = PositionOrder(columns: sortColumns, ascending: sortKeys.map(\.ascending))
                if isLast { return OrderedKeys(keys: keys, ordering: order) }
                var positions = (0..<Int32(keys.count)).map { $0 }
                positions.sort { order.less($0, $1) }
                keys = positions.map { keys[Int($0)] }
            case .distinct(let paths):
                var seen: Set<[StoreValue]> = []
                let valueColumns = try paths.map { path throws in try distinctValues(path, keys: keys) }
                var kept: [ObjectKey] = []
                for position in keys.indices {
                    let tuple = valueColumns.map { $0[position] }
                    if seen.insert(tuple).inserted { kept.append(keys[position]) }
                }
                keys = kept
                columns = nil
            }
        }
        return OrderedKeys(keys: keys)
    }

    /// Resolves a sort or distinct key path: to-one links only, ending at a sortable value.
    func valuePath(_ names: [String], purpose: String) throws(QueryError) -> QueryPath {
        var compiler = QueryCompiler(root: table)
        guard case .path(let path) = try compiler.resolvePath(names) else {
            throw QueryError(.unknownProperty, "cannot \(purpose) by '\(names.joined(separator: "."))'")
        }
        if path.isCollection {
            throw QueryError(.typeMismatch, "cannot \(purpose) by '\(path.text)': it goes through a list")
        }
        if path.steps.contains(where: { $0.mapKey != nil }) {
            throw QueryError(.typeMismatch, "cannot \(purpose) by '\(path.text)': it reads a map entry")
        }
        if path.kind == .link {
            throw QueryError(.typeMismatch, "cannot \(purpose) by '\(path.text)': it is a link; name one of its properties, e.g. '\(path.text).name'")
        }
        return path
    }

    /// Checks that `names` is a path results can be sorted by or made distinct by.
    package func checkValuePath(_ names: [String], purpose: String) throws(QueryError) {
        _ = try valuePath(names, purpose: purpose)
    }

    /// One value per key for `path` (general form).
    private func pathValues(_ path: QueryPath, keys: [ObjectKey]) throws -> [StoreValue] {
        let evaluator = GeneralEvaluator()
        var values: [StoreValue] = []
        values.reserveCapacity(keys.count)
        for key in keys {
            guard let (cluster, row) = try table.locate(key) else { values.append(.null); continue }
            values.append(try evaluator.values(of: .path(path), .cluster(cluster, row, table)).first ?? .null)
        }
        return values
    }

    private func sortColumn(_ names: [String], keys: [ObjectKey]) throws -> SortColumn {
        let path = try valuePath(names, purpose: "sort")
        return .general(try pathValues(path, keys: keys))
    }

    private func distinctValues(_ names: [String], keys: [ObjectKey]) throws -> [StoreValue] {
        let path = try valuePath(names, purpose: "find distinct values")
        // Strings are distinct by their bytes, as they compare.
        return try pathValues(path, keys: keys).map { value in
            if case .string(let s) = value { return .data(Data(s.utf8)) }
            return value
        }
    }

    /// When one number, date or bool property of the object decides the order: the matching
    /// keys and their sort entries, read in one pass over the clusters.
    private func scanWithSortEntries(_ sortKey: SortKey) throws -> (keys: [ObjectKey], entries: [SortEntry])? {
        guard let step = try singleColumnSortStep(sortKey) else { return nil }
        var keys: [ObjectKey] = []
        var entries: [SortEntry] = []
        try forEachSortEntry(step, ascending: sortKey.ascending) { entry, key in
            entries.append(entry)
            keys.append(key)
        }
        return (keys, entries)
    }

    /// The step of a sort by one number, date or bool property of the object itself (which a
    /// column scan can order); nil for any other sort.
    func singleColumnSortStep(_ sortKey: SortKey) throws -> QueryStep? {
        let path = try valuePath(sortKey.path, purpose: "sort")
        guard path.steps.count == 1, let step = path.steps.first, !isIndexed,
              [.int, .bool, .double, .float, .date].contains(step.kind) else { return nil }
        return step
    }

    /// Calls `body` with the sort entry and key of each matching object, in key order (an
    /// entry's position counts the matches before it), reading only the sort column.
    @inline(__always)
    func forEachSortEntry(_ step: QueryStep, ascending: Bool, _ body: (SortEntry, ObjectKey) -> Void) throws {
        let optional = step.isOptional
        let kind = step.kind
        var position = 0
        try forEachMatchingCluster(columns: [step.property]) { cluster, mask in
            let chunk = cluster.columns[step.property]
            for w in 0..<maskWords(cluster.count) {
                var bits = mask[w]
                while bits != 0 {
                    let bit = bits.trailingZeroBitCount
                    bits &= bits &- 1
                    let row = w &* 64 &+ bit
                    let null = optional && chunk.isNull(row)
                    let entry: SortEntry
                    switch kind {
                    case .int:
                        entry = SortEntry(position: position, null: null, value: SortEntry.ordered(chunk.int(row)), ascending: ascending)
                    case .bool:
                        entry = SortEntry(position: position, null: null, value: chunk.bool(row) ? 1 : 0, ascending: ascending)
                    default:
                        let v = kind == .float ? Double(chunk.float(row)) : chunk.double(row)
                        entry = SortEntry(position: position, null: null, nan: v.isNaN, value: SortEntry.ordered(v), ascending: ascending)
                    }
                    body(entry, cluster.key(at: row))
                    position &+= 1
                }
            }
            return true
        }
    }

    /// When every sort key is a number, date or bool property of the object itself: the
    /// matching keys and the sort columns, read in one pass over the clusters.
    private func scanWithSortColumns(_ sortKeys: [SortKey]) throws -> (keys: [ObjectKey], columns: [SortColumn])? {
        var properties: [(index: Int, kind: PropertyKind, optional: Bool)] = []
        for key in sortKeys {
            let path = try valuePath(key.path, purpose: "sort")
            guard path.steps.count == 1, let step = path.steps.first,
                  [.int, .bool, .double, .float, .date].contains(step.kind) else { return nil }
            properties.append((step.property, step.kind, step.isOptional))
        }
        if isIndexed { return nil }
        var keys: [ObjectKey] = []
        var ints = [[Int64]](repeating: [], count: properties.count)
        var doubles = [[Double]](repeating: [], count: properties.count)
        var nulls = [[Bool]](repeating: [], count: properties.count)
        try forEachMatchingCluster(columns: properties.map(\.index)) { cluster, mask in
            for w in 0..<maskWords(cluster.count) {
                var bits = mask[w]
                while bits != 0 {
                    let bit = bits.trailingZeroBitCount
                    bits &= bits &- 1
                    let row = w &* 64 &+ bit
                    keys.append(cluster.key(at: row))
                    for (i, property) in properties.enumerated() {
                        let chunk = cluster.columns[property.index]
                        if property.optional { nulls[i].append(chunk.isNull(row)) }
                        switch property.kind {
                        case .int: ints[i].append(chunk.int(row))
                        case .bool: ints[i].append(chunk.bool(row) ? 1 : 0)
                        case .float: doubles[i].append(Double(chunk.float(row)))
                        default: doubles[i].append(chunk.double(row))
                        }
                    }
                }
            }
            return true
        }
        let columns: [SortColumn] = properties.enumerated().map { i, property in
            let nullFlags = property.optional ? nulls[i] : nil
            switch property.kind {
            case .int, .bool: return .int(ints[i], nulls: nullFlags)
            default: return .double(doubles[i], nulls: nullFlags)
            }
        }
        return (keys, columns)
    }
}
