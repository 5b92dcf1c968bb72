import Foundation

/// Evaluates compiled predicates one object at a time: the general form for comparisons the
/// column kernels do not cover (links, lists, aggregates, subqueries, string options), and the
/// reference for everything else.
final class GeneralEvaluator {
    /// The current element of each SUBQUERY variable, by slot.
    private var variables: [QueryRow] = []
    /// Inverse relationships read so far, by origin table and property: who links to whom,
    /// and the session's content serial they were read at (any change reads them again).
    private var inverseMaps: [InverseMapKey: (serial: UInt64, linking: [Int64: [ObjectKey]])] = [:]

    private struct InverseMapKey: Hashable {
        let origin: ObjectIdentifier
        let property: Int
    }
    func matches(_ node: QueryNode, _ row: QueryRow) throws -> Bool {
        switch node {
        case .constant(let value): return value
        case .and(let parts):
            for part in parts where try !matches(part, row) { return false }
            return true
        case .or(let parts):
            for part in parts where try matches(part, row) { return true }
            return false
        case .not(let inner): return try !matches(inner, row)
        case .kernel(let kernel): return try matches(kernel.fallback, row)
        case .general(let comparison): return try matches(comparison, row)
        }
    }

    func matches(_ comparison: GeneralComparison, _ row: QueryRow) throws -> Bool {
        let options = comparison.options
        let op = comparison.op
        var rhsValues: [StoreValue] = []
        var rhsIsList = false
        switch comparison.rhs {
        case .list(let values):
            rhsValues = values
            rhsIsList = true
        case .path(let path) where path.isCollection:
            rhsValues = try values(of: comparison.rhs, row)
            rhsIsList = true
        default:
            rhsValues = try values(of: comparison.rhs, row)
        }
        func test(_ value: StoreValue) -> Bool {
            switch op {
            case .in:
                return rhsValues.contains { QueryValueComparison.equal(value, $0, options: options) }
            case .between:
                guard rhsValues.count == 2,
                      let low = QueryValueComparison.order(value, rhsValues[0], options: options),
                      let high = QueryValueComparison.order(value, rhsValues[1], options: options) else { return false }
                return low >= 0 && high <= 0
            default:
                if rhsIsList { return rhsValues.contains { QueryValueComparison.test(value, op, $0, options: options) } }
                return QueryValueComparison.test(value, op, rhsValues.first ?? .null, options: options)
            }
        }
        let lhsValues = try values(of: comparison.lhs, row)
        let lhsIsCollection: Bool
        if case .path(let path) = comparison.lhs { lhsIsCollection = path.isCollection } else { lhsIsCollection = false }
        guard lhsIsCollection else { return test(lhsValues.first ?? .null) }
        switch comparison.modifier {
        case .any: return lhsValues.contains(where: test)
        case .all: return lhsValues.allSatisfy(test)
        case .none: return !lhsValues.contains(where: test)
        }
    }

    /// The values an operand has for `row`: one for a single value, any number for a path
    /// through a list.
    func values(of source: QueryValueSource, _ row: QueryRow) throws -> [StoreValue] {
        switch source {
        case .constant(let value): return [value]
        case .list(let values): return values
        case .path(let path):
            var out: [StoreValue] = []
            try walk(path.steps, 0, from: start(path, row), collection: path.isCollection, into: &out)
            if out.isEmpty && !path.isCollection { out.append(.null) }
            return out
        case .count(let path):
            var total = 0
            try forEachListOwner(path, row) { step, key in
                total += try elementCount(of: step, key)
            }
            return [.int(Int64(total))]
        case .aggregate(let aggregate, let list, let element):
            var elements: [StoreValue] = []
            try forEachListOwner(list, row) { step, key in
                let items = try self.elements(of: step, key)
                if element.isEmpty {
                    elements.append(contentsOf: items)
                } else if let target = list.steps.last?.target {
                    for case .link(let k) in items {
                        try walk(element, 0, from: .object(target, k), collection: false, into: &elements)
                    }
                }
            }
            return [Self.aggregate(aggregate, elements)]
        case .subqueryCount(let list, let slot, let predicate):
            var count = 0
            guard let last = list.steps.last else { return [.int(0)] }
            try forEachListOwner(list, row) { step, key in
                let items = try elements(of: step, key)
                while variables.count <= slot { variables.append(.value(.null)) }
                for item in items {
                    if last.kind == .link {
                        guard case .link(let k) = item, let target = last.target else { continue }
                        variables[slot] = .object(target, k)
                    } else {
                        variables[slot] = .value(item)
                    }
                    if try matches(predicate, row) { count += 1 }
                }
            }
            return [.int(Int64(count))]
        }
    }

