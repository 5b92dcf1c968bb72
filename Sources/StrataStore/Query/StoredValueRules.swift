/// The comparison and aggregation rules of queries (`QueryValueComparison`,
/// `GeneralEvaluator.aggregate`), for layers above the store that evaluate a predicate
/// themselves: the public layer's in-memory evaluator over unmanaged objects answers exactly as
/// a stored query over the same values would.
package enum StoredValueRules {
    /// Whether `value op expected` holds (not `in` or `between`, which the caller expands).
    package static func test(_ value: StoreValue, _ op: QueryOperator, _ expected: StoreValue, options: QueryStringOptions) -> Bool {
        QueryValueComparison.test(value, op, expected, options: options)
    }

    /// Whether two values are equal under the query rules.
    package static func equal(_ a: StoreValue, _ b: StoreValue, options: QueryStringOptions) -> Bool {
        QueryValueComparison.equal(a, b, options: options)
    }

    /// The order of two values (negative, zero, positive), nil when they have none.
    package static func order(_ a: StoreValue, _ b: StoreValue, options: QueryStringOptions) -> Int? {
        QueryValueComparison.order(a, b, options: options)
    }

    /// `@min`, `@max`, `@sum` or `@avg` of some values, ignoring nulls.
    package static func aggregate(_ aggregate: QueryAggregate, _ values: [StoreValue]) -> StoreValue {
        GeneralEvaluator.aggregate(aggregate, values)
    }
}
