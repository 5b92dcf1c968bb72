// Ordered iteration over one tree, forwards and backwards. A cursor keeps the path from the
// root to its current entry; each level is a page of the snapshot or, inside a write
// transaction, an in-memory node that the transaction has modified. The current leaf is cached
// apart from the path so that stepping within a leaf costs a compare and an increment.

/// Tells cursors whether their transaction is still open and unmodified.
final class CursorGeneration {
    var value: UInt64 = 0
    func bump() { value &+= 1 }
}

/// A position in a tree. Move it with `first()`, `last()`, `seek(to:)`, `next()` and
/// `previous()`; each returns whether the cursor now stands on an entry.
///
/// `key` and `value` are zero-copy views that stay valid until the cursor moves or its
/// transaction ends. A put or delete in a write transaction invalidates that transaction's
/// cursors: their next move throws `StorageError.cursorInvalidated`; make a new cursor (and
/// `seek(to:)` where you were) after writing.
public final class Cursor {
    private enum Level {
        case page(PageView)
        case node(Node)

        var count: Int {
            switch self {
            case .page(let view): view.count
            case .node(let node): node.count
            }
        }
        var isLeaf: Bool {
            switch self {
            case .page(let view): view.isLeaf
            case .node(let node): node.isLeaf
            }
        }
    }

    private let snapshot: Snapshot
    private let rootPage: PageNumber
    private let rootNode: Node?
    private let generation: CursorGeneration
    private let expectedGeneration: UInt64
    /// The branch levels above the current leaf, with the index taken at each.
    private var branches: [Level] = []
    private var branchIndices: [Int] = []
    // The current leaf.
    private var leafPage: PageView?
    private var leafNode: Node?
    private var leafIndex = 0
    private var leafCount = 0
    private var positioned = false

    init(snapshot: Snapshot, rootPage: PageNumber, rootNode: Node?, generation: CursorGeneration) {
        self.snapshot = snapshot
        self.rootPage = rootPage
        self.rootNode = rootNode
        self.generation = generation
        self.expectedGeneration = generation.value
        branches.reserveCapacity(8)
        branchIndices.reserveCapacity(8)
    }

    /// Whether the cursor stands on an entry (the last move returned true).
    public var isPositioned: Bool { positioned }

    /// The key at the cursor. Only valid after a move that returned true.
    public var key: UnsafeRawBufferPointer {
        precondition(positioned, "Cursor.key read while the cursor is not on an entry; check the Bool its move returned")
        if let leafPage { return leafPage.leafKey(leafIndex) }
        return leafNode.unsafelyUnwrapped.keys[leafIndex]  // positioned: a page or a node is current
    }