    private func start(_ path: QueryPath, _ row: QueryRow) -> QueryRow {
        switch path.origin {
        case .root: return row
        case .variable(let slot): return slot < variables.count ? variables[slot] : .value(.null)
        }
    }

    /// Calls `body` with the last step of a path to a list and the key of each object whose
    /// list (or linking objects) the path reaches.
    private func forEachListOwner(_ path: QueryPath, _ row: QueryRow,
                                  _ body: (QueryStep, ObjectKey) throws -> Void) throws {
        guard let last = path.steps.last else { return }
        var owners: [StoreValue] = []
        let origin = start(path, row)
        if path.steps.count == 1 {
            if let (_, key) = identity(origin) { try body(last, key) }
            return
        }
        try walk(Array(path.steps.dropLast()), 0, from: origin, collection: true, into: &owners)
        for case .link(let key) in owners {
            try body(last, key)
        }
    }

    /// The elements of the list `step` reads on the object `key` of `step.table`: the stored
    /// list, or for an inverse relationship the linking objects (as links, in key order).
    private func elements(of step: QueryStep, _ key: ObjectKey) throws -> [StoreValue] {
        if step.isMapKeys { return try step.table.mapKeys(key, property: step.property).map(StoreValue.string) }
        guard step.isInverse else { return try step.table.list(key, property: step.property) }
        return try linkingObjects(step, key).map { .link($0) }
    }

    private func elementCount(of step: QueryStep, _ key: ObjectKey) throws -> Int {
        guard step.isInverse else { return try step.table.listCount(key, property: step.property) }
        return try linkingObjects(step, key).count
    }

    /// The objects of the origin table whose property links to `key`, read once per content
    /// serial for the whole origin table (one pass instead of one per object asked about).
    private func linkingObjects(_ step: QueryStep, _ key: ObjectKey) throws -> [ObjectKey] {
        guard let origin = step.target else { return [] }
        let mapKey = InverseMapKey(origin: ObjectIdentifier(origin), property: step.property)
        let serial = origin.session.contentSerial
        if let cached = inverseMaps[mapKey], cached.serial == serial { return cached.linking[key.rawValue] ?? [] }
        let linking = try origin.inverseLinks(property: step.property)
        inverseMaps[mapKey] = (serial, linking)
        return linking[key.rawValue] ?? []
    }

    private func identity(_ row: QueryRow) -> (TableAccess, ObjectKey)? {
        switch row {
        case .cluster(let view, let r, let table): (table, view.key(at: r))
        case .object(let table, let key): (table, key)
        case .value: nil
        }
    }

    /// Appends the values at the end of `steps[index...]` starting from `row`.
    private func walk(_ steps: [QueryStep], _ index: Int, from row: QueryRow, collection: Bool, into out: inout [StoreValue]) throws {
        if index == steps.count {
            switch row {
            case .cluster(let view, let r, _): out.append(.link(view.key(at: r)))
            case .object(_, let key): out.append(.link(key))
            case .value(let value): out.append(value)
            }
            return
        }
        let step = steps[index]
        let isLast = index == steps.count - 1
        var read: [StoreValue]
        switch row {
        case .cluster(let view, let r, _):
            if let mapKey = step.mapKey {
                read = [try Self.mapValue(step, view.key(at: r), mapKey)]
            } else if step.isList {
                read = try elements(of: step, view.key(at: r))
            } else {
                read = [Self.defaulted(try view.column(step.property).value(r, kind: step.kind), step)]
            }
        case .object(let table, let key):
            // Located once: whether the object exists, and where its values are.
            guard let (cluster, r) = try table.locate(key) else { return }
            if let mapKey = step.mapKey {
                read = [try Self.mapValue(step, key, mapKey)]
            } else if step.isList {
                read = try elements(of: step, key)
            } else {
                read = [Self.defaulted(try cluster.column(step.property).value(r, kind: step.kind), step)]
            }
        case .value:
            if !collection { out.append(.null) }
            return
        }
        if !step.mixedPath.isEmpty {
            read = read.flatMap { MixedPathNavigation.values(at: step.mixedPath[...], in: $0) }
            if read.isEmpty && !collection { read = [.null] }
        }
        if isLast {
            out.append(contentsOf: read)
            return
        }
        for value in read {
            if case .link(let key) = value, let target = step.target {
                try walk(steps, index + 1, from: .object(target, key), collection: collection, into: &out)
            } else if !collection {
                out.append(.null)  // a nil link on a to-one path: the value at its end is nil
            }
        }
    }

