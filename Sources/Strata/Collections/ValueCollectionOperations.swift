// What lists and sets of values compute from their elements, as RealmSwift's value collections
// do: min/max/sum/average, and sorting and removing repeats.

public import Foundation
public import StrataStore

/// Element types whose lists and sets have `min()` and `max()`: the integer types, `Float`,
/// `Double`, `Decimal128`, `Date`, and optionals of these. RealmSwift's marker protocol of the
/// same name; here it also says how an aggregate's stored result becomes an element.
public protocol MinMaxType: CollectionValue {
    /// The element for an aggregate's stored result; nil for a null result.
    static func _strataAggregateResult(_ value: StoreValue) -> Self?
}

/// Element types whose lists and sets have `sum()` and `average()`: the integer types, `Float`,
/// `Double`, `Decimal128`, and optionals of these. RealmSwift's marker protocol of the same
/// name.
public protocol AddableType: MinMaxType {}

extension _PersistableInsideOptional where Self: MinMaxType {
    /// The value of an aggregate's stored result, converted to this type; nil for null.
    public static func _strataAggregateResult(_ value: StoreValue) -> Self? { AggregateValue.convert(value) }
}

extension Int: AddableType {}
extension Int8: AddableType {}
extension Int16: AddableType {}
extension Int32: AddableType {}
extension Int64: AddableType {}
extension Float: AddableType {}
extension Double: AddableType {}
extension Decimal128: AddableType {}
extension Date: MinMaxType {}

extension Optional: MinMaxType where Wrapped: MinMaxType & _PersistableScalar {
    /// The wrapped type's value of an aggregate's stored result; nil for null.
    public static func _strataAggregateResult(_ value: StoreValue) -> Self? {
        Wrapped._strataAggregateResult(value).map { .some($0) }
    }
}

extension Optional: AddableType where Wrapped: AddableType & _PersistableScalar {}

/// The aggregates of a collection of values, read from its elements' stored forms.
private func aggregate<S: Sequence>(_ kind: QueryAggregate, _ elements: S, _ database: Database?) -> StoreValue
where S.Element: CollectionValue {
    aggregateValues(kind, elements.map { $0._strataElement(database) })
}

/// The sum of a collection's values as their own type: 0 for none. Integers add in 64 bits
/// and wrap on overflow.
private func total<S: Sequence>(_ elements: S, _ database: Database?) -> S.Element where S.Element: AddableType {
    guard let total = S.Element._strataAggregateResult(aggregate(.sum, elements, database)) ?? S.Element._strataAggregateResult(.int(0)) else {
        fatalError("sum() cannot be returned as \(S.Element.self)")
    }
    return total
}

extension List where Element: MinMaxType {
    /// The smallest element, ignoring nils; nil when the list has none. (For a list of
    /// optionals the element is itself optional: `List<Int?>.min()` is an `Int??`.)
    public func min() -> Element? { Element._strataAggregateResult(aggregate(.min, self, database)) }

    /// The largest element, ignoring nils; nil when the list has none.
    public func max() -> Element? { Element._strataAggregateResult(aggregate(.max, self, database)) }
}

extension List where Element: AddableType {
    /// The sum of the elements, ignoring nils; 0 for an empty list. Integers add in 64 bits and
    /// wrap on overflow (as the query aggregates do); the sum is then converted to the
    /// element type (an `Int8` list's sum is truncated to 8 bits).
    public func sum() -> Element { total(self, database) }

    /// The average of the elements, ignoring nils, as `T` (usually `Double`, or `Decimal128`
    /// for decimals); nil when the list has none.
    ///
    /// ```swift
    /// let mean: Double? = scores.average()
    /// ```
    public func average<T: _PersistableInsideOptional>() -> T? { AggregateValue.convert(aggregate(.average, self, database)) }
}

extension MutableSet where Element: MinMaxType {
    /// The smallest member, ignoring nil; nil when the set has none.
    public func min() -> Element? { list.min() }

    /// The largest member, ignoring nil; nil when the set has none.
    public func max() -> Element? { list.max() }
}

extension MutableSet where Element: AddableType {
    /// The sum of the members, ignoring nil; 0 for an empty set. See ``List/sum()``.
    public func sum() -> Element { list.sum() }

