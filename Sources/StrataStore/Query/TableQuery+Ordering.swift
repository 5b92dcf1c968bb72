import Foundation

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
                    // An object with a nil link on the way to any of the values is left out.
                    let tuple = valueColumns.compactMap { $0[position] }
                    guard tuple.count == valueColumns.count else { continue }
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

    /// One value per key for a distinct key path; nil where a link on the way to the value is
    /// nil. Distinct results leave such objects out (as Realm does): a nil link is not a value
    /// of the path, unlike a nil value at its end, which is one more distinct value.
    private func distinctValues(_ names: [String], keys: [ObjectKey]) throws -> [StoreValue?] {
        let path = try valuePath(names, purpose: "find distinct values")
        // Strings are distinct by their bytes, as they compare.
        var values: [StoreValue?] = try pathValues(path, keys: keys).map { value in
            if case .string(let s) = value { return .data(Data(s.utf8)) }
            return value
        }
        if names.count > 1 {
            // The path's last link: nil when it, or any link before it, is nil.
            var compiler = QueryCompiler(root: table)
            if case .path(let linkPath) = try compiler.resolvePath(Array(names.dropLast())) {
                for (position, link) in try pathValues(linkPath, keys: keys).enumerated() where link.isNull {
                    values[position] = nil
                }
            }
        }
        return values
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
