public import Foundation
import StrataStore

/// The type-safe query DSL of `where { }`: `$0.name == "x"`, `$0.age > 3`,
/// `$0.owner.name.starts(with: "A")`, `$0.dogs.age > 5` (any dog), `$0.tags.count > 2`,
/// combined with `&&`, `||` and `!`.
///
/// A `Query` describes a condition; it reads nothing. Both this DSL and string predicates
/// (`filter("age > %@", 3)`) compile to the same representation, which Strata evaluates over
/// its column storage and answers from an index when one covers an equality.
@dynamicMemberLookup
public struct Query<T> {
    /// Property names from the queried object (or from the element, for `variable` queries).
    let path: [String]
    /// The prefix of `path` ending at the first list it goes through, if any.
    let listPrefix: [String]?
    /// For conditions on list elements (`allSatisfy`, `contains(where:)`): the variable that
    /// stands for the element.
    let variable: String?
    /// An operand other than the path itself (`@count`, `@min`, a subquery count).
    let special: QueryOperand?
    /// For `Query<Bool>` built from a condition.
    let predicate: QueryPredicate?

    init(path: [String] = [], listPrefix: [String]? = nil, variable: String? = nil,
         special: QueryOperand? = nil, predicate: QueryPredicate? = nil) {
        self.path = path
        self.listPrefix = listPrefix
        self.variable = variable
        self.special = special
        self.predicate = predicate
    }

    var operand: QueryOperand {
        if let special { return special }
        if let variable { return .variable(variable, path) }
        return .keyPath(path)
    }

    func appending<V>(_ names: [String], list: Bool = false) -> Query<V> {
        let newPath = path + names
        return Query<V>(path: newPath, listPrefix: listPrefix ?? (list ? newPath : nil), variable: variable)
    }

    func condition(_ op: QueryOperator, _ rhs: QueryOperand, options: QueryStringOptions = [],
                   modifier: QueryCollectionModifier = .any) -> Query<Bool> {
        // A condition compared with a Bool (`$0.name.starts(with: "A") == false`) is the
        // condition or its negation.
        if let predicate, case .constant(.bool(let flag)) = rhs, op == .equal || op == .notEqual {
            return Query<Bool>(listPrefix: listPrefix, variable: variable, predicate: (op == .equal) == flag ? predicate : .not(predicate))
        }
        let comparison = QueryComparison(operand, op, rhs, options: options, modifier: modifier)
        return Query<Bool>(listPrefix: special == nil ? listPrefix : nil, variable: variable, predicate: .comparison(comparison))
    }

    // MARK: Properties

    /// A property of the object.
    public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> where T: Object {
        appending(KeyPathRecorder.names(keyPath))
    }

    /// A list property of the object: use `count`, `contains`, element properties, …
    public subscript<E>(dynamicMember keyPath: KeyPath<T, List<E>>) -> Query<List<E>> where T: Object {
        appending(KeyPathRecorder.names(keyPath), list: true)
    }

    /// A set property of the object: use `count`, `contains`, element properties, …
    public subscript<E>(dynamicMember keyPath: KeyPath<T, MutableSet<E>>) -> Query<MutableSet<E>> where T: Object {
        appending(KeyPathRecorder.names(keyPath), list: true)
    }

    /// A map property of the object: `$0.scores["a"] > 3` (the value for a key; nil when the
    /// map has no such key), `$0.scores.keys == "a"` (some key), `$0.scores.values > 3` (some
    /// value), `$0.scores.count`.
    public subscript<K, V>(dynamicMember keyPath: KeyPath<T, Map<K, V>>) -> Query<Map<K, V>> where T: Object {
        appending(KeyPathRecorder.names(keyPath))
    }

    /// A `LinkingObjects` property: use `count`, `contains`, properties of the linking
    /// objects (`$0.owners.name == "Ann"`: some owner is named Ann), …
    public subscript<E>(dynamicMember keyPath: KeyPath<T, LinkingObjects<E>>) -> Query<LinkingObjects<E>> where T: Object {
        appending(KeyPathRecorder.names(keyPath), list: true)
    }

    /// A property of a linked (optional) object.
    public subscript<Wrapped: Object, V>(dynamicMember keyPath: KeyPath<Wrapped, V>) -> Query<V> where T == Wrapped? {
        appending(KeyPathRecorder.names(keyPath))
    }

