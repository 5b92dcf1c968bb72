// The first k objects of a sort, chosen while scanning.
//
// Reading `sorted(byKeyPath: "score")[0..<100]` needs the 100 smallest sort entries, not an
// order of all n. A bounded max-heap of the best k entries seen so far keeps memory at k
// entries and costs one comparison with the heap's largest for most objects; collecting all n
// entries first (and selecting among them) moves and faults in megabytes for a million objects.
//
// Ties keep the object order: an entry's position (its rank among the matches, in key order)
// is its last sort key, exactly as in the full sort (`SortEntry.<`).

/// The `limit` smallest `SortEntry`s offered, with their object keys.
struct TopSelection {
    let limit: Int
    /// A max-heap on `SortEntry.<` (the largest kept entry at the root), at most `limit` long.
    private var entries: [SortEntry] = []
    private var keys: [ObjectKey] = []

    init(limit: Int) {
        precondition(limit > 0, "a top selection keeps at least one entry")
        self.limit = limit
        entries.reserveCapacity(limit)
        keys.reserveCapacity(limit)
    }

    /// Keeps `entry` if it is among the `limit` smallest so far.
    @inline(__always)
    mutating func offer(_ entry: SortEntry, key: ObjectKey) {
        if entries.count == limit {
            guard entry < entries[0] else { return }
            replaceRoot(entry, key)
        } else {
            push(entry, key)
        }
    }

    private mutating func push(_ entry: SortEntry, _ key: ObjectKey) {
        entries.append(entry)
        keys.append(key)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[parent] < entries[child] else { break }
            entries.swapAt(parent, child)
            keys.swapAt(parent, child)
            child = parent
        }
    }

    private mutating func replaceRoot(_ entry: SortEntry, _ key: ObjectKey) {
        entries[0] = entry
        keys[0] = key
        let count = entries.count
        var parent = 0
        while true {
            let left = 2 * parent + 1
            if left >= count { break }
            var largest = left
            if left + 1 < count, entries[left] < entries[left + 1] { largest = left + 1 }
            guard entries[parent] < entries[largest] else { break }
            entries.swapAt(parent, largest)
            keys.swapAt(parent, largest)
            parent = largest
        }
    }

    /// The kept keys, smallest entry first.
    func sortedKeys() -> [ObjectKey] {
        let order = entries.indices.sorted { entries[$0] < entries[$1] }
        return order.map { keys[$0] }
    }
}

extension TableQuery {
    /// Entries kept by a top selection when the first positions of a sort are asked for.
    static let topSelectionLimit = 128

    /// When one number, date or bool property of the object decides the order: the first
    /// `limit` matching keys in order and the number of matches, from one scan that keeps only
    /// the best `limit`. Nil when the order is decided otherwise.
    func topSorted(_ sortKey: SortKey, limit: Int) throws -> (keys: [ObjectKey], count: Int)? {
        guard let step = try singleColumnSortStep(sortKey) else { return nil }
        var selection = TopSelection(limit: limit)
        var count = 0
        try forEachSortEntry(step, ascending: sortKey.ascending) { entry, key in
            selection.offer(entry, key: key)
            count &+= 1
        }
        return (selection.sortedKeys(), count)
    }
}
