// Ordered iteration over one tree, forwards and backwards. A cursor keeps the path from the
// root to its current entry; each level is a page of the snapshot or, inside a write
// transaction, an in-memory node that the transaction has modified.

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
    private var levels: [Level] = []
    private var indices: [Int] = []
    private var positioned = false
    private let stamp: () -> Bool

    init(snapshot: Snapshot, rootPage: PageNumber, rootNode: Node?, isCurrent: @escaping () -> Bool) {
        self.snapshot = snapshot
        self.rootPage = rootPage
        self.rootNode = rootNode
        self.stamp = isCurrent
        levels.reserveCapacity(8)
        indices.reserveCapacity(8)
    }

    /// The key at the cursor. Only valid after a move that returned true.
    public var key: UnsafeRawBufferPointer {
        precondition(positioned, "Cursor.key read while the cursor is not on an entry; check the Bool its move returned")
        switch levels[levels.count - 1] {
        case .page(let view): return view.leafKey(indices[indices.count - 1])
        case .node(let node): return node.keys[indices[indices.count - 1]]
        }
    }

    /// The value at the cursor. Only valid after a move that returned true.
    public var value: UnsafeRawBufferPointer {
        precondition(positioned, "Cursor.value read while the cursor is not on an entry; check the Bool its move returned")
        switch levels[levels.count - 1] {
        case .page(let view):
            // Overflow runs were checked when the cursor arrived on the entry.
            return (try? snapshot.leafValue(view, indices[indices.count - 1])) ?? UnsafeRawBufferPointer(start: nil, count: 0)
        case .node(let node): return node.values[indices[indices.count - 1]].bytes
        }
    }

    private func checkCurrent() throws {
        guard stamp() else { throw StorageError.cursorInvalidated }
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

    private func branchKey(_ level: Level, _ index: Int) -> UnsafeRawBufferPointer {
        switch level {
        case .page(let view): view.branchKey(index)
        case .node(let node): node.keys[index]
        }
    }

    /// Descends from `levels.last` choosing the first (or last) entry at each level.
    private func descend(toLast: Bool) throws -> Bool {
        while let top = levels.last, !top.isLeaf {
            guard top.count > 0 else { throw StorageError.corrupted(page: nil, reason: "empty branch node") }
            let next = try child(of: top, at: indices[indices.count - 1])
            levels.append(next)
            indices.append(toLast ? max(next.count - 1, 0) : 0)
            guard levels.count <= Snapshot.maximumDepth else { throw StorageError.corrupted(page: rootPage, reason: "tree too deep") }
        }
        return try settle()
    }

    /// Validates the current leaf entry (resolving an overflow value once).
    private func settle() throws -> Bool {
        guard let top = levels.last, let index = indices.last, index >= 0, index < top.count else {
            positioned = false
            return false
        }
        if case .page(let view) = top { _ = try snapshot.leafValue(view, index) }
        positioned = true
        return true
    }

    /// Moves to the first entry; false when the tree is empty.
    public func first() throws -> Bool {
        try checkCurrent()
        levels.removeAll(keepingCapacity: true); indices.removeAll(keepingCapacity: true)
        guard let root = try rootLevel() else { positioned = false; return false }
        levels.append(root); indices.append(0)
        if root.count == 0 { positioned = false; return false }
        return try descend(toLast: false)
    }

    /// Moves to the last entry; false when the tree is empty.
    public func last() throws -> Bool {
        try checkCurrent()
        levels.removeAll(keepingCapacity: true); indices.removeAll(keepingCapacity: true)
        guard let root = try rootLevel() else { positioned = false; return false }
        levels.append(root); indices.append(max(root.count - 1, 0))
        if root.count == 0 { positioned = false; return false }
        return try descend(toLast: true)
    }

    /// Moves to the first entry whose key is ≥ `key`; false when there is none.
    public func seek(to key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try seek(to: $0) }
    }

    /// Moves to the first entry whose key is ≥ `key`; false when there is none.
    public func seek(to key: UnsafeRawBufferPointer) throws -> Bool {
        try checkCurrent()
        levels.removeAll(keepingCapacity: true); indices.removeAll(keepingCapacity: true)
        guard var level = try rootLevel() else { positioned = false; return false }
        while true {
            guard levels.count < Snapshot.maximumDepth else { throw StorageError.corrupted(page: rootPage, reason: "tree too deep") }
            levels.append(level)
            if level.isLeaf {
                let index: Int
                switch level {
                case .page(let view): index = Snapshot.leafSearch(view, key).0
                case .node(let node): index = node.search(key).0
                }
                indices.append(index)
                if index < level.count { return try settle() }
                indices[indices.count - 1] = level.count - 1
                positioned = level.count > 0
                return positioned ? try next() : false
            }
            guard level.count > 0 else { throw StorageError.corrupted(page: nil, reason: "empty branch node") }
            let index: Int
            switch level {
            case .page(let view): index = Snapshot.childIndex(view, key)
            case .node(let node): index = node.childIndex(key)
            }
            indices.append(index)
            level = try child(of: level, at: index)
        }
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
        try checkCurrent()
        guard positioned else { return false }
        var depth = levels.count - 1
        while depth >= 0 {
            if indices[depth] + 1 < levels[depth].count {
                indices[depth] += 1
                levels.removeSubrange((depth + 1)...)
                indices.removeSubrange((depth + 1)...)
                return try descend(toLast: false)
            }
            depth -= 1
        }
        positioned = false
        return false
    }

    /// Moves to the previous entry; false (and off the tree) before the first one.
    public func previous() throws -> Bool {
        try checkCurrent()
        guard positioned else { return false }
        var depth = levels.count - 1
        while depth >= 0 {
            if indices[depth] > 0 {
                indices[depth] -= 1
                levels.removeSubrange((depth + 1)...)
                indices.removeSubrange((depth + 1)...)
                return try descend(toLast: true)
            }
            depth -= 1
        }
        positioned = false
        return false
    }
}
