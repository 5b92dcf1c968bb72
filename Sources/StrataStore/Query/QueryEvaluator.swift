/// Runs a compiled predicate over whole clusters, producing a mask with one bit per object.
/// Kernels fill their masks from column chunks; general comparisons are tested only on the rows
/// still in play (the right side of an AND sees only what the left side kept).
final class QueryEvaluator {
    let node: QueryNode
    // Alive while used: the session holds its tables for life, and is held while queries run.
    unowned(unsafe) let table: TableAccess
    let general = GeneralEvaluator()
    private var workspace: UnsafeMaskWorkspace
    /// Objects tested one at a time by general comparisons (kernels are not counted: they
    /// read columns, not objects).
    private(set) var objectsTested = 0

    init(node: QueryNode, table: TableAccess) {
        self.node = node
        self.table = table
        workspace = UnsafeMaskWorkspace(levels: node.depth + 1, words: maskWords(Cluster.capacity))
    }

    deinit {
        workspace.deallocate()
    }

    /// The matches among the objects of `cluster`: `maskWords(cluster.count)` words.
    func evaluate(_ cluster: ClusterView) throws -> UnsafeMutablePointer<UInt64> {
        workspace.reserve(words: maskWords(cluster.count))
        try evaluate(node, level: 0, cluster: cluster, only: nil)
        return workspace.base
    }

    /// Whether one object matches (used to confirm candidates an index produced).
    func matches(_ cluster: ClusterView, row: Int) throws -> Bool {
        objectsTested &+= 1
        return try general.matches(node, .cluster(cluster, row, table))
    }

    private func mask(_ level: Int) -> UnsafeMutablePointer<UInt64> { workspace.mask(level) }

    private func fillAll(_ out: UnsafeMutablePointer<UInt64>, count: Int) {
        let words = maskWords(count)
        for w in 0..<words { out[w] = ~0 }
        let tail = count & 63
        if tail != 0 { out[words - 1] = (1 &<< UInt64(tail)) &- 1 }
    }

    private func evaluate(_ node: QueryNode, level: Int, cluster: ClusterView, only: UnsafeMutablePointer<UInt64>?) throws {
        let out = mask(level)
        let count = cluster.count
        let words = maskWords(count)
        switch node {
        case .constant(let value):
            if value { fillAll(out, count: count) } else { for w in 0..<words { out[w] = 0 } }
        case .kernel(let kernel):
            if !kernel.fill(cluster.columns[kernel.column], rows: 0..<count, into: out) {
                try generalRows(kernel.fallback, cluster: cluster, into: out, only: only)
            }
        case .general(let comparison):
            try generalRows(comparison, cluster: cluster, into: out, only: only)
        case .and(let parts):
            try evaluate(parts[0], level: level, cluster: cluster, only: only)
            let scratch = mask(level + 1)
            for part in parts.dropFirst() {
                var any: UInt64 = 0
                for w in 0..<words { any |= out[w] }
                if any == 0 { return }
                try evaluate(part, level: level + 1, cluster: cluster, only: out)
                for w in 0..<words { out[w] &= scratch[w] }
            }
        case .or(let parts):
            try evaluate(parts[0], level: level, cluster: cluster, only: only)
            let scratch = mask(level + 1)
            for part in parts.dropFirst() {
                try evaluate(part, level: level + 1, cluster: cluster, only: only)
                for w in 0..<words { out[w] |= scratch[w] }
            }
        case .not(let inner):
            try evaluate(inner, level: level, cluster: cluster, only: only)
            let scratch = mask(level + 1)
            fillAll(scratch, count: count)
            for w in 0..<words { out[w] = ~out[w] & scratch[w] & (only?[w] ?? ~0) }
        }
    }

    private func generalRows(_ comparison: GeneralComparison, cluster: ClusterView, into out: UnsafeMutablePointer<UInt64>,
                             only: UnsafeMutablePointer<UInt64>?) throws {
        let count = cluster.count
        for w in 0..<maskWords(count) {
            var bits: UInt64 = 0
            var candidates = only?[w] ?? ~0
            if w == maskWords(count) - 1, count & 63 != 0 { candidates &= (1 &<< UInt64(count & 63)) &- 1 }
            while candidates != 0 {
                let bit = candidates.trailingZeroBitCount
                candidates &= candidates &- 1
                objectsTested &+= 1
                if try general.matches(comparison, .cluster(cluster, w &* 64 &+ bit, table)) { bits |= 1 &<< UInt64(bit) }
            }
            out[w] = bits
        }
    }
}
