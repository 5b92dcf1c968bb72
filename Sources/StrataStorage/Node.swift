// An in-memory tree node being rewritten by a write transaction (bbolt's `node`).
//
// Keys and values are views into the mapping (entries copied from a page, which stays valid
// for the whole transaction because the writer never overwrites a page its base version can
// reach) or into the transaction's arena (new entries). A node is written out at commit, split
// into as many pages as it needs; in between, puts split it eagerly at twice a page so inserts
// stay cheap.

struct LeafValue {
    var bytes: UnsafeRawBufferPointer
    /// First page of the overflow run holding `bytes` on disk; 0 when it has none (yet).
    var overflowPage: PageNumber
}

struct ChildReference {
    var page: PageNumber
    var node: Node?
}

final class Node {
    let isLeaf: Bool
    var keys: ContiguousArray<UnsafeRawBufferPointer> = []
    var values: ContiguousArray<LeafValue> = []        // leaves
    var children: ContiguousArray<ChildReference> = []  // branches
    /// Bytes the node takes on a page (slots and cells, without the page header).
    var size = 0

    init(isLeaf: Bool) { self.isLeaf = isLeaf }

    var count: Int { keys.count }

    @inline(__always)
    static func leafEntrySize(key: Int, value: Int, inlineLimit: Int) -> Int {
        2 + PageLayout.leafCellHeader + key + (PageLayout.leafCellHeader + key + value <= inlineLimit ? value : 8)
    }

    @inline(__always)
    static func branchEntrySize(key: Int) -> Int { 2 + PageLayout.branchCellHeader + key }

    func entrySize(_ index: Int, inlineLimit: Int) -> Int {
        isLeaf
            ? Self.leafEntrySize(key: keys[index].count, value: values[index].bytes.count, inlineLimit: inlineLimit)
            : Self.branchEntrySize(key: keys[index].count)
    }

    func recomputeSize(inlineLimit: Int) {
        var total = 0
        for i in 0..<count { total += entrySize(i, inlineLimit: inlineLimit) }
        size = total
    }

    /// Leaf search: (index, found).
    @inline(__always)
    func search(_ key: UnsafeRawBufferPointer) -> (Int, Bool) {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) >> 1
            let c = compareBytes(keys[mid], key)
            if c == 0 { return (mid, true) }
            if c < 0 { low = mid + 1 } else { high = mid }
        }
        return (low, false)
    }

    /// Branch search: the child whose range holds `key` (the first key acts as −∞).
    @inline(__always)
    func childIndex(_ key: UnsafeRawBufferPointer) -> Int {
        var low = 1, high = keys.count
        while low < high {
            let mid = (low + high) >> 1
            if compareBytes(keys[mid], key) <= 0 { low = mid + 1 } else { high = mid }
        }
        return low - 1
    }

    /// Moves entries `from...` into a new right sibling and returns it.
    func splitOff(from index: Int, inlineLimit: Int) -> Node {
        let right = Node(isLeaf: isLeaf)
        right.keys.append(contentsOf: keys[index...])
        keys.removeSubrange(index...)
        if isLeaf {
            right.values.append(contentsOf: values[index...])
            values.removeSubrange(index...)
        } else {
            right.children.append(contentsOf: children[index...])
            children.removeSubrange(index...)
        }
        right.recomputeSize(inlineLimit: inlineLimit)
        size -= right.size
        return right
    }

    /// Appends all of `other`'s entries (its keys are all greater).
    func absorb(_ other: Node) {
        keys.append(contentsOf: other.keys)
        if isLeaf { values.append(contentsOf: other.values) } else { children.append(contentsOf: other.children) }
        size += other.size
    }
}
