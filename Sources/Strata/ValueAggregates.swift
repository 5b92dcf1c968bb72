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
    public func sum() -> Element {
        guard let total = Element._strataAggregateResult(aggregate(.sum, self, database))
                ?? Element._strataAggregateResult(.int(0)) else {
            fatalError("sum() cannot be returned as \(Element.self)")
        }
        return total
    }

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
