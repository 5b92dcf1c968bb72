// Keeping a query's ordered results up to date from a commit's change log instead of running
// the query again. The previous ordered keys are edited: objects the commit deleted, or whose
// properties the query reads changed, are taken out; the changed objects that match now are
// put back where the sort order says (binary search). Only changed objects are tested against
// the predicate. Everything else keeps its place, because nothing it is sorted by changed.
//
// The diff comes out of the edit itself: the objects taken out and not put back in the same
// place are deletions, those put back elsewhere (or arriving) insertions. An unchanged object
// is never reported as moved.

/// Brings the ordered keys of one query (a predicate over the object's own properties,
/// optionally one sort by own properties) up to date from a commit's changes.
package struct IncrementalOrdering {
    private let query: TableQuery
    /// Property indices and directions of the sort; empty for key order.
    private let sort: [(property: Int, ascending: Bool)]
    /// Mask bits of every property the predicate or the sort reads.
    package let readMask: UInt64

    /// At most this many objects may change position or membership; more, and running the
    /// query again is about as cheap as editing (each removal searches the old keys).
    package static let maximumChanges = 64

    /// Nil when the query cannot be kept up to date this way: it reads through links, or its
    /// orderings are anything but a single sort (distinct, chained sorts).
    package init?(query: TableQuery, orderings: [QueryOrdering]) {
        guard let names = query.predicate.map({ $0.ownPropertyNames }) ?? [] else { return nil }
        let schema = query.table.schema
        var mask: UInt64 = 0
        for name in names {
            guard let index = schema.propertyIndex(named: name) else { return nil }
            mask |= TableChanges.bit(index)
        }
        var sort: [(property: Int, ascending: Bool)] = []
        switch orderings.count {
        case 0: break
        case 1:
            guard case .sort(let keys) = orderings[0] else { return nil }
            for key in keys {
                guard key.path.count == 1, let index = schema.propertyIndex(named: key.path[0]),
                      !schema.properties[index].isList, schema.properties[index].kind != .link else { return nil }
                mask |= TableChanges.bit(index)
                sort.append((index, key.ascending))
            }
        default: return nil
        }
        self.query = query
        self.sort = sort
        self.readMask = mask
    }

    /// The new ordered keys and the change from `old` (the ordered keys before `changes`), or
    /// nil when too many objects changed to edit (run the query instead). `modified` holds the
    /// objects to report as modified when they stay in place.
    package func update(_ old: [ObjectKey], changes: TableChanges,
                        modified: Set<ObjectKey>) throws -> (keys: [ObjectKey], diff: CollectionDiff)? {
        // Objects that may have left or moved: deleted ones, and modified ones whose read
        // properties changed.
        var candidates: [ObjectKey] = changes.deleted
        var arriving: [ObjectKey] = changes.inserted
        for (key, mask) in changes.modified where mask & readMask != 0 {
            candidates.append(key)
            arriving.append(key)
        }
        guard candidates.count + changes.inserted.count <= Self.maximumChanges else { return nil }

        // Where the leaving objects were.
        var removed: [(index: Int, key: ObjectKey)] = []
        for key in candidates {
            if let index = oldIndex(of: key, in: old) { removed.append((index, key)) }
        }
        removed.sort { $0.index < $1.index }

        // The objects that match now, with their sort values.
        var arrivals: [Arrival] = []
        for key in arriving where try query.matches(key) {
            arrivals.append(Arrival(key: key, values: try sortValues(key)))
        }

        // The unchanged objects, in their (unchanged) order: the old keys less the removed
        // ones, read in place (`baseCount` of them, the `b`th at `old[baseIndex(b)]`).
        let baseCount = old.count - removed.count
        func baseIndex(_ b: Int) -> Int {
            var index = b
            for entry in removed {
                if entry.index <= index { index += 1 } else { break }
            }
            return index
        }

        // Each arrival's place among them.
        for i in arrivals.indices { arrivals[i].gap = try gap(of: arrivals[i], count: baseCount) { old[baseIndex($0)] } }
        arrivals.sort { a, b in a.gap != b.gap ? a.gap < b.gap : compare(a.values, a.key, b.values, b.key) < 0 }

        var new: [ObjectKey]
        if removed.isEmpty && arrivals.isEmpty {
            new = old
        } else {
            new = []
            new.reserveCapacity(baseCount + arrivals.count)
            var oldPosition = 0, nextRemoved = 0, copied = 0
            // Appends the unchanged objects up to base position `end`.
            func copyBase(upTo end: Int) {
                while copied < end {
                    if nextRemoved < removed.count && removed[nextRemoved].index == oldPosition {
                        oldPosition += 1
                        nextRemoved += 1
                        continue
                    }
                    let limit = nextRemoved < removed.count ? removed[nextRemoved].index : old.count
                    let stop = min(limit, oldPosition + (end - copied))
                    new.append(contentsOf: old[oldPosition..<stop])
                    copied += stop - oldPosition
                    oldPosition = stop
                }
            }
            for arrival in arrivals {
                copyBase(upTo: arrival.gap)
                new.append(arrival.key)
            }
            copyBase(upTo: baseCount)
        }

        // An object that left and came back between the same unchanged neighbours, in the same
        // order as the other such objects there, stayed in place.
        var oldGap: [ObjectKey: (gap: Int, index: Int)] = [:]
        for (rank, entry) in removed.enumerated() { oldGap[entry.key] = (entry.index - rank, entry.index) }
        var stays = [Bool](repeating: false, count: arrivals.count)
        var start = 0
        while start < arrivals.count {
            var end = start
            while end < arrivals.count && arrivals[end].gap == arrivals[start].gap { end += 1 }
            var previous = -1
            var ordered = true
            for i in start..<end {
                guard let before = oldGap[arrivals[i].key], before.gap == arrivals[i].gap else { continue }
                if before.index < previous { ordered = false }
                previous = before.index
            }
            if ordered {
                for i in start..<end {
                    if let before = oldGap[arrivals[i].key], before.gap == arrivals[i].gap { stays[i] = true }
                }
            }
            start = end
        }

        var diff = CollectionDiff()
        var stayed: Set<ObjectKey> = []
        for (i, arrival) in arrivals.enumerated() {
            let index = arrival.gap + i
            if stays[i] {
                stayed.insert(arrival.key)
                if modified.contains(arrival.key) { diff.modifications.append(index) }
            } else {
                diff.insertions.append(index)
            }
        }
        for (index, key) in removed where !stayed.contains(key) { diff.deletions.append(index) }
        // Modified objects that kept their place because nothing they are sorted by changed.
        let moved = Set(candidates)
        if sort.isEmpty || modified.count <= Self.maximumChanges {
            for key in modified where !moved.contains(key) {
                if let index = try unchangedIndex(of: key, in: new) { diff.modifications.append(index) }
            }
        } else {
            for (index, key) in new.enumerated() where modified.contains(key) && !moved.contains(key) {
                diff.modifications.append(index)
            }
        }
        diff.modifications.sort()
        return (new, diff)
    }

    private struct Arrival {
        let key: ObjectKey
        let values: [StoreValue]
        var gap = 0
    }

    /// The sort values of `key`'s object now.
    private func sortValues(_ key: ObjectKey) throws -> [StoreValue] {
        try sort.map { entry throws in try query.table.value(key, property: entry.property) }
    }

    /// -1, 0 or 1: the order of two objects by the sort, then by key (ties keep key order).
    private func compare(_ a: [StoreValue], _ aKey: ObjectKey, _ b: [StoreValue], _ bKey: ObjectKey) -> Int {
        for i in sort.indices {
            let c = SortColumn.compare(a[i], b[i])
            if c != 0 { return sort[i].ascending ? c : -c }
        }
        return aKey < bKey ? -1 : (aKey == bKey ? 0 : 1)
    }

    /// The number of the `count` objects `base` gives, in order, that are ordered before
    /// `arrival` (binary search; they are unchanged objects, so their values now are the ones
    /// they were sorted by).
    private func gap(of arrival: Arrival, count: Int, _ base: (Int) -> ObjectKey) throws -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            let key = base(mid)
            let order = sort.isEmpty ? (key < arrival.key ? -1 : 1) : compare(try sortValues(key), key, arrival.values, arrival.key)
            if order < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Where `key` was in the old keys: a binary search in key order, a scan otherwise (its
    /// old sort values are gone).
    private func oldIndex(of key: ObjectKey, in old: [ObjectKey]) -> Int? {
        if sort.isEmpty {
            let index = lowerBound(key, in: old)
            return index < old.count && old[index] == key ? index : nil
        }
        return old.withUnsafeBufferPointer { buffer -> Int? in
            let raw = key.rawValue
            for i in 0..<buffer.count where buffer[i].rawValue == raw { return i }
            return nil
        }
    }

    /// Where an object whose sort values did not change is in `new`, if it matches.
    private func unchangedIndex(of key: ObjectKey, in new: [ObjectKey]) throws -> Int? {
        if sort.isEmpty {
            let index = lowerBound(key, in: new)
            return index < new.count && new[index] == key ? index : nil
        }
        guard try query.table.contains(key) else { return nil }
        let index = try gap(of: Arrival(key: key, values: try sortValues(key)), count: new.count) { new[$0] }
        return index < new.count && new[index] == key ? index : nil
    }

    private func lowerBound(_ key: ObjectKey, in keys: [ObjectKey]) -> Int {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if keys[mid] < key { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
