import Foundation

/// The values of one sort key for the objects being ordered, by position.
enum SortColumn {
    case int([Int64], nulls: [Bool]?)
    case double([Double], nulls: [Bool]?)
    case general([StoreValue])

    /// -1, 0 or 1 comparing the values at positions `a` and `b` (ascending).
    @inline(__always)
    func compare(_ a: Int, _ b: Int) -> Int {
        switch self {
        case .int(let values, let nulls):
            if let nulls, nulls[a] || nulls[b] { return nulls[a] == nulls[b] ? 0 : (nulls[a] ? -1 : 1) }
            let x = values[a], y = values[b]
            return x < y ? -1 : (x == y ? 0 : 1)
        case .double(let values, let nulls):
            if let nulls, nulls[a] || nulls[b] { return nulls[a] == nulls[b] ? 0 : (nulls[a] ? -1 : 1) }
            return SortColumn.compare(values[a], values[b])
        case .general(let values):
            return SortColumn.compare(values[a], values[b])
        }
    }

    @inline(__always)
    static func compare(_ x: Double, _ y: Double) -> Int {
        if x < y { return -1 }
        if x > y { return 1 }
        if x == y { return 0 }
        return x.isNaN ? (y.isNaN ? 0 : -1) : 1
    }

    static func compare(_ x: StoreValue, _ y: StoreValue) -> Int {
        switch (x, y) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        default:
            if let order = QueryValueComparison.order(x, y) { return order }
            // Values of different kinds (a mixed property) sort by kind.
            if let order = QueryValueComparison.rankOrder(x, y) { return order }
            if case .typedLink(let a, let b) = x, case .typedLink(let c, let d) = y {
                return a != c ? (a < c ? -1 : 1) : (b == d ? 0 : (b < d ? -1 : 1))
            }
            // Unordered numbers (NaN) sort first among values.
            let xNaN = QueryValueComparison.isNumeric(x) && QueryValueComparison.order(x, x) == nil
            let yNaN = QueryValueComparison.isNumeric(y) && QueryValueComparison.order(y, y) == nil
            if xNaN != yNaN { return xNaN ? -1 : 1 }
            return 0
        }
    }
}

/// A strict order on positions: the sort keys, then position (so sorting is stable).
struct PositionOrder {
    let columns: [SortColumn]
    let ascending: [Bool]

    @inline(__always)
    func less(_ a: Int32, _ b: Int32) -> Bool {
        for i in 0..<columns.count {
            let c = columns[i].compare(Int(a), Int(b))
            if c != 0 { return ascending[i] ? c < 0 : c > 0 }
        }
        return a < b
    }
}

/// One object's sort key when a single number, date or bool property decides: a rank (nil, NaN,
/// value), the value mapped to an unsigned integer that orders like it, and the position
/// (ties keep their order). Descending sorts invert rank and value.
struct SortEntry {
    var rank: UInt32
    var position: Int32
    var value: UInt64

    @inline(__always)
    static func < (a: SortEntry, b: SortEntry) -> Bool {
        if a.rank != b.rank { return a.rank < b.rank }
        if a.value != b.value { return a.value < b.value }
        return a.position < b.position
    }

    /// An integer's order-preserving unsigned form.
    @inline(__always)
    static func ordered(_ v: Int64) -> UInt64 { UInt64(bitPattern: v) ^ 0x8000_0000_0000_0000 }

    /// A double's order-preserving unsigned form (-0 and +0 are the same; NaN is ranked apart).
    @inline(__always)
    static func ordered(_ v: Double) -> UInt64 {
        let bits = (v == 0 ? 0.0 : v).bitPattern
        return bits & 0x8000_0000_0000_0000 != 0 ? ~bits : bits | 0x8000_0000_0000_0000
    }

    @inline(__always)
    init(position: Int, null: Bool, nan: Bool = false, value: UInt64, ascending: Bool) {
        let rank: UInt32 = null ? 0 : (nan ? 1 : 2)
        self.rank = ascending ? rank : 2 - rank
        self.position = Int32(truncatingIfNeeded: position)
        self.value = null || nan ? 0 : (ascending ? value : ~value)
    }
}

/// Rearranges `entries[range]` so that its first `count` elements are its smallest, in any
/// order (quickselect, expected linear time).
func selectSmallest(_ entries: inout [SortEntry], in range: Range<Int>, count: Int) {
    guard count > 0, count < range.count else { return }
    let target = range.lowerBound + count - 1
    var low = range.lowerBound, high = range.upperBound - 1
    entries.withUnsafeMutableBufferPointer { a in
        while low < high {
            let mid = low + (high - low) / 2
            // Median of three as the pivot.
            if a[mid] < a[low] { a.swapAt(mid, low) }
            if a[high] < a[low] { a.swapAt(high, low) }
            if a[high] < a[mid] { a.swapAt(high, mid) }
            let pivot = a[mid]
            var i = low, j = high
            while i <= j {
                while a[i] < pivot { i += 1 }
                while pivot < a[j] { j -= 1 }
                if i <= j {
                    a.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if target <= j { high = j } else if target >= i { low = i } else { return }
        }
    }
}
