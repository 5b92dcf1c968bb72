// The order of a map's keys (`Map<String, V>`): by their UTF-8 bytes, as RealmSwift orders
// them and as queries compare strings. The store keeps a map's keys in this order, each once;
// lookups, merges and checks all use these functions so that they agree.

/// How a map's keys are ordered and found.
package enum MapKeyOrder {
    /// Whether `a` comes before `b`.
    @inline(__always)
    package static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// Whether `keys` are in ascending order, each once.
    package static func isStrictlyAscending<C: Collection>(_ keys: C) -> Bool where C.Element == String {
        !zip(keys, keys.dropFirst()).contains { !precedes($0, $1) }
    }

    /// Where `key` is, or would go, among `keys` (in order; `text` gives each element's key),
    /// and whether it is there.
    package static func position<C: RandomAccessCollection>(of key: String, in keys: C, _ text: (C.Element) -> String)
        -> (position: Int, found: Bool) where C.Index == Int {
        var low = keys.startIndex, high = keys.endIndex
        while low < high {
            let middle = (low + high) / 2
            if precedes(text(keys[middle]), key) { low = middle + 1 } else { high = middle }
        }
        return (low, low < keys.endIndex && text(keys[low]).utf8.elementsEqual(key.utf8))
    }

    /// `position(of:in:_:)` among plain keys.
    package static func position(of key: String, in keys: [String]) -> (position: Int, found: Bool) {
        position(of: key, in: keys) { $0 }
    }
}
