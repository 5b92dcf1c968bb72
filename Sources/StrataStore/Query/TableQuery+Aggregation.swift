import Foundation

/// `min`, `max`, `sum` and `average` of a property over query results, ignoring nulls.
extension TableQuery {
    /// The aggregate of the property at `names` over the matching objects, or over `keys` when
    /// given (results that were made distinct). The sum of nothing is 0; the others of nothing
    /// are null. Throws for a property that is not a number (or, for min and max, a date).
    package func aggregate(_ aggregate: QueryAggregate, _ names: [String], keys: [ObjectKey]? = nil) throws -> StoreValue {
        let name = switch aggregate { case .min: "min"; case .max: "max"; case .sum: "sum"; case .average: "average" }
        let path = try valuePath(names, purpose: "compute the \(name)")
        guard let kind = path.kind, kind.isSummable || ((aggregate == .min || aggregate == .max) && kind == .date) else {
            throw QueryError(.typeMismatch, "\(name) applies to numbers\(aggregate == .min || aggregate == .max ? " and dates" : ""); '\(table.schema.name).\(path.text)' is \(path.kind.map { "a \($0)" } ?? "an object")")
        }
        if keys == nil, path.steps.count == 1, let step = path.steps.first, kind != .decimal128, kind != .mixed, !isIndexed {
            return try scanAggregate(aggregate, step)
        }
        let evaluator = GeneralEvaluator()
        var values: [StoreValue] = []
        for key in try keys ?? self.keys() {
            guard let (cluster, row) = try table.locate(key) else { continue }
            values.append(try evaluator.values(of: .path(path), .cluster(cluster, row, table)).first ?? .null)
        }
        return GeneralEvaluator.aggregate(aggregate, values)
    }

    /// The aggregate of a number or date property of the object itself, read from its chunks.
    private func scanAggregate(_ aggregate: QueryAggregate, _ step: QueryStep) throws -> StoreValue {
        var count = 0
        var intSum: Int64 = 0
        var doubleSum = 0.0
        var bestInt: Int64?
        var bestDouble: Double?
        let isInt = step.kind == .int
        let wantsMin = aggregate == .min
        try forEachMatchingCluster(columns: [step.property], keys: false) { cluster, mask in
            let chunk = cluster.columns[step.property]
            let absent = chunk.count == 0 && cluster.count > 0
            for w in 0..<maskWords(cluster.count) {
                var bits = mask[w]
                while bits != 0 {
                    let bit = bits.trailingZeroBitCount
                    bits &= bits &- 1
                    let row = w &* 64 &+ bit
                    if (absent && step.isOptional) || (!absent && chunk.isNull(row) && step.isOptional) { continue }
                    count &+= 1
                    if isInt {
                        let v = chunk.int(row)
                        intSum &+= v
                        if let best = bestInt { if wantsMin ? v < best : v > best { bestInt = v } } else { bestInt = v }
                    } else {
                        let v = step.kind == .float ? Double(chunk.float(row)) : chunk.double(row)
                        doubleSum += v
                        if v.isNaN { continue }
                        if let best = bestDouble { if wantsMin ? v < best : v > best { bestDouble = v } } else { bestDouble = v }
                    }
                }
            }
            return true
        }
        switch aggregate {
        case .sum:
            return isInt ? .int(intSum) : (step.kind == .float ? .float(Float(doubleSum)) : .double(doubleSum))
        case .average:
            guard count > 0 else { return .null }
            return .double(isInt ? Double(intSum) / Double(count) : doubleSum / Double(count))
        case .min, .max:
            if isInt { return bestInt.map { .int($0) } ?? .null }
            guard let best = bestDouble else { return .null }
            switch step.kind {
            case .float: return .float(Float(best))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: best))
            default: return .double(best)
            }
        }
    }
}

/// The aggregate of loose values (the elements of a list of values), ignoring nulls: the sum
/// of nothing is 0, the others of nothing are null. Integers sum in 64 bits (wrapping, as the
/// query aggregates do); a sum with any decimal is a decimal, else with any float or double a
/// double; an average is a double unless a value is a decimal.
package func aggregateValues(_ aggregate: QueryAggregate, _ values: [StoreValue]) -> StoreValue {
    GeneralEvaluator.aggregate(aggregate, values)
}

/// -1, 0 or 1 ordering two values as `Results` sorts them: nil first, then by value (numbers
/// of any kinds by value, strings by their bytes, NaN before other numbers).
package func compareForSorting(_ a: StoreValue, _ b: StoreValue) -> Int {
    SortColumn.compare(a, b)
}
