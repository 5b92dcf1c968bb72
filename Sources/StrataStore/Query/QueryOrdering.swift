import Foundation

// Sorting and distinct for query results. Both run after the predicate, in the order they were
// chained (`sorted(a).distinct(b).sorted(c)`); sorts are stable, so a later sort keeps the
// earlier order among its ties. The last sort of a chain is lazy: asking for the first k
// objects selects them in one pass (O(n log k)) instead of sorting all n.
//
// Order: nil first in ascending order (last in descending), then values; numbers by value,
// strings and data by their bytes (UTF-8: Unicode scalar order), dates by time, booleans false
// before true, ObjectIds and UUIDs by their bytes. NaN sorts after nil and before numbers.

/// One sort key: a key path from the object (through to-one links) and a direction.
package struct SortKey: Sendable, Hashable {
    package var path: [String]
    package var ascending: Bool
    package init(path: [String], ascending: Bool) {
        self.path = path
        self.ascending = ascending
    }
}

/// A step after the predicate.
package enum QueryOrdering: Sendable, Hashable {
    case sort([SortKey])
    case distinct([[String]])
}
