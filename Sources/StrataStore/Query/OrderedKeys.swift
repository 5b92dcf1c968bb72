import Foundation

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
