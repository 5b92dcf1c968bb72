// An in-memory tree node being rewritten by a write transaction (bbolt's `node`).
//
// Keys and values are views into the mapping (entries copied from a page, which stays valid
// for the whole transaction because the writer never overwrites a page its base version can
// reach) or into the transaction's arena (new entries). A node is written out at commit, split
// into as many pages as it needs; in between, puts split it eagerly at twice a page so inserts
// stay cheap.
//
// Unsafe: a node holds `UnsafeRawBufferPointer` views it does not own. Views into the mapping
// stay valid while the transaction's base version is pinned (the writer never overwrites a page
// that version reaches); views into the transaction's `Arena` stay valid until the arena is reset
// when the transaction ends. A node outlives its transaction only as one of the arena's kept
// nodes, and then all its views point at the cells of the page it was written to; it is used
// again only by a transaction whose base is the version that wrote it (which that transaction
// pins), and dropped otherwise. A recycled node is emptied first. `KeyList.prefix` reads at most
// `key.count` bytes of a key.

struct LeafValue {
    var bytes: UnsafeRawBufferPointer
    /// First page of the overflow run holding `bytes` on disk; 0 when it has none (yet).
    var overflowPage: PageNumber
    /// Whether `bytes` already sit in their overflow run's page image in the arena (at the
    /// header's offset, the tail zeroed), which the commit then seals in place.
    var inOverflowImage = false
}

struct ChildReference {
    var page: PageNumber
    var node: Node?
}

/// A node's keys: views of the key bytes, and beside them each key's first eight bytes as a
/// big-endian integer. Binary search compares the integers and only reads a key's bytes (which
/// live scattered in the mapping or the arena, a likely cache miss) when they tie.
struct KeyList: ExpressibleByArrayLiteral {
    private(set) var bytes: ContiguousArray<UnsafeRawBufferPointer> = []
    private(set) var prefixes: ContiguousArray<UInt64> = []

    init() {}
    init(arrayLiteral elements: UnsafeRawBufferPointer...) {
        for key in elements { append(key) }
    }

    @inline(__always)
    static func prefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
        guard let base = key.baseAddress else { return 0 }
        if key.count >= 8 { return base.uint64(at: 0).bigEndian }
        var value: UInt64 = 0
        for i in 0..<key.count { value |= UInt64(base.uint8(at: i)) << UInt64(56 - 8 * i) }
        return value
    }

    var count: Int { bytes.count }
    @inline(__always) subscript(index: Int) -> UnsafeRawBufferPointer { bytes[index] }

    /// Replaces the key at `index`.
    mutating func replace(at index: Int, with key: UnsafeRawBufferPointer) {
        bytes[index] = key
        prefixes[index] = Self.prefix(key)
    }

    /// The key views, to read and to re-point at other bytes equal to their own (the prefixes
    /// stay): one uniqueness check for a whole node instead of one per key.
    @inline(__always)
    mutating func withRebasableKeys<R>(_ body: (UnsafeMutableBufferPointer<UnsafeRawBufferPointer>) throws -> R) rethrows -> R {
        try bytes.withUnsafeMutableBufferPointer { try body($0) }
    }

    mutating func reserveCapacity(_ n: Int) { bytes.reserveCapacity(n); prefixes.reserveCapacity(n) }
    // Inlined: `materialize` appends every key of a page, and a call per key dominates it.
    @inline(__always)
    mutating func append(_ key: UnsafeRawBufferPointer) { bytes.append(key); prefixes.append(Self.prefix(key)) }
    mutating func insert(_ key: UnsafeRawBufferPointer, at index: Int) {
        // `append` for the common append: `insert(_:at:)` goes through `replaceSubrange`.
        if index == bytes.count { return append(key) }
        bytes.insert(key, at: index)
        prefixes.insert(Self.prefix(key), at: index)
    }
    mutating func remove(at index: Int) { bytes.remove(at: index); prefixes.remove(at: index) }
    mutating func removeAll() { bytes.removeAll(keepingCapacity: true); prefixes.removeAll(keepingCapacity: true) }
    mutating func append(contentsOf other: KeyList) {
        bytes.append(contentsOf: other.bytes)
        prefixes.append(contentsOf: other.prefixes)
    }
    /// Removes the keys from `index` on and returns them.
    mutating func split(from index: Int) -> KeyList {
        var tail = KeyList()
        tail.bytes.append(contentsOf: bytes[index...])
        tail.prefixes.append(contentsOf: prefixes[index...])
        bytes.removeSubrange(index...)
        prefixes.removeSubrange(index...)
        return tail
    }

    /// Compares the key at `index` with `key`, whose prefix is `prefix`.
    @inline(__always)
    func compare(_ index: Int, _ key: UnsafeRawBufferPointer, prefix: UInt64) -> Int {
        let p = prefixes[index]
        if p != prefix { return p < prefix ? -1 : 1 }
        return compareBytes(bytes[index], key)
    }
}