    /// A property of the objects in a list: conditions on it hold when any element matches
    /// (`$0.dogs.name == "Rex"`: some dog is named Rex).
    public subscript<E: Object, V>(dynamicMember keyPath: KeyPath<E, V>) -> Query<V> where T == List<E> {
        appending(KeyPathRecorder.names(keyPath))
    }

    /// A property of the linking objects: conditions on it hold when any of them matches.
    public subscript<E: Object, V>(dynamicMember keyPath: KeyPath<E, V>) -> Query<V> where T == LinkingObjects<E> {
        appending(KeyPathRecorder.names(keyPath))
    }

    /// A property of the objects in a set: conditions on it hold when any member matches.
    public subscript<E: Object, V>(dynamicMember keyPath: KeyPath<E, V>) -> Query<V> where T == MutableSet<E> {
        appending(KeyPathRecorder.names(keyPath))
    }
}

/// The stored form of a value in a query: objects compare by identity (an unmanaged object
/// matches nothing).
func queryValue<V: _PersistableInsideOptional>(_ value: V) -> StoreValue {
    if let object = value as? Object {
        guard object._slot.table != nil else { return .link(ObjectKey(Int64.min)) }
        return .link(ObjectKey(object._slot.key))
    }
    return value._strataStore(nil)
}

func queryOptionalValue<V: _PersistableInsideOptional>(_ value: V?) -> StoreValue {
    value.map { queryValue($0) } ?? .null
}

// MARK: Comparisons

/// Equality and ordering with a value: `$0.age > 3`, `$0.name == "Ann"`, `$0.owner == person`.
/// Ordering applies to numbers, strings, dates, ObjectIds, UUIDs and Decimal128s.
extension Query where T: _PersistableInsideOptional {
    public static func == (lhs: Query, rhs: T) -> Query<Bool> { lhs.condition(.equal, .constant(queryValue(rhs))) }
    public static func != (lhs: Query, rhs: T) -> Query<Bool> { lhs.condition(.notEqual, .constant(queryValue(rhs))) }
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { lhs.condition(.less, .constant(queryValue(rhs))) }
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { lhs.condition(.lessOrEqual, .constant(queryValue(rhs))) }
    public static func > (lhs: Query, rhs: T) -> Query<Bool> { lhs.condition(.greater, .constant(queryValue(rhs))) }
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { lhs.condition(.greaterOrEqual, .constant(queryValue(rhs))) }

    /// Whether the value is one of `values` (`IN`).
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        condition(.in, .list(values.map { queryValue($0) }))
    }

    /// Whether the value lies in `range` (`BETWEEN`, inclusive).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> where T: Comparable {
        condition(.between, .list([queryValue(range.lowerBound), queryValue(range.upperBound)]))
    }

    /// Whether the value lies in `range` (at least the lower bound, below the upper one).
    public func contains(_ range: Range<T>) -> Query<Bool> where T: Comparable {
        Query<Bool>(predicate: .and([asComparison(.greaterOrEqual, range.lowerBound), asComparison(.less, range.upperBound)]))
    }

    func asComparison(_ op: QueryOperator, _ value: T) -> QueryPredicate {
        .comparison(QueryComparison(operand, op, .constant(queryValue(value))))
    }
}

/// Comparisons of an optional property: `$0.nickname == nil`, `$0.owner != nil`, `$0.age > 3`.
extension Query {
    public static func == <W: _PersistableInsideOptional>(lhs: Query, rhs: W?) -> Query<Bool> where T == W? {
        lhs.condition(.equal, .constant(queryOptionalValue(rhs)))
    }
    public static func != <W: _PersistableInsideOptional>(lhs: Query, rhs: W?) -> Query<Bool> where T == W? {
        lhs.condition(.notEqual, .constant(queryOptionalValue(rhs)))
    }
    public static func < <W: _PersistableScalar>(lhs: Query, rhs: W) -> Query<Bool> where T == W? { lhs.condition(.less, .constant(queryValue(rhs))) }
    public static func <= <W: _PersistableScalar>(lhs: Query, rhs: W) -> Query<Bool> where T == W? { lhs.condition(.lessOrEqual, .constant(queryValue(rhs))) }
    public static func > <W: _PersistableScalar>(lhs: Query, rhs: W) -> Query<Bool> where T == W? { lhs.condition(.greater, .constant(queryValue(rhs))) }
    public static func >= <W: _PersistableScalar>(lhs: Query, rhs: W) -> Query<Bool> where T == W? { lhs.condition(.greaterOrEqual, .constant(queryValue(rhs))) }