    /// The average of the members, ignoring nil, as `T`; nil when the set has none.
    public func average<T: _PersistableInsideOptional>() -> T? { list.average() }
}

extension Map where Value: MinMaxType {
    /// The smallest value, ignoring nils; nil when the map has none.
    public func min() -> Value? { Value._strataAggregateResult(aggregate(.min, values, database)) }

    /// The largest value, ignoring nils; nil when the map has none.
    public func max() -> Value? { Value._strataAggregateResult(aggregate(.max, values, database)) }
}

extension Map where Value: AddableType {
    /// The sum of the values, ignoring nils; 0 for an empty map. See ``List/sum()``.
    public func sum() -> Value { total(values, database) }

    /// The average of the values, ignoring nils, as `T` (usually `Double`); nil when the map
    /// has none.
    public func average<T: _PersistableInsideOptional>() -> T? { AggregateValue.convert(aggregate(.average, values, database)) }
}

/// Element types whose lists and sets have `sorted(ascending:)` and `distinct()`: numbers,
/// `String`, `Data`, `Date`, `Decimal128`, `ObjectId`, `UUID`, `Bool`, and optionals of these.
/// RealmSwift's marker protocol of the same name.
public protocol SortableType: CollectionValue {}

extension Int: SortableType {}
extension Int8: SortableType {}
extension Int16: SortableType {}
extension Int32: SortableType {}
extension Int64: SortableType {}
extension Float: SortableType {}
extension Double: SortableType {}
extension Decimal128: SortableType {}
extension Date: SortableType {}
extension String: SortableType {}
extension Data: SortableType {}
extension ObjectId: SortableType {}
extension UUID: SortableType {}
extension Bool: SortableType {}
extension Optional: SortableType where Wrapped: SortableType & _PersistableScalar {}

/// The elements of a collection of values in stored order, ascending or descending (stable).
private func sortedValues<S: Sequence>(_ elements: S, ascending: Bool, _ database: Database?) -> [S.Element]
where S.Element: CollectionValue {
    let pairs = elements.map { ($0, $0._strataElement(database)) }
    let order = pairs.indices.sorted { a, b in
        let c = compareForSorting(pairs[a].1, pairs[b].1)
        if c != 0 { return ascending ? c < 0 : c > 0 }
        return a < b
    }
    return order.map { pairs[$0].0 }
}

/// The elements with repeats (equal as stored: strings by their bytes) removed, first kept.
private func distinctValues<S: Sequence>(_ elements: S, _ database: Database?) -> [S.Element] where S.Element: CollectionValue {
    var seen: Set<StoreValueIdentity> = []
    var kept: [S.Element] = []
    for element in elements {
        // Strings are the same value when their bytes are (as queries compare them).
        if seen.insert(element._strataElement(database).identity).inserted { kept.append(element) }
    }
    return kept
}

extension List where Element: SortableType {
    /// The elements sorted by value (nil first when ascending; strings by their bytes, as
    /// queries sort them). RealmSwift returns a live `Results`; Strata returns an array of the
    /// elements as they are now.
    public func sorted(ascending: Bool = true) -> [Element] { sortedValues(self, ascending: ascending, database) }

    /// The elements with repeated values removed, each value where it first appears. RealmSwift
    /// returns a live `Results`; Strata returns an array of the elements as they are now.
    public func distinct() -> [Element] { distinctValues(self, database) }
}

extension MutableSet where Element: SortableType {
    /// The members sorted by value (nil first when ascending). An array of the members as they
    /// are now (RealmSwift returns a live `Results`).
    public func sorted(ascending: Bool = true) -> [Element] { list.sorted(ascending: ascending) }
}

extension Map where Value: SortableType {
    /// The values sorted (nil first when ascending; strings by their bytes). An array of the
    /// values as they are now (RealmSwift returns a live `Results`).
    public func sorted(ascending: Bool = true) -> [Value] { sortedValues(values, ascending: ascending, database) }

    /// The values with repeats removed, each where it first appears in key order. An array of
    /// the values as they are now (RealmSwift returns a live `Results`).
    public func distinct() -> [Value] { distinctValues(values, database) }
}