/// Only the write transaction that made a node touches it, from one thread at a time, and no
/// method holds an access to one of its properties across a call that could reach the same
/// node; the properties are therefore exempt from dynamic exclusivity checks (each would be a
/// `swift_beginAccess` call on the per-row path).
final class Node {
    let isLeaf: Bool
    @exclusivity(unchecked) var keys = KeyList()
    @exclusivity(unchecked) var values: ContiguousArray<LeafValue> = []        // leaves
    @exclusivity(unchecked) var children: ContiguousArray<ChildReference> = []  // branches
    /// Bytes the node takes on a page (slots and cells, without the page header).
    @exclusivity(unchecked) var size = 0
    /// The savepoint epoch of the write transaction when this node was made (Savepoint.swift):
    /// a node of an older epoch may be shared with a savepoint and is copied before it changes.
    @exclusivity(unchecked) var epoch: UInt64 = 0

    init(isLeaf: Bool, epoch: UInt64 = 0) {
        self.isLeaf = isLeaf
        self.epoch = epoch
    }

    var count: Int { keys.count }

    /// Empties the node for reuse by a later transaction's `materialize` (`Arena.recycle`),
    /// keeping its arrays' capacity.
    func empty() {
        keys.removeAll()
        if isLeaf { values.removeAll(keepingCapacity: true) } else { children.removeAll(keepingCapacity: true) }
        size = 0
    }

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
    ///
    /// The last key is compared first: new objects get ascending keys (object keys, and in bulk
    /// inserts usually primary keys too), and an append is then one comparison instead of a
    /// binary search.
    @inline(__always)
    func search(_ key: UnsafeRawBufferPointer) -> (Int, Bool) {
        let prefix = KeyList.prefix(key)
        var low = 0, high = keys.count
        if high > 0 {
            let c = keys.compare(high - 1, key, prefix: prefix)
            if c < 0 { return (high, false) }
            if c == 0 { return (high - 1, true) }
            high -= 1
        }
        while low < high {
            let mid = (low + high) >> 1
            let c = keys.compare(mid, key, prefix: prefix)
            if c == 0 { return (mid, true) }
            if c < 0 { low = mid + 1 } else { high = mid }
        }
        return (low, false)
    }

    /// Branch search: the child whose range holds `key` (the first key acts as −∞). The last
    /// child is tried first, as in `search`.
    @inline(__always)
    func childIndex(_ key: UnsafeRawBufferPointer) -> Int {
        let prefix = KeyList.prefix(key)
        var low = 1, high = keys.count
        if high > 1 {
            if keys.compare(high - 1, key, prefix: prefix) <= 0 { return high - 1 }
            high -= 1
        }
        while low < high {
            let mid = (low + high) >> 1
            if keys.compare(mid, key, prefix: prefix) <= 0 { low = mid + 1 } else { high = mid }
        }
        return low - 1
    }

    /// How many entries, from the first, fill `pages` pages of `capacity` bytes when each page
    /// takes entries in order while they fit.
    func entriesFitting(pages: Int, capacity: Int, inlineLimit: Int) -> Int {
        var index = 0
        for _ in 0..<pages {
            var bytes = 0
            while index < count {
                let size = entrySize(index, inlineLimit: inlineLimit)
                if bytes > 0 && bytes + size > capacity { break }
                bytes += size
                index += 1
            }
        }
        return index
    }

    /// Moves entries `from...` into a new right sibling and returns it.
    func splitOff(from index: Int, inlineLimit: Int) -> Node {
        let right = Node(isLeaf: isLeaf, epoch: epoch)
        right.keys = keys.split(from: index)
        // The right node of an append split starts with one entry and fills up to this node's
        // size: reserve that much at once instead of growing through every power of two. A
        // node splits once its size passes the threshold, which takes a few entries more than
        // the left node keeps (it keeps what fits whole pages), so the reservation has room
        // for those too: without it every appended-to leaf grew (copied) once, just before
        // its own split.
        let expected = max(count, right.keys.count) + max(4, count / 8)
        right.keys.reserveCapacity(expected)
        if isLeaf {
            right.values.reserveCapacity(expected)
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
