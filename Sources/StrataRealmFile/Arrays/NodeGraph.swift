/// Reads nodes from a mapped file and walks Realm's two kinds of tree (B+trees and cluster
/// trees) without trusting the file.
///
/// Every walk keeps the set of nodes it has entered and fails on a node seen twice, so a
/// cycle, or a node shared by two parents (which Realm never writes), cannot make it loop or
/// blow up; depth is capped as well.
final class NodeGraph {
    let file: FileMapping

    /// Deeper trees than this cannot hold a file's worth of elements (each level multiplies by
    /// at least two), so a deeper one is damaged.
    static let maximumTreeDepth = 48

    init(file: FileMapping) {
        self.file = file
    }

    /// The node at `ref`.
    func node(_ ref: Int) throws -> Node {
        try Node(file: file, ref: ref)
    }

    /// The node at element `index` of `parent`, which must be a ref.
    func child(of parent: Node, at index: Int) throws -> Node? {
        guard let ref = try parent.ref(at: index) else { return nil }
        return try node(ref)
    }

    /// The leaves of the B+tree rooted at `root`, in element order.
    ///
    /// An inner node (flagged as such) holds: at 0 the child offsets (a ref) or, tagged, the
    /// number of elements in every child but the last; then the children; last, tagged, the
    /// number of elements in the subtree. Leaves are whatever node the element type uses.
    func bPlusTreeLeaves(root: Int) throws -> [Node] {
        // Most collections fit one leaf: no walk to track.
        let rootNode = try node(root)
        if !rootNode.isInnerBPlusTreeNode { return [rootNode] }
        var leaves: [Node] = []
        var visited: Set<Int> = []
        try collectLeaves(ref: root, depth: 0, visited: &visited, into: &leaves)
        return leaves
    }

    private func collectLeaves(ref: Int, depth: Int, visited: inout Set<Int>, into leaves: inout [Node]) throws {
        guard depth < NodeGraph.maximumTreeDepth else {
            throw RealmFileError.corrupted(reason: "a B+tree is deeper than \(NodeGraph.maximumTreeDepth) levels at node \(ref)")
        }
        guard visited.insert(ref).inserted else {
            throw RealmFileError.corrupted(reason: "node \(ref) is reached twice in one B+tree (a cycle or a shared node)")
        }
        let current = try node(ref)
        guard current.isInnerBPlusTreeNode else {
            leaves.append(current)
            return
        }
        guard current.count >= 2 else {
            throw RealmFileError.corrupted(reason: "the B+tree inner node at \(ref) has \(current.count) elements")
        }
        for index in 1..<(current.count - 1) {
            guard let childRef = try current.ref(at: index) else {
                throw RealmFileError.corrupted(reason: "the B+tree inner node at \(ref) has a null child")
            }
            try collectLeaves(ref: childRef, depth: depth + 1, visited: &visited, into: &leaves)
        }
    }

    /// One leaf of a cluster tree and the key offset its own keys are relative to.
    struct ClusterLeaf {
        let node: Node
        let keyOffset: Int64
    }

    /// The leaves (clusters) of the cluster tree rooted at `root`, in key order.
    ///
    /// An inner node holds: at 0 a ref to its children's key offsets, or 0 when child `i`'s
    /// offset is `i << (8 × depth)` (Realm's clusters hold up to 256 objects); at 1 the subtree
    /// depth, tagged; at 2 the number of objects in the subtree, tagged; then the children. A
    /// leaf holds at 0 its object keys (a ref), or tagged, the number of objects when their
    /// keys are 0, 1, 2…; then one leaf per column, at the column's index + 1.
    func clusterLeaves(root: Int) throws -> [ClusterLeaf] {
        var leaves: [ClusterLeaf] = []
        var visited: Set<Int> = []
        try collectClusters(ref: root, keyOffset: 0, depth: 0, visited: &visited, into: &leaves)
        return leaves
    }

    private func collectClusters(ref: Int, keyOffset: Int64, depth: Int, visited: inout Set<Int>,
                                 into leaves: inout [ClusterLeaf]) throws {
        guard depth < NodeGraph.maximumTreeDepth else {
            throw RealmFileError.corrupted(reason: "a cluster tree is deeper than \(NodeGraph.maximumTreeDepth) levels at node \(ref)")
        }
        guard visited.insert(ref).inserted else {
            throw RealmFileError.corrupted(reason: "node \(ref) is reached twice in one cluster tree (a cycle or a shared node)")
        }
        let current = try node(ref)
        guard current.isInnerBPlusTreeNode else {
            guard current.hasRefs, current.count >= 1 else {
                throw RealmFileError.corrupted(reason: "the cluster at \(ref) is not an array of column refs")
            }
            leaves.append(ClusterLeaf(node: current, keyOffset: keyOffset))
            return
        }
        guard current.count >= 3 else {
            throw RealmFileError.corrupted(reason: "the cluster tree inner node at \(ref) has \(current.count) elements")
        }
        let subtreeDepth = try current.tagged(at: 1)
        guard subtreeDepth >= 1, subtreeDepth < 8 else {
            throw RealmFileError.corrupted(reason: "the cluster tree inner node at \(ref) claims depth \(subtreeDepth)")
        }
        let offsets = try child(of: current, at: 0)
        let childCount = current.count - 3
        if let offsets, offsets.count < childCount {
            throw RealmFileError.corrupted(reason: "the cluster tree inner node at \(ref) has fewer key offsets than children")
        }
        for index in 0..<childCount {
            guard let childRef = try current.ref(at: index + 3) else {
                throw RealmFileError.corrupted(reason: "the cluster tree inner node at \(ref) has a null child")
            }
            let childOffset = try offsets?.unsignedInteger(at: index) ?? (Int64(index) << (8 * subtreeDepth))
            let (sum, overflow) = keyOffset.addingReportingOverflow(childOffset)
            guard !overflow else {
                throw RealmFileError.corrupted(reason: "object key offsets overflow in the cluster tree at \(ref)")
            }
            try collectClusters(ref: childRef, keyOffset: sum, depth: depth + 1, visited: &visited, into: &leaves)
        }
    }

    /// The object keys of a cluster leaf.
    func objectKeys(of leaf: ClusterLeaf) throws -> [Int64] {
        let first = try leaf.node.integer(at: 0)
        if first & 1 == 1 {
            let count = first >> 1
            guard count >= 0, count <= Int64(Node.maximumZeroWidthCount) else {
                throw RealmFileError.corrupted(reason: "the cluster at \(leaf.node.ref) claims \(count) objects")
            }
            return (0..<count).map { leaf.keyOffset &+ $0 }
        }
        guard let keys = try child(of: leaf.node, at: 0) else { return [] }
        return try (0..<keys.count).map { leaf.keyOffset &+ (try keys.unsignedInteger(at: $0)) }
    }

    /// The number of objects in the cluster tree rooted at `root`, without walking it.
    func clusterTreeSize(root: Int) throws -> Int {
        let top = try node(root)
        if top.isInnerBPlusTreeNode {
            guard top.count >= 3 else {
                throw RealmFileError.corrupted(reason: "the cluster tree inner node at \(root) has \(top.count) elements")
            }
            return Int(try top.tagged(at: 2))
        }
        return try objectKeys(of: ClusterLeaf(node: top, keyOffset: 0)).count
    }
}

extension Node {
    /// The most elements a node whose elements take no bytes may claim. Realm's B+tree leaves
    /// hold at most 1,000 elements and its clusters 256, so a larger count of zero-width
    /// elements (which costs the file nothing but would cost the reader memory) is damage.
    static let maximumZeroWidthCount = 1 << 16
}