    /// The value of the map `step` reads on object `key` for `mapKey`; nil when the map has no
    /// such key.
    static func mapValue(_ step: QueryStep, _ key: ObjectKey, _ mapKey: String) throws -> StoreValue {
        let (keys, values) = try step.table.mapEntries(key, property: step.property)
        let (position, found) = MapKeyOrder.position(of: mapKey, in: keys)
        return found ? values[position] : .null
    }

    /// A non-optional property reads as its type's default where nothing was ever stored (a
    /// column a migration added).
    static func defaulted(_ value: StoreValue, _ step: QueryStep) -> StoreValue {
        guard value.isNull, !step.isOptional else { return value }
        return defaultValue(step.kind)
    }

    static func defaultValue(_ kind: PropertyKind) -> StoreValue { StoreValue.defaultValue(of: kind) }
}

extension GeneralEvaluator {
    /// `@min`, `@max`, `@sum` and `@avg` of some values, ignoring nulls: the sum of nothing is
    /// 0, the others of nothing are nil.
    static func aggregate(_ aggregate: QueryAggregate, _ values: [StoreValue]) -> StoreValue {
        let present = values.filter { !$0.isNull }
        switch aggregate {
        case .min, .max:
            var best: StoreValue?
            for value in present {
                if case .typedLink = value { continue }  // a mixed value's object has no order
                guard let current = best else { best = value; continue }
                // Values of different kinds (a mixed list) compare by kind, as they sort.
                guard let order = QueryValueComparison.order(value, current) ?? QueryValueComparison.rankOrder(value, current) else { continue }
                if (aggregate == .min && order < 0) || (aggregate == .max && order > 0) { best = value }
            }
            return best ?? .null
        case .sum:
            return sum(present)
        case .average:
            // Numbers only: a mixed list's other values do not count.
            let present = present.filter(QueryValueComparison.isNumeric)
            guard !present.isEmpty else { return .null }
            if present.contains(where: { if case .decimal128 = $0 { true } else { false } }) {
                guard case .decimal128(let total) = sum(present) else { return .null }
                return .decimal128(total / Decimal128(present.count))
            }
            var total = 0.0
            for value in present { total += QueryValueComparison.double(value) ?? 0 }
            return .double(total / Double(present.count))
        }
    }

    static func sum(_ values: [StoreValue]) -> StoreValue {
        var ints: Int64 = 0
        var doubles = 0.0
        var decimals = Decimal128(0)
        var sawDouble = false, sawDecimal = false
        for value in values {
            switch value {
            case .int(let v): ints &+= v
            case .float(let v): doubles += Double(v); sawDouble = true
            case .double(let v): doubles += v; sawDouble = true
            case .decimal128(let v): decimals += v; sawDecimal = true
            default: break
            }
        }
        if sawDecimal { return .decimal128(decimals + Decimal128(ints) + Decimal128(doubles)) }
        if sawDouble { return .double(doubles + Double(ints)) }
        return .int(ints)
    }

    /// A comparison between two constants.
    static func compareConstants(_ lhs: QueryValueSource, _ op: QueryOperator, _ rhs: QueryValueSource, options: QueryStringOptions) -> Bool {
        let evaluator = GeneralEvaluator()
        let comparison = GeneralComparison(lhs: lhs, op: op, rhs: rhs, options: options, modifier: .any)
        return (try? evaluator.matches(comparison, .value(.null))) ?? false
    }
}
