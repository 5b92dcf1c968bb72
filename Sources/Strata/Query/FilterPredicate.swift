public import StrataStore

/// A string predicate in the NSPredicate format Realm uses (`"age > %@ AND name BEGINSWITH[c] %@"`),
/// parsed and bound to its arguments. Making one checks the syntax and the arguments and throws a
/// ``QueryError`` that says what is wrong and where; `Results.filter(_:)` then checks the
/// property names against the type.
///
/// Strata parses the format itself: on Linux, Foundation's `NSPredicate(format:)` is not
/// available. See <doc:QueryingObjects> for the grammar.
public struct FilterPredicate: Sendable, CustomStringConvertible {
    let predicate: QueryPredicate
    /// The format the predicate was made from.
    public let format: String

    /// Parses `format` with `arguments` for `%@`, `%K`, `%d`, `%f` and `$0`, `$1`, ….
    public init(_ format: String, _ arguments: Any...) throws(QueryError) {
        try self.init(format, argumentArray: arguments)
    }

    /// Parses `format` with an array of arguments.
    public init(_ format: String, argumentArray arguments: [Any]) throws(QueryError) {
        var converted: [QueryArgument] = []
        for argument in arguments { converted.append(try queryArgument(argument)) }
        predicate = try PredicateParser.parse(format, arguments: converted)
        self.format = format
    }

    public var description: String { predicate.description }
}

extension Results {
    /// The results that also match a string predicate: `filter("age > %@ AND name BEGINSWITH[c] %@", 3, "a")`.
    ///
    /// A malformed predicate, an unknown property or an argument of the wrong type stops the
    /// program with a message saying what is wrong and where, as RealmSwift does; use
    /// `filter(_:)` with `try FilterPredicate(…)` to get a ``QueryError``
    /// instead.
    public func filter(_ format: String, _ arguments: Any...) -> Results<Element> {
        do {
            return try filter(FilterPredicate(format, argumentArray: arguments))
        } catch {
            fatalError("\(error)")
        }
    }

    /// The results that also match a parsed string predicate; throws when it names a property
    /// the type does not have or compares values of the wrong type.
    public func filter(_ predicate: FilterPredicate) throws(QueryError) -> Results<Element> {
        try adding(predicate.predicate)
    }

    /// The position of the first object matching a string predicate, or nil.
    public func index(matching format: String, _ arguments: Any...) -> Int? {
        let matching: Results<Element>
        do {
            matching = try filter(FilterPredicate(format, argumentArray: arguments))
        } catch {
            fatalError("\(error)")
        }
        guard let first = matching.first else { return nil }
        return index(of: first)
    }
}

extension List where Element: Object {
    /// The list's objects that match a string predicate, in list order.
    public func filter(_ format: String, _ arguments: Any...) -> Results<Element> {
        do {
            return try asResults().filter(FilterPredicate(format, argumentArray: arguments))
        } catch {
            fatalError("\(error)")
        }
    }
}

extension Map where Value: OptionalObjectValue {
    /// The map's objects that match a string predicate, in key order (nil values left out).
    public func filter(_ format: String, _ arguments: Any...) -> Results<Value.Wrapped> {
        do {
            return try asResults().filter(FilterPredicate(format, argumentArray: arguments))
        } catch {
            fatalError("\(error)")
        }
    }
}
