/// The offset between Int primary keys and object keys that the last index lookup showed, and
/// whether guessing with it pays: after 8 misses in a row (keys unrelated to insertion order)
/// the next 1,024 lookups go straight to the index before guessing is tried again.
struct PrimaryKeyGuess {
    private var offset: Int64 = 0
    private var known = false
    private var misses = 0
    private var resting = 0
    private(set) var hits = 0

    /// The key to try for `primaryKey`, or nil to ask the index.
    @inline(__always)
    mutating func key(for primaryKey: Int64) -> Int64? {
        guard known else { return nil }
        if resting > 0 {
            resting -= 1
            return nil
        }
        let (key, overflow) = primaryKey.subtractingReportingOverflow(offset)
        return overflow || key < 0 ? nil : key
    }

    @inline(__always)
    mutating func hit() {
        misses = 0
        hits &+= 1
    }

    mutating func miss() {
        misses += 1
        if misses >= 8 {
            misses = 0
            resting = 1_024
        }
    }

    mutating func learn(primaryKey: Int64, key: Int64) {
        offset = primaryKey &- key
        known = true
    }
}