    /// The value at the cursor. Only valid after a move that returned true.
    public var value: UnsafeRawBufferPointer {
        precondition(positioned, "Cursor.value read while the cursor is not on an entry; check the Bool its move returned")
        if let leafPage {
            // Overflow runs were checked when the cursor arrived on the entry.
            return (try? snapshot.leafValue(leafPage, leafIndex)) ?? UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return leafNode.unsafelyUnwrapped.values[leafIndex].bytes
    }

    @inline(__always)
    private func checkCurrent() throws {
        guard generation.value == expectedGeneration else { throw StorageError.cursorInvalidated }
    }

    private func rootLevel() throws -> Level? {
        if let rootNode { return .node(rootNode) }
        if rootPage == 0 { return nil }
        return .page(try snapshot.treePage(rootPage))
    }

    private func child(of level: Level, at index: Int) throws -> Level {
        switch level {
        case .page(let view): return .page(try snapshot.treePage(view.branchChild(index)))
        case .node(let node):
            if let child = node.children[index].node { return .node(child) }
            return .page(try snapshot.treePage(node.children[index].page))
        }
    }

    private func reset() {
        branches.removeAll(keepingCapacity: true)
        branchIndices.removeAll(keepingCapacity: true)
        leafPage = nil
        leafNode = nil
        positioned = false
    }

    /// Makes `level` (a leaf) current at `index`.
    private func enterLeaf(_ level: Level, at index: Int, settling: Bool = true) throws -> Bool {
        switch level {
        case .page(let view): leafPage = view; leafNode = nil; leafCount = view.count
        case .node(let node): leafNode = node; leafPage = nil; leafCount = node.count
        }
        leafIndex = index
        if settling { return try settle() }
        positioned = leafIndex >= 0 && leafIndex < leafCount
        return positioned
    }

    /// Validates the current entry (resolving an overflow value once).
    @inline(__always)
    private func settle() throws -> Bool {
        guard leafIndex >= 0 && leafIndex < leafCount else { positioned = false; return false }
        if let leafPage, leafPage.leafValueField(leafIndex).0 & PageLayout.overflowFlag != 0 {
            _ = try snapshot.leafValue(leafPage, leafIndex)
        }
        positioned = true
        return true
    }

    /// Descends from `start` to a leaf, taking the first (or last) child at each level and
    /// pushing the branches passed; returns the leaf, not yet entered.
    private func descendToLeaf(from start: Level, toLast: Bool) throws -> Level {
        var level = start
        while !level.isLeaf {
            guard level.count > 0 else { throw StorageError.corrupted(page: nil, reason: "empty branch node") }
            guard branches.count < Snapshot.maximumDepth else { throw StorageError.corrupted(page: rootPage, reason: "tree too deep") }
            let index = toLast ? level.count - 1 : 0
            branches.append(level)
            branchIndices.append(index)
            level = try child(of: level, at: index)
        }
        return level
    }

    /// Descends from `start` to its first (or last) entry, passing over empty leaves.
    private func descend(from start: Level, toLast: Bool, settling: Bool = true) throws -> Bool {
        let leaf = try descendToLeaf(from: start, toLast: toLast)
        if leaf.count > 0 { return try enterLeaf(leaf, at: toLast ? leaf.count - 1 : 0, settling: settling) }
        return try leaveLeaf(forward: !toLast, settling: settling)
    }

    /// Moves from the current leaf (done with, or empty) to the first entry of the leaves after
    /// it (or the last entry of those before it): climbs to the nearest branch with a child
    /// beyond the one taken and descends. A write transaction's deletes leave a leaf empty until
    /// its commit lays the tree out again, so a leaf reached this way may hold nothing: the
    /// move goes on past it (in a loop, however many empty leaves follow one another) rather
    /// than stopping there as if the tree ended. False, off the tree, when no entry is left.
    private func leaveLeaf(forward: Bool, settling: Bool) throws -> Bool {
        while let level = branches.last {
            let last = branchIndices.count - 1
            let index = branchIndices[last] + (forward ? 1 : -1)
            guard index >= 0 && index < level.count else {
                branches.removeLast()
                branchIndices.removeLast()
                continue
            }
            branchIndices[last] = index
            let leaf = try descendToLeaf(from: try child(of: level, at: index), toLast: !forward)
            if leaf.count > 0 { return try enterLeaf(leaf, at: forward ? 0 : leaf.count - 1, settling: settling) }
        }
        leafPage = nil
        leafNode = nil
        positioned = false
        return false
    }

    /// Moves to the first entry; false when the tree is empty.
    public func first() throws -> Bool {
        try checkCurrent()
        reset()
        guard let root = try rootLevel(), root.count > 0 else { return false }
        return try descend(from: root, toLast: false)
    }

    /// Moves to the last entry; false when the tree is empty.
    public func last() throws -> Bool {
        try checkCurrent()
        reset()
        guard let root = try rootLevel(), root.count > 0 else { return false }
        return try descend(from: root, toLast: true)
    }

    /// Moves to the first entry whose key is ≥ `key`; false when there is none.
    public func seek(to key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try seek(to: $0) }
    }