    /// Whether the value is one of `values` (`IN`); nil matches a nil property.
    public func `in`<W: _PersistableScalar, S: Sequence>(_ values: S) -> Query<Bool> where T == W?, S.Element == W? {
        condition(.in, .list(values.map { queryOptionalValue($0) }))
    }

    /// Whether the value lies in `range` (`BETWEEN`, inclusive); nil never does.
    public func contains<W: _PersistableScalar & Comparable>(_ range: ClosedRange<W>) -> Query<Bool> where T == W? {
        condition(.between, .list([queryValue(range.lowerBound), queryValue(range.upperBound)]))
    }

    /// Compares two properties of the same object: `$0.spent > $0.budget`.
    public static func == (lhs: Query, rhs: Query) -> Query<Bool> { lhs.condition(.equal, rhs.operand) }
    public static func != (lhs: Query, rhs: Query) -> Query<Bool> { lhs.condition(.notEqual, rhs.operand) }
    public static func < (lhs: Query, rhs: Query) -> Query<Bool> { lhs.condition(.less, rhs.operand) }
    public static func <= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.condition(.lessOrEqual, rhs.operand) }
    public static func > (lhs: Query, rhs: Query) -> Query<Bool> { lhs.condition(.greater, rhs.operand) }
    public static func >= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.condition(.greaterOrEqual, rhs.operand) }
}

// MARK: Strings and data

/// Options for string comparisons in queries.
public struct StringOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Letters match regardless of case (`[c]`).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// Letters match regardless of diacritics: `é` matches `e` (`[d]`).
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    var storeOptions: QueryStringOptions {
        var options: QueryStringOptions = []
        if contains(.caseInsensitive) { options.insert(.caseInsensitive) }
        if contains(.diacriticInsensitive) { options.insert(.diacriticInsensitive) }
        return options
    }
}

/// A type string operators apply to: `String`, `Data` and their optionals.
public protocol _QueryText: _PersistableInsideOptional {}
extension String: _QueryText {}
extension Data: _QueryText {}
extension Optional: _QueryText where Wrapped: _QueryText & _PersistableScalar {}

/// Substring and pattern conditions on strings (and, except `like`, data).
extension Query where T: _QueryText {
    /// Whether the value contains `value` (`CONTAINS`).
    public func contains(_ value: T, options: StringOptions = []) -> Query<Bool> {
        condition(.contains, .constant(queryValue(value)), options: options.storeOptions)
    }
    /// Whether the value starts with `value` (`BEGINSWITH`).
    public func starts(with value: T, options: StringOptions = []) -> Query<Bool> {
        condition(.beginsWith, .constant(queryValue(value)), options: options.storeOptions)
    }
    /// Whether the value ends with `value` (`ENDSWITH`).
    public func ends(with value: T, options: StringOptions = []) -> Query<Bool> {
        condition(.endsWith, .constant(queryValue(value)), options: options.storeOptions)
    }
    /// Equality with options (`==[c]`, `==[d]`, `==[cd]`).
    public func equals(_ value: T, options: StringOptions = []) -> Query<Bool> {
        condition(.equal, .constant(queryValue(value)), options: options.storeOptions)
    }
    /// Inequality with options (`!=[c]`, …).
    public func notEquals(_ value: T, options: StringOptions = []) -> Query<Bool> {
        condition(.notEqual, .constant(queryValue(value)), options: options.storeOptions)
    }
    /// Wildcard match (`LIKE`): `?` matches one character and `*` any run of characters.
    public func like(_ pattern: T, caseInsensitive: Bool = false) -> Query<Bool> {
        condition(.like, .constant(queryValue(pattern)), options: caseInsensitive ? .caseInsensitive : [])
    }
    /// Wildcard match with options (`LIKE[cd]`).
    public func like(_ pattern: T, options: StringOptions) -> Query<Bool> {
        condition(.like, .constant(queryValue(pattern)), options: options.storeOptions)
    }
}

// MARK: Conditions

