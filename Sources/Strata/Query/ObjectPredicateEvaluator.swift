import StrataStore

/// Evaluates a parsed string predicate over objects in memory, for collections that no stored
/// query can run over: an unmanaged `List` or `MutableSet` (whose objects may be unmanaged,
/// managed, or both). It reads each property by name (key-value coding) and compares with the
/// store's own rules (`StoredValueRules`), so it answers as a query over the same stored values
/// would.
///
/// Supported: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN` with a literal or
/// argument list or a list property), `AND`/`OR`/`NOT`, `TRUEPREDICATE`/`FALSEPREDICATE`,
/// `BEGINSWITH`/`CONTAINS`/`ENDSWITH`/`LIKE` with `[c]`/`[d]`, key paths through links and
/// lists with `ANY`/`ALL`/`NONE`, `@count`, `@min`/`@max`/`@sum`/`@avg`, and nil. A form it
/// does not support (`SUBQUERY`, `@links`, `LinkingObjects` properties, maps, comparing
/// unmanaged objects) is a `QueryError` of kind `.unsupported` naming it.
struct ObjectPredicateEvaluator {
    /// One value a key path reaches: a stored value, or an object (nil: a nil link).
    private enum Item {
        case value(StoreValue)
        case object(Object?)
    }

    /// The position of the first of `objects` that matches `predicate`; nil when none does.
    func firstIndex(matching predicate: QueryPredicate, in objects: [Object]) throws(QueryError) -> Int? {
        for (index, object) in objects.enumerated() where try matches(predicate, object) { return index }
        return nil
    }

