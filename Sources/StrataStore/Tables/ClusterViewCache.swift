/// Cluster views sorted by first key (at most `capacity`; cleared when full).
struct ClusterViewCache {
    static let capacity = 4096
    private var firsts: [Int64] = []
    private var views: [ClusterView] = []

    var count: Int { views.count }

    mutating func removeAll(keepingCapacity: Bool) {
        firsts.removeAll(keepingCapacity: keepingCapacity)
        views.removeAll(keepingCapacity: keepingCapacity)
    }

    /// The position of the first entry whose first key is greater than `key`. Clusters hold
    /// runs of consecutive keys, so once the cache holds most of a table's clusters their
    /// first keys are close to evenly spaced: the search first guesses by interpolation and
    /// steps to the boundary when the guess is next to it (random lookups made every branch of
    /// a plain bisection a misprediction), else bisects.
    private func upperBound(_ key: Int64) -> Int {
        let count = firsts.count
        if count >= 8 {
            let first = firsts[0], last = firsts[count &- 1]
            if key < first { return 0 }
            if key >= last { return count }
            // first ≤ key < last, so both differences are positive and the quotient is below
            // count − 1; as unsigned values they cannot overflow.
            let spread = UInt64(bitPattern: last &- first), offset = UInt64(bitPattern: key &- first)
            let (product, overflow) = offset.multipliedReportingOverflow(by: UInt64(count &- 1))
            if !overflow {
                let guess = Int(product / spread)  // firsts[guess] is about key
                // The answer is guess + 1 when firsts[guess] ≤ key < firsts[guess + 1].
                if firsts[guess] <= key {
                    if firsts[guess &+ 1] > key { return guess &+ 1 }
                    if guess &+ 2 < count, firsts[guess &+ 2] > key { return guess &+ 2 }
                } else if guess > 0, firsts[guess &- 1] <= key {
                    return guess
                }
            }
        }
        var low = 0
        var high = count
        while low < high {
            let mid = (low &+ high) >> 1
            if firsts[mid] <= key { low = mid &+ 1 } else { high = mid }
        }
        return low
    }

    /// The cached cluster with the greatest first key at or below `key`.
    func last(atOrBelow key: Int64) -> ClusterView? {
        let position = upperBound(key)
        return position > 0 ? views[position - 1] : nil
    }

    /// The cached cluster starting at `first`.
    func view(first: Int64) -> ClusterView? {
        let position = upperBound(first)
        guard position > 0, firsts[position - 1] == first else { return nil }
        return views[position - 1]
    }

    mutating func insert(_ view: ClusterView) {
        let position = upperBound(view.firstKey)
        if position > 0, firsts[position - 1] == view.firstKey {
            views[position - 1] = view
            return
        }
        firsts.insert(view.firstKey, at: position)
        views.insert(view, at: position)
    }
}