/// Combining conditions: `&&`, `||` and `!`.
extension Query where T == Bool {
    public static func && (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        Query(listPrefix: lhs.listPrefix == rhs.listPrefix ? lhs.listPrefix : nil, variable: lhs.variable,
              predicate: lhs.asPredicate && rhs.asPredicate)
    }
    public static func || (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        Query(listPrefix: lhs.listPrefix == rhs.listPrefix ? lhs.listPrefix : nil, variable: lhs.variable,
              predicate: lhs.asPredicate || rhs.asPredicate)
    }
    public static prefix func ! (query: Query<Bool>) -> Query<Bool> {
        Query(listPrefix: query.listPrefix, variable: query.variable, predicate: .not(query.asPredicate))
    }

    /// A bare Bool property used as a condition (`$0.done`) means `== true`.
    var asPredicate: QueryPredicate {
        predicate ?? .comparison(QueryComparison(operand, .equal, .constant(.bool(true))))
    }

    /// How many elements of a list meet a condition on them (a SUBQUERY):
    /// `($0.dogs.age > 5).count >= 2` — at least two dogs are older than five.
    public var count: Query<Int> {
        guard let prefix = listPrefix else {
            fatalError("count on a condition needs a condition on list elements, e.g. ($0.dogs.age > 5).count > 1")
        }
        let inner = Query.rebase(asPredicate, from: prefix, to: "element")
        return Query<Int>(special: .subqueryCount(list: prefix, variable: "element", predicate: inner))
    }

    /// Rewrites paths that start with `prefix` to start from the variable instead.
    static func rebase(_ predicate: QueryPredicate, from prefix: [String], to variable: String) -> QueryPredicate {
        func operand(_ operand: QueryOperand) -> QueryOperand {
            if case .keyPath(let path) = operand, path.starts(with: prefix) {
                return .variable(variable, Array(path.dropFirst(prefix.count)))
            }
            return operand
        }
        switch predicate {
        case .constant: return predicate
        case .and(let parts): return .and(parts.map { rebase($0, from: prefix, to: variable) })
        case .or(let parts): return .or(parts.map { rebase($0, from: prefix, to: variable) })
        case .not(let inner): return .not(rebase(inner, from: prefix, to: variable))
        case .comparison(var comparison):
            comparison.lhs = operand(comparison.lhs)
            comparison.rhs = operand(comparison.rhs)
            return .comparison(comparison)
        }
    }
}

// MARK: Numbers

/// Aggregates over the values a path through a list reaches: `$0.dogs.age.avg > 3`,
/// `$0.scores.max < 10`.
extension Query where T: _PersistableInsideOptional {
    private func aggregate(_ aggregate: QueryAggregate) -> Query<T> {
        guard let prefix = listPrefix, special == nil else {
            fatalError("min, max, sum and avg apply to lists (e.g. $0.scores.max or $0.dogs.age.avg); '\(path.joined(separator: "."))' is not a list.")
        }
        return Query<T>(special: .aggregate(aggregate, list: prefix, element: Array(path.dropFirst(prefix.count))))
    }
    /// The smallest value (`@min`).
    public var min: Query<T> { aggregate(.min) }
    /// The largest value (`@max`).
    public var max: Query<T> { aggregate(.max) }
    /// The sum (`@sum`).
    public var sum: Query<T> { aggregate(.sum) }
    /// The average (`@avg`).
    public var avg: Query<T> { aggregate(.average) }
}

// MARK: Lists

extension Query where T: ListQueryable {
    /// The number of elements (`@count`): `$0.tags.count > 2`.
    public var count: Query<Int> { Query<Int>(special: .count(path)) }

    /// Whether the list contains `value`.
    public func contains(_ value: T.QueryElement) -> Query<Bool> {
        condition(.equal, .constant(queryValue(value)))
    }

    /// Whether the list contains any of `values`.
    public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element == T.QueryElement {
        condition(.in, .list(values.map { queryValue($0) }))
    }

    /// Whether some element lies in `range` (inclusive).
    public func contains(_ range: ClosedRange<T.QueryElement>) -> Query<Bool> where T.QueryElement: Comparable {
        condition(.between, .list([queryValue(range.lowerBound), queryValue(range.upperBound)]))
    }

    /// Whether some element meets a condition on the element: `$0.dogs.contains { $0.age > 3 && $0.name == "Rex" }`.
    public func contains(where condition: (Query<T.QueryElement>) -> Query<Bool>) -> Query<Bool> {
        Query<Bool>(predicate: .comparison(QueryComparison(subqueryCount(condition), .greater, .constant(.int(0)))))
    }