    /// Moves to the first entry whose key is ≥ `key`; false when there is none.
    public func seek(to key: UnsafeRawBufferPointer) throws -> Bool {
        try checkCurrent()
        reset()
        guard var level = try rootLevel() else { return false }
        while !level.isLeaf {
            guard level.count > 0 else { throw StorageError.corrupted(page: nil, reason: "empty branch node") }
            guard branches.count < Snapshot.maximumDepth else { throw StorageError.corrupted(page: rootPage, reason: "tree too deep") }
            let index: Int
            switch level {
            case .page(let view): index = Snapshot.childIndex(view, key)
            case .node(let node): index = node.childIndex(key)
            }
            branches.append(level)
            branchIndices.append(index)
            level = try child(of: level, at: index)
        }
        let index: Int
        switch level {
        case .page(let view): index = Snapshot.leafSearch(view, key).0
        case .node(let node): index = node.search(key).0
        }
        if index < level.count { return try enterLeaf(level, at: index) }
        // Every key of this leaf (if it has any) is below `key`: the entry is the first of the
        // leaves after it.
        return try leaveLeaf(forward: true, settling: true)
    }

    /// Moves to the last entry whose key is ≤ `key`; false when there is none.
    public func seek(toLast key: [UInt8]) throws -> Bool {
        if try key.withUnsafeBytes({ try seek(to: $0) }) {
            if key.withUnsafeBytes({ compareBytes(self.key, $0) }) == 0 { return true }
            return try previous()
        }
        return try last()
    }

    /// Moves to the next entry; false (and off the tree) past the last one.
    public func next() throws -> Bool {
        try step(settling: true)
    }

    @inline(__always)
    private func step(settling: Bool) throws -> Bool {
        try checkCurrent()
        guard positioned else { return false }
        if leafIndex + 1 < leafCount {
            leafIndex += 1
            return settling ? try settle() : true
        }
        return try leaveLeaf(forward: true, settling: settling)
    }

    /// Moves to the next entry like `next()`, but without resolving the entry's value: a scan
    /// that reads only some values of the entries it passes (e.g. some columns of a cluster)
    /// skips the overflow pages of the others. Read the value with `currentValue()`; `value`
    /// is only for entries reached by the other moves.
    public func nextKey() throws -> Bool {
        try step(settling: false)
    }

    /// The length in bytes of the value at the cursor, without reading it (an overflow value's
    /// length is recorded in its leaf). Only valid while the cursor stands on an entry.
    public var currentValueLength: Int {
        precondition(positioned, "Cursor.currentValueLength read while the cursor is not on an entry")
        if let leafPage {
            let field = leafPage.leafValueField(leafIndex).0
            return Int(field & ~PageLayout.overflowFlag)
        }
        return leafNode.unsafelyUnwrapped.values[leafIndex].bytes.count
    }

    /// The value at the cursor, resolving (and checking) an overflow run if the move that
    /// reached the entry did not: use after `nextKey()`. Throws for a damaged overflow reference.
    public func currentValue() throws -> UnsafeRawBufferPointer {
        precondition(positioned, "Cursor.currentValue() called while the cursor is not on an entry")
        try checkCurrent()
        if let leafPage { return try snapshot.leafValue(leafPage, leafIndex) }
        return leafNode.unsafelyUnwrapped.values[leafIndex].bytes
    }

    /// Counts the entries from the first key ≥ `prefix` on whose keys start with `prefix` and
    /// are `keyLength` bytes long (any length when nil), comparing raw key bytes only: no value
    /// is read. Leaves the cursor on the first entry past them (or off the tree).
    public func countEntries(withPrefix prefix: UnsafeRawBufferPointer, keyLength: Int? = nil) throws -> Int {
        var positioned = try seek(to: prefix)
        var count = 0
        let n = prefix.count
        while positioned {
            let key = self.key
            guard key.count >= n, compareBytes(UnsafeRawBufferPointer(rebasing: key[0..<n]), prefix) == 0 else { break }
            if keyLength == nil || key.count == keyLength! { count &+= 1 }
            positioned = try nextKey()
        }
        return count
    }

    /// Moves to the previous entry; false (and off the tree) before the first one.
    public func previous() throws -> Bool {
        try checkCurrent()
        guard positioned else { return false }
        if leafIndex > 0 {
            leafIndex -= 1
            return try settle()
        }
        return try leaveLeaf(forward: false, settling: true)
    }
}
