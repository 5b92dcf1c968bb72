// Which of the queried object's own properties a query's result depends on, so that a commit
// that changed none of them (and inserted and deleted nothing) can be known not to have
// changed the results without running the query again.

extension QueryPredicate {
    /// The names of the properties of the queried object the predicate reads, or nil when it
    /// reads through links, lists of objects or subqueries (then any change may matter).
    package var ownPropertyNames: Set<String>? {
        var names: Set<String> = []
        return collect(into: &names) ? names : nil
    }

    private func collect(into names: inout Set<String>) -> Bool {
        switch self {
        case .constant: return true
        case .comparison(let comparison):
            return comparison.lhs.collect(into: &names) && comparison.rhs.collect(into: &names)
        case .and(let parts), .or(let parts):
            return parts.allSatisfy { $0.collect(into: &names) }
        case .not(let inner):
            return inner.collect(into: &names)
        }
    }
}

extension QueryOperand {
    fileprivate func collect(into names: inout Set<String>) -> Bool {
        switch self {
        case .constant, .list: return true
        case .keyPath(let path), .count(let path):
            guard path.count == 1 else { return false }
            names.insert(path[0])
            return true
        case .aggregate(_, let list, let element):
            guard list.count == 1, element.isEmpty else { return false }
            names.insert(list[0])
            return true
        case .variable, .subqueryCount:
            return false
        }
    }
}

extension QueryOrdering {
    /// The names of the queried object's properties the ordering reads, or nil when it reads
    /// through links.
    package var ownPropertyNames: Set<String>? {
        let paths: [[String]]
        switch self {
        case .sort(let keys): paths = keys.map(\.path)
        case .distinct(let distinct): paths = distinct
        }
        guard paths.allSatisfy({ $0.count == 1 }) else { return nil }
        return Set(paths.map { $0[0] })
    }
}
