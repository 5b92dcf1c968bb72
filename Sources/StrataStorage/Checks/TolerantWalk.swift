// Reading what a damaged tree still holds: a walk over a tree that visits every entry it can
// read and reports each subtree it cannot (a page that fails its checks, a page number out of
// range, a page reached twice, an overflow value whose run is damaged) instead of throwing.
// Salvage uses it; ordinary reads never do (they stop at the first damaged page with
// `StorageError.corrupted`).

/// A part of a tree that a tolerant walk could not read: the page at fault and the range of
/// keys the tree's branch pages give it (every entry with a key in the range is lost).
public struct UnreadableSubtree: Sendable, Equatable, CustomStringConvertible {
    /// The tree's name ("catalog" for the catalog of trees).
    public let tree: String
    /// The page that could not be read.
    public let page: UInt64
    /// Why it could not be read.
    public let reason: String
    /// The lost keys are at or above this key; nil: from the tree's first key.
    public let lowerKey: [UInt8]?
    /// The lost keys are below this key; nil: up to the tree's last key.
    public let upperKey: [UInt8]?

    public var description: String { "tree '\(tree)', page \(page): \(reason)" }

    /// Whether a key in `lower...upper` (bytes compared lexicographically) may be lost.
    package func overlaps(lower: [UInt8], upper: [UInt8]) -> Bool {
        if let lowerKey, lexicographicallyPrecedes(upper, lowerKey) { return false }
        if let upperKey, !lexicographicallyPrecedes(lower, upperKey) { return false }
        return true
    }
}

private func lexicographicallyPrecedes(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

extension ReadTransaction {
    /// Calls `visit` with every entry of `tree` that can be read, in key order, and returns
    /// the subtrees that could not be read. Never throws for damage in the tree; throws only
    /// when the transaction is closed or the tree is not this transaction's. The buffers stay
    /// valid while the transaction is open.
    package func walkTolerantly(_ tree: Tree, _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) throws -> [UnreadableSubtree] {
        let root = try info(tree).root
        var walk = TolerantWalk(snapshot: snapshot, name: tree.name)
        walk.walk(root, lower: nil, upper: nil, depth: 0, visit)
        return walk.lost
    }

    /// The catalog's entries (tree names) that can be read, and the parts of the catalog that
    /// cannot. A name in a lost part is a tree that cannot be found.
    package func treeNamesTolerantly() -> (names: [String], lost: [UnreadableSubtree]) {
        var names: [String] = []
        var walk = TolerantWalk(snapshot: snapshot, name: "catalog")
        walk.walk(snapshot.meta.catalogRoot, lower: nil, upper: nil, depth: 0) { key, _ in
            names.append(String(decoding: key, as: UTF8.self))
        }
        return (names, walk.lost)
    }

    /// The pages of `tree` in the order the walk reads them (the root first; tree pages and
    /// the first page of each overflow run), for tests that damage one tree on purpose.
    package func pageNumbers(of tree: Tree) throws -> [UInt64] {
        let root = try info(tree).root
        var walk = TolerantWalk(snapshot: snapshot, name: tree.name)
        walk.walk(root, lower: nil, upper: nil, depth: 0) { _, _ in }
        return walk.order
    }

    /// The pages of the catalog of trees, the root first, for tests.
    package var catalogPageNumbers: [UInt64] {
        var walk = TolerantWalk(snapshot: snapshot, name: "catalog")
        walk.walk(snapshot.meta.catalogRoot, lower: nil, upper: nil, depth: 0) { _, _ in }
        return walk.order
    }
}

private struct TolerantWalk {
    let snapshot: Snapshot
    let name: String
    var lost: [UnreadableSubtree] = []
    /// Pages already walked: a damaged branch that points at a page twice (or at an ancestor)
    /// would otherwise make the walk repeat or never end.
    var visited = Set<UInt64>()
    /// The pages walked, in order, with the first page of each overflow run read.
    var order: [UInt64] = []

    init(snapshot: Snapshot, name: String) {
        self.snapshot = snapshot
        self.name = name
    }

    mutating func lose(_ page: UInt64, _ reason: String, _ lower: [UInt8]?, _ upper: [UInt8]?) {
        lost.append(UnreadableSubtree(tree: name, page: page, reason: reason, lowerKey: lower, upperKey: upper))
    }

    mutating func walk(_ page: UInt64, lower: [UInt8]?, upper: [UInt8]?, depth: Int,
                       _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) {
        guard page != 0 else { return }
        guard depth < Snapshot.maximumDepth else { return lose(page, "the tree is deeper than \(Snapshot.maximumDepth) levels", lower, upper) }
        guard visited.insert(page).inserted else { return lose(page, "the page is reached twice", lower, upper) }
        order.append(page)
        let view: PageView
        do { view = try snapshot.treePage(page) } catch {
            return lose(page, Self.reason(error), lower, upper)
        }
        if view.isLeaf {
            for i in 0..<view.count {
                let key = view.leafKey(i)
                do {
                    let (field, pointer) = view.leafValueField(i)
                    if field & PageLayout.overflowFlag != 0 { order.append(pointer.uint64(at: 0)) }
                    let value = try snapshot.leafValue(view, i)
                    visit(key, value)
                } catch {
                    let (_, pointer) = view.leafValueField(i)
                    let run = pointer.uint64(at: 0)
                    lose(run, "overflow value: \(Self.reason(error))", [UInt8](key), [UInt8](key) + [0])
                }
            }
            return
        }
        guard view.count > 0 else { return lose(page, "empty branch page", lower, upper) }
        for i in 0..<view.count {
            let childLower: [UInt8]? = i == 0 ? lower : [UInt8](view.branchKey(i))
            let childUpper: [UInt8]? = i + 1 < view.count ? [UInt8](view.branchKey(i + 1)) : upper
            walk(view.branchChild(i), lower: childLower, upper: childUpper, depth: depth + 1, visit)
        }
    }

    static func reason(_ error: any Error) -> String {
        if case StorageError.corrupted(_, let reason) = error { return reason }
        return "\(error)"
    }
}
