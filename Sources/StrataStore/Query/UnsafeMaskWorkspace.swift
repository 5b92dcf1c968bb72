// The match masks a `QueryEvaluator` works in: one block of `levels` masks, one per depth of
// the predicate tree, each `wordsPerLevel` words (one bit per object of a cluster).
//
// Invariants:
// - The owning evaluator holds the only workspace value: it allocates it once, grows it with
//   `reserve(words:)` and frees it once, from its `deinit`. No copy outlives the evaluator.
// - A mask pointer (`mask(_:)`, `base`) is valid until the next `reserve(words:)` or
//   `deallocate()`; the evaluator uses it only within one `evaluate` call, which reserves
//   first, and the caller reads the result before evaluating the next cluster.
// - Every level has at least `maskWords(count)` words for the cluster being evaluated.

/// A block of per-level mask words, owned by one `QueryEvaluator`.
struct UnsafeMaskWorkspace {
    private let levels: Int
    private var wordsPerLevel: Int
    /// The first level's mask, where an evaluation leaves its result.
    private(set) var base: UnsafeMutablePointer<UInt64>

    /// Allocates `levels` masks of `words` words each.
    init(levels: Int, words: Int) {
        self.levels = levels
        wordsPerLevel = words
        base = .allocate(capacity: levels * words)
    }

    /// Frees the masks; called once, by the owner's `deinit`.
    func deallocate() { base.deallocate() }

    /// Makes each mask at least `words` words, reallocating (and so invalidating every mask
    /// pointer handed out) when they are shorter.
    @inline(__always)
    mutating func reserve(words: Int) {
        if words > wordsPerLevel {
            base.deallocate()
            wordsPerLevel = words
            base = .allocate(capacity: levels * wordsPerLevel)
        }
    }

    /// The mask of depth `level`.
    @inline(__always)
    func mask(_ level: Int) -> UnsafeMutablePointer<UInt64> { base + level &* wordsPerLevel }
}