    /// Whether `object` matches `predicate`.
    func matches(_ predicate: QueryPredicate, _ object: Object) throws(QueryError) -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .and(let parts):
            for part in parts where try !matches(part, object) { return false }
            return true
        case .or(let parts):
            for part in parts where try matches(part, object) { return true }
            return false
        case .not(let inner): return try !matches(inner, object)
        case .comparison(let comparison): return try matches(comparison, object)
        }
    }

    private func matches(_ comparison: QueryComparison, _ object: Object) throws(QueryError) -> Bool {
        let options = comparison.options
        let op = comparison.op
        let (lhsValues, lhsIsCollection) = try values(of: comparison.lhs, object)
        var (rhsValues, rhsIsCollection) = try values(of: comparison.rhs, object)
        if case .list = comparison.rhs { rhsIsCollection = true }
        // An unmanaged object has no stored identity: it can be compared with nil only.
        let reachesUnmanaged = lhsValues.contains(Self.unmanagedObject) || rhsValues.contains(Self.unmanagedObject)
        if reachesUnmanaged && !(lhsValues + rhsValues).allSatisfy({ $0 == Self.unmanagedObject || $0.isNull }) {
            throw QueryError(.unsupported, "'\(comparison)' compares an unmanaged object, which has no identity to compare on an unmanaged collection; compare it with nil, or compare one of its properties")
        }
        func test(_ value: StoreValue) -> Bool {
            switch op {
            case .in:
                return rhsValues.contains { StoredValueRules.equal(value, $0, options: options) }
            case .between:
                guard rhsValues.count == 2,
                      let low = StoredValueRules.order(value, rhsValues[0], options: options),
                      let high = StoredValueRules.order(value, rhsValues[1], options: options) else { return false }
                return low >= 0 && high <= 0
            default:
                if rhsIsCollection { return rhsValues.contains { StoredValueRules.test(value, op, $0, options: options) } }
                return StoredValueRules.test(value, op, rhsValues.first ?? .null, options: options)
            }
        }
        guard lhsIsCollection else { return test(lhsValues.first ?? .null) }
        switch comparison.modifier {
        case .any: return lhsValues.contains(where: test)
        case .all: return lhsValues.allSatisfy(test)
        case .none: return !lhsValues.contains(where: test)
        }
    }

    /// The values an operand has for `object`, and whether they came through a list (so that
    /// `ANY`/`ALL`/`NONE` apply).
    private func values(of operand: QueryOperand, _ object: Object) throws(QueryError) -> ([StoreValue], Bool) {
        switch operand {
        case .constant(let value):
            return ([value], false)
        case .list(let values):
            return (values, true)
        case .keyPath(let path):
            let (items, isCollection) = try walk(path, from: object)
            var values: [StoreValue] = []
            for item in items { values.append(try storeValue(item, path)) }
            return (values, isCollection)
        case .count(let path):
            let (items, _) = try walk(path, from: object)
            return ([.int(Int64(items.count))], false)
        case .aggregate(let aggregate, let list, let element):
            let (items, _) = try walk(list, from: object)
            var values: [StoreValue] = []
            for item in items {
                if element.isEmpty {
                    values.append(try storeValue(item, list))
                    continue
                }
                guard case .object(let elementObject) = item else {
                    throw QueryError(.typeMismatch, "'\(PredicateFormat.keyPath(list))' holds values, which have no property '\(element.joined(separator: "."))'")
                }
                guard let elementObject else { continue }
                let (reached, _) = try walk(element, from: elementObject)
                for value in reached { values.append(try storeValue(value, list + element)) }
            }
            return ([StoredValueRules.aggregate(aggregate, values)], false)
        case .variable, .subqueryCount:
            throw QueryError(.unsupported, "SUBQUERY is not supported on an unmanaged collection (\(operand)); add its object to a database first, or use Swift's filter(_:)")
        }
    }

    /// Follows `path` from `object`: through links (a nil link ends in nil) and lists (one item
    /// per element; the result is then a collection).
    private func walk(_ path: [String], from object: Object) throws(QueryError) -> ([Item], Bool) {
        var current: [Item] = [.object(object)]
        var isCollection = false
        for name in path {
            var next: [Item] = []
            for item in current {
                guard case .object(let holder) = item else {
                    throw QueryError(.typeMismatch, "'\(PredicateFormat.keyPath(path))' goes on from a value at '\(name)'; only objects have properties")
                }
                guard let holder else {
                    next.append(.object(nil))
                    continue
                }
                let (items, throughList) = try property(name, of: holder)
                if throughList { isCollection = true }
                next += items
            }
            current = next
        }
        return (current, isCollection)
    }

    /// The items of property `name` of `object`: one for a value or link, one per element for
    /// a list or set.
    private func property(_ name: String, of object: Object) throws(QueryError) -> ([Item], Bool) {
        let schema = object.objectSchema
        let className = schema.name
        if name.hasPrefix("[") || name.hasPrefix("@") {
            throw QueryError(.unsupported, "'\(name)' (maps, @links) is not supported on an unmanaged collection; add its object to a database first, or use Swift's filter(_:)")
        }
        guard let property = schema.properties.first(where: { $0.name == name }) else {
            if Self.isLinkingProperty(name, of: object) {
                throw QueryError(.unsupported, "the LinkingObjects property '\(className).\(name)' is not supported on an unmanaged collection; add its object to a database first")
            }
            throw QueryError(.unknownProperty, "'\(className)' has no property '\(name)'")
        }
        if property.isMap {
            throw QueryError(.unsupported, "the map '\(className).\(name)' is not supported on an unmanaged collection; add its object to a database first")
        }
        let value = object.value(forKey: name)
        if property.objectType != nil {
            if property.isList || property.isSet {
                guard let elements = value as? any ObjectCollectionElements else { return ([], true) }
                return (elements.elementsAsAny.map { .object($0 as? Object) }, true)
            }
            return ([.object(value as? Object)], false)
        }
        let argument: QueryArgument
        do {
            argument = try queryArgument(value ?? Optional<Int>.none as Any)
        } catch {
            throw QueryError(.unsupported, "the value of '\(className).\(name)' cannot be compared on an unmanaged collection: \(error.message)")
        }
        switch argument {
        case .value(let stored): return ([.value(stored)], false)
        case .list(let stored): return (stored.map { .value($0) }, true)
        }
    }

    /// What an unmanaged object at the end of a key path stands for: a link no stored link or
    /// argument equals (`matches` allows comparing it with nil only).
    private static let unmanagedObject = StoreValue.link(ObjectKey(Int64.max - 1))

    /// The stored value of an item at the end of `path`: a managed object compares as a link
    /// to it, an unmanaged one as `unmanagedObject`.
    private func storeValue(_ item: Item, _ path: [String]) throws(QueryError) -> StoreValue {
        switch item {
        case .value(let value): return value
        case .object(nil): return .null
        case .object(let object?):
            guard object.isManaged else { return Self.unmanagedObject }
            switch try queryArgument(object) {
            case .value(let value): return value
            case .list: return .null
            }
        }
    }

    private static func isLinkingProperty(_ name: String, of object: Object) -> Bool {
        guard let info = try? ClassInfo.of(type(of: object)) else { return false }
        return info.linkingProperties.contains { $0.name == name }
    }
}