    /// Whether every element meets a condition (true for an empty list).
    public func allSatisfy(_ condition: (Query<T.QueryElement>) -> Query<Bool>) -> Query<Bool> {
        let count = subqueryCount(condition)
        return Query<Bool>(predicate: .comparison(QueryComparison(count, .equal, .count(path))))
    }

    /// Whether no element meets a condition.
    public func none(where condition: (Query<T.QueryElement>) -> Query<Bool>) -> Query<Bool> {
        Query<Bool>(predicate: .comparison(QueryComparison(subqueryCount(condition), .equal, .constant(.int(0)))))
    }

    private func subqueryCount(_ condition: (Query<T.QueryElement>) -> Query<Bool>) -> QueryOperand {
        let name = "e\(path.count)"
        let element = Query<T.QueryElement>(variable: name)
        return .subqueryCount(list: path, variable: name, predicate: condition(element).asPredicate)
    }

    /// Any element equals / differs from / orders against a value: `$0.scores > 5`.
    public static func == (lhs: Query, rhs: T.QueryElement) -> Query<Bool> { lhs.condition(.equal, .constant(queryValue(rhs))) }
    public static func != (lhs: Query, rhs: T.QueryElement) -> Query<Bool> { lhs.condition(.notEqual, .constant(queryValue(rhs))) }
    public static func < (lhs: Query, rhs: T.QueryElement) -> Query<Bool> { lhs.condition(.less, .constant(queryValue(rhs))) }
    public static func <= (lhs: Query, rhs: T.QueryElement) -> Query<Bool> { lhs.condition(.lessOrEqual, .constant(queryValue(rhs))) }
    public static func > (lhs: Query, rhs: T.QueryElement) -> Query<Bool> { lhs.condition(.greater, .constant(queryValue(rhs))) }
    public static func >= (lhs: Query, rhs: T.QueryElement) -> Query<Bool> { lhs.condition(.greaterOrEqual, .constant(queryValue(rhs))) }

    /// The smallest element (`@min`), for lists of numbers and dates.
    public var min: Query<T.QueryElement> { Query<T.QueryElement>(special: .aggregate(.min, list: path, element: [])) }
    /// The largest element (`@max`).
    public var max: Query<T.QueryElement> { Query<T.QueryElement>(special: .aggregate(.max, list: path, element: [])) }
    /// The sum of the elements (`@sum`).
    public var sum: Query<T.QueryElement> { Query<T.QueryElement>(special: .aggregate(.sum, list: path, element: [])) }
    /// The average of the elements (`@avg`).
    public var avg: Query<T.QueryElement> { Query<T.QueryElement>(special: .aggregate(.average, list: path, element: [])) }
}

/// Lists in queries. (An implementation detail of the DSL.)
public protocol ListQueryable {
    associatedtype QueryElement: _PersistableInsideOptional
}
extension List: ListQueryable where Element: _PersistableInsideOptional {
    public typealias QueryElement = Element
}
extension LinkingObjects: ListQueryable {
    /// The linking objects' type.
    public typealias QueryElement = Element
}

// MARK: Maps

extension Query where T: KeyedCollection {
    /// The value for `key` (`scores['a']`): nil when the map has no such key.
    public subscript(key: T.Key) -> Query<T.Value> {
        Query<T.Value>(path: path + [MapPathComponent.component(forKey: key._strataMapKey)], variable: variable)
    }

    /// The map's keys (`@allKeys`): conditions on them hold when any key matches
    /// (`$0.scores.keys == "a"`, `$0.scores.keys.starts(with: "level")`).
    public var keys: Query<String> {
        let newPath = path + [MapPathComponent.allKeysComponent]
        return Query<String>(path: newPath, listPrefix: newPath, variable: variable)
    }

    /// The map's values (`@allValues`): conditions on them hold when any value matches
    /// (`$0.scores.values > 3`); aggregates (`$0.scores.values.max`) and, for maps of objects,
    /// properties of the objects (`$0.friends.values.name == "Bo"`) apply.
    public var values: Query<T.Value> {
        let newPath = path + [MapPathComponent.allValuesComponent]
        return Query<T.Value>(path: newPath, listPrefix: newPath, variable: variable)
    }

    /// The number of entries (`@count`).
    public var count: Query<Int> { Query<Int>(special: .count(path)) }
}

extension Query where T: KeyedCollection, T.Value: _PersistableInsideOptional {
    /// Whether some value of the map is `value`.
    public func contains(_ value: T.Value) -> Query<Bool> { values == value }
}
