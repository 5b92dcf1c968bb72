// The index changes between two versions of an ordered collection: what a collection
// notification reports. Pure, so that it can be computed anywhere and tested on its own.

/// How an ordered collection changed between two versions, as index sets.
///
/// Apply it to the old contents in this order to get the new contents: remove the elements at
/// `deletions` (indices into the old contents, highest first), insert the new elements at
/// `insertions` (indices into the new contents, lowest first), then refresh the elements at
/// `modifications` (indices into the new contents). An element that moved is reported as a
/// deletion and an insertion; the longest run of elements that kept their relative order stays
/// in place, so moves are reported for as few elements as possible.
public struct CollectionDiff: Sendable, Equatable {
    /// Indices into the old contents of the elements that left, ascending.
    public var deletions: [Int]
    /// Indices into the new contents of the elements that arrived (or moved), ascending.
    public var insertions: [Int]
    /// Indices into the new contents of the elements that stayed in place and changed, ascending.
    public var modifications: [Int]

    /// A diff with the given index lists (each ascending).
    @inlinable
    public init(deletions: [Int] = [], insertions: [Int] = [], modifications: [Int] = []) {
        self.deletions = deletions
        self.insertions = insertions
        self.modifications = modifications
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }

    /// The changes from `old` to `new`. Elements are matched by value; an element that occurs
    /// more than once (an object twice in a list) is matched occurrence by occurrence.
    /// `isModified` says whether an element present in both changed.
    @inlinable  // specialized where called: the unspecialized hashing and comparing dominate at large sizes
    public static func between<Element: Hashable>(_ old: [Element], _ new: [Element],
                                                  isModified: (Element) -> Bool) -> CollectionDiff {
        var diff = CollectionDiff()
        if old == new {
            for (index, element) in new.enumerated() where isModified(element) { diff.modifications.append(index) }
            return diff
        }
        // The common prefix and suffix stay in place; only the middle needs matching.
        let limit = Swift.min(old.count, new.count)
        var prefix = 0
        while prefix < limit && old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < limit - prefix && old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
        let oldEnd = old.count - suffix, newEnd = new.count - suffix
        // Where each occurrence of a middle element sits in the new contents.
        var first: [Element: Int] = [:]
        first.reserveCapacity(newEnd - prefix)
        var more: [Element: [Int]] = [:]     // later occurrences, only for repeated elements
        for index in prefix..<newEnd {
            let element = new[index]
            if first[element] == nil { first[element] = index } else { more[element, default: []].append(index) }
        }
        var used: [Element: Int] = [:]
        // For each middle old index, the new index of the same occurrence (or -1 when it left).
        var matched = [Int](repeating: -1, count: oldEnd - prefix)
        for index in prefix..<oldEnd {
            let element = old[index]
            guard let position = first[element] else { continue }
            if more.isEmpty {
                first[element] = nil
                matched[index - prefix] = position
                continue
            }
            let occurrence = used[element, default: 0]
            if occurrence == 0 {
                matched[index - prefix] = position
            } else if let later = more[element], occurrence - 1 < later.count {
                matched[index - prefix] = later[occurrence - 1]
            } else {
                continue
            }
            used[element] = occurrence + 1
        }
        // The matched elements that keep their relative order: a longest increasing
        // subsequence of their new indices. The others moved.
        let kept = longestIncreasingSubsequence(matched.filter { $0 >= 0 })
        var stays = [Bool](repeating: false, count: newEnd - prefix)
        for index in kept { stays[index - prefix] = true }
        for (offset, target) in matched.enumerated() where target < 0 || !stays[target - prefix] {
            diff.deletions.append(prefix + offset)
        }
        for index in 0..<prefix where isModified(new[index]) { diff.modifications.append(index) }
        for index in prefix..<newEnd {
            if !stays[index - prefix] {
                diff.insertions.append(index)
            } else if isModified(new[index]) {
                diff.modifications.append(index)
            }
        }
        for index in newEnd..<new.count where isModified(new[index]) { diff.modifications.append(index) }
        return diff
    }

    /// The changes from `old` to `new`, where `modified` holds the elements present in both
    /// that changed. Cheaper than the closure form when few elements changed: unchanged
    /// contents cost one comparison of the arrays and one search per modified element.
    @inlinable  // specialized where called: the scans are the cost at large sizes
    public static func between<Element: Hashable>(_ old: [Element], _ new: [Element], modified: Set<Element>) -> CollectionDiff {
        if modified.isEmpty { return old == new ? CollectionDiff() : between(old, new) { _ in false } }
        if modified.count <= 16, old == new {
            var diff = CollectionDiff()
            for element in modified {
                var start = new.startIndex
                while let index = new[start...].firstIndex(of: element) {
                    diff.modifications.append(index)
                    start = index + 1
                }
            }
            diff.modifications.sort()
            return diff
        }
        return between(old, new) { modified.contains($0) }
    }

    /// The values of a longest strictly increasing subsequence of `values` (patience sorting,
    /// O(n log n)).
    @inlinable
    static func longestIncreasingSubsequence(_ values: [Int]) -> [Int] {
        guard !values.isEmpty else { return [] }
        var tails: [Int] = []          // index into `values` of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: [Int] = []
        result.reserveCapacity(tails.count)
        var cursor = tails[tails.count - 1]
        while cursor >= 0 {
            result.append(values[cursor])
            cursor = previous[cursor]
        }
        return result.reversed()
    }

    /// Applies the changes to `old`, taking inserted and modified elements from `new`: the
    /// result equals `new` when the diff is right. For tests and for consumers that mirror a
    /// collection.
    public func applied<Element>(to old: [Element], from new: [Element]) -> [Element] {
        var result = old
        for index in deletions.reversed() { result.remove(at: index) }
        for index in insertions { result.insert(new[index], at: index) }
        for index in modifications { result[index] = new[index] }
        return result
    }
}
