// The one query representation. The typed `where { }` DSL and the string-predicate parser both
// produce a `QueryPredicate`; `QueryCompiler` resolves its names against a table's schema and
// `QueryEvaluator` runs it over the table's column chunks (or an index, when one answers it).
//
// A predicate names properties, not columns: it is built before (and independently of) any
// transaction, and a Results re-runs it against each version it reads.

/// A condition on the objects of one type.
package indirect enum QueryPredicate: Sendable, Hashable, CustomStringConvertible {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// `lhs op rhs`, e.g. `age > 3`, `ANY dogs.name BEGINSWITH[c] "r"`.
    case comparison(QueryComparison)
    case and([QueryPredicate])
    case or([QueryPredicate])
    case not(QueryPredicate)

    package var description: String {
        switch self {
        case .constant(let value): value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let comparison): comparison.description
        case .and(let parts): "(" + parts.map(\.description).joined(separator: " AND ") + ")"
        case .or(let parts): "(" + parts.map(\.description).joined(separator: " OR ") + ")"
        case .not(let inner): "NOT \(inner)"
        }
    }

    /// `a && b`, flattening nested conjunctions.
    package static func && (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        switch (lhs, rhs) {
        case (.and(let a), .and(let b)): .and(a + b)
        case (.and(let a), _): .and(a + [rhs])
        case (_, .and(let b)): .and([lhs] + b)
        default: .and([lhs, rhs])
        }
    }

    /// `a || b`, flattening nested disjunctions.
    package static func || (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        switch (lhs, rhs) {
        case (.or(let a), .or(let b)): .or(a + b)
        case (.or(let a), _): .or(a + [rhs])
        case (_, .or(let b)): .or([lhs] + b)
        default: .or([lhs, rhs])
        }
    }
}

/// One comparison: two operands, an operator, string options and, when the left operand goes
/// through a list, how many of the list's elements must match.
package struct QueryComparison: Sendable, Hashable, CustomStringConvertible {
    package var lhs: QueryOperand
    package var op: QueryOperator
    package var rhs: QueryOperand
    package var options: QueryStringOptions
    /// For a left-hand path through a list: ANY (the default), ALL or NONE of its elements.
    package var modifier: QueryCollectionModifier

    package init(_ lhs: QueryOperand, _ op: QueryOperator, _ rhs: QueryOperand,
                 options: QueryStringOptions = [], modifier: QueryCollectionModifier = .any) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.options = options
        self.modifier = modifier
    }

    package var description: String {
        let prefix = switch modifier { case .any: ""; case .all: "ALL "; case .none: "NONE " }
        var flags = ""
        if !options.isEmpty {
            flags = "[" + (options.contains(.caseInsensitive) ? "c" : "") + (options.contains(.diacriticInsensitive) ? "d" : "") + "]"
        }
        return "\(prefix)\(lhs) \(op.rawValue)\(flags) \(rhs)"
    }
}

/// A comparison operator.
package enum QueryOperator: String, Sendable, Hashable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    /// String or data prefix.
    case beginsWith = "BEGINSWITH"
    /// String or data suffix.
    case endsWith = "ENDSWITH"
    /// String or data containment (`name CONTAINS "x"`).
    case contains = "CONTAINS"
    /// Wildcard match: `?` is one character, `*` any run of characters.
    case like = "LIKE"
    /// `lhs IN rhs`: the right operand is a list (literal `{…}`, an array argument, or a
    /// list property of the object).
    case `in` = "IN"
    /// `lhs BETWEEN {low, high}`, inclusive: the right operand is a two-value `.list`.
    case between = "BETWEEN"

    /// The operator with its operands swapped (`3 < age` is `age > 3`), or nil when the
    /// operator is not symmetric in that way.
    package var mirrored: QueryOperator? {
        switch self {
        case .equal: .equal
        case .notEqual: .notEqual
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        default: nil
        }
    }
}

/// `[c]`, `[d]` and `[cd]`.
package struct QueryStringOptions: OptionSet, Sendable, Hashable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `[c]`: ASCII and Unicode case folding.
    package static let caseInsensitive = QueryStringOptions(rawValue: 1)
    /// `[d]`: diacritics are ignored (`é` matches `e`).
    package static let diacriticInsensitive = QueryStringOptions(rawValue: 2)
}

/// ANY / ALL / NONE on a comparison whose left operand goes through a list.
package enum QueryCollectionModifier: Sendable, Hashable {
    case any, all, none
}

/// An aggregate over a list: `@min`, `@max`, `@sum`, `@avg`.
package enum QueryAggregate: String, Sendable, Hashable {
    case min = "@min"
    case max = "@max"
    case sum = "@sum"
    case average = "@avg"
}

/// One side of a comparison.
package indirect enum QueryOperand: Sendable, Hashable, CustomStringConvertible {
    /// A property path from the queried object: `["age"]`, `["owner", "name"]`,
    /// `["dogs", "name"]` (through a list: one value per element, see the modifier).
    case keyPath([String])
    /// A path from a SUBQUERY variable: `$d.age` is `.variable("d", ["age"])`; `$d` alone is
    /// `.variable("d", [])`.
    case variable(String, [String])
    /// A constant value (a literal or an argument).
    case constant(StoreValue)
    /// A list of constants: `{1, 2, 3}`, or an array argument; the right side of IN and BETWEEN.
    case list([StoreValue])
    /// `path.@count`: the number of elements of the list at `path` (or of a string's or data's
    /// length is *not* supported: `@count` applies to lists only).
    case count([String])
    /// `list.@max`, `dogs.@avg.age`: an aggregate over the values of a list of numbers, or over
    /// one numeric property (`element`) of a list of objects.
    case aggregate(QueryAggregate, list: [String], element: [String])
    /// `SUBQUERY(list, $x, predicate).@count`: how many elements of a list match a predicate
    /// that refers to each element as `$x`.
    case subqueryCount(list: [String], variable: String, predicate: QueryPredicate)

    package var description: String {
        switch self {
        // Written so that `PredicateParser` reads it back (see PredicateFormat).
        case .keyPath(let path): PredicateFormat.keyPath(path)
        case .variable(let name, let path): "$" + name + (path.isEmpty ? "" : PredicateFormat.keyPath(path, after: "$" + name))
        case .constant(let value): PredicateFormat.literal(value)
        case .list(let values): "{" + values.map(PredicateFormat.literal).joined(separator: ", ") + "}"
        case .count(let path): PredicateFormat.keyPath(path) + ".@count"
        case .aggregate(let aggregate, let list, let element):
            PredicateFormat.keyPath(list + [aggregate.rawValue] + element)
        case .subqueryCount(let list, let variable, let predicate):
            "SUBQUERY(\(PredicateFormat.keyPath(list)), $\(variable), \(predicate)).@count"
        }
    }
}

/// A value handed to a string predicate for `%@`, `%K`, `%d`, `%f` or `$0`.
package enum QueryArgument: Sendable, Hashable {
    /// One value (a string argument is also what `%K` reads as a key path).
    case value(StoreValue)
    /// An array or set of values (for `IN %@` and `BETWEEN %@`).
    case list([StoreValue])
}

/// The key-path components that read a map (`Map<String, V>`) other than as its values: they
/// follow the map property's name. `scores['a']` is `["scores", "[a"]` (a component that no
/// property name can spell), `scores.@allKeys` is `["scores", "@allKeys"]`, and
/// `scores.@allValues` (the values, as `scores` alone) is `["scores", "@allValues"]`.
package enum MapPathComponent: Equatable {
    case key(String)
    case allKeys
    case allValues

    /// The component for the value at `key`.
    package static func component(forKey key: String) -> String { "[" + key }

    package static let allKeysComponent = "@allKeys"
    package static let allValuesComponent = "@allValues"

    /// The component an `@word` of a string predicate spells (`@allKeys`, `@allValues`, in
    /// any case), or nil.
    package static func component(atWord word: String) -> String? {
        switch word.lowercased() {
        case "allkeys": allKeysComponent
        case "allvalues": allValuesComponent
        default: nil
        }
    }

    /// The map access a component spells; nil for a property name.
    package init?(_ component: String) {
        if component.hasPrefix("[") {
            self = .key(String(component.dropFirst()))
        } else if component == Self.allKeysComponent {
            self = .allKeys
        } else if component == Self.allValuesComponent {
            self = .allValues
        } else {
            return nil
        }
    }

    /// How the component is written in a string predicate.
    var spelling: String {
        switch self {
        case .key(let key): "[\(PredicateFormat.string(key))]"
        case .allKeys: "@allKeys"
        case .allValues: "@allValues"
        }
    }
}

/// The key-path components that read into a list or dictionary nested in a mixed property:
/// `mixed[0]`, `mixed[LAST]`, `mixed['key']` (or `mixed.key`), `mixed[*]` (every element or
/// value: the path then yields any number of values, ANY by default), `mixed.@size` and
/// `mixed.@type`. Keys are spelled as a map's (`MapPathComponent.key`) or as plain names;
/// positions and `[*]` as components no property name or map key spells (they start with a
/// control character the lexer never produces).
package enum MixedPathComponent: Equatable, Hashable, Sendable {
    /// An element of a nested list by position; a negative one counts from the end
    /// (`[LAST]` is -1).
    case index(Int)
    /// A value of a nested dictionary by key.
    case key(String)
    /// Every element of a nested list, or every value of a nested dictionary.
    case all
    /// The number of elements or entries of a nested collection (`@size`, `@count`).
    case size
    /// The name of the value's kind (`@type`): "null", "bool", "int", "float", "double",
    /// "string", "binary", "date", "objectId", "decimal128", "uuid", "object", "list" or
    /// "dictionary".
    case type

    private static let marker = "\u{1}"

    /// The key-path component for the element at `index`.
    package static func component(index: Int) -> String { marker + String(index) }
    /// The key-path component `[*]`.
    package static let allComponent = marker + "*"
    /// The key-path component `@size` on a mixed value.
    package static let sizeComponent = marker + "@size"
    /// The key-path component `@type`.
    package static let typeComponent = "@type"

    /// The access a component spells: a position, `[*]`, `@size`, `@type`, a map-style key
    /// or (any other name) a key.
    package init(_ component: String) {
        if component == Self.allComponent {
            self = .all
        } else if component == Self.sizeComponent {
            self = .size
        } else if component == Self.typeComponent {
            self = .type
        } else if component.hasPrefix(Self.marker), let index = Int(component.dropFirst(Self.marker.count)) {
            self = .index(index)
        } else if case .key(let key)? = MapPathComponent(component) {
            self = .key(key)
        } else {
            self = .key(component)
        }
    }

    /// Whether a component is one only a mixed path has (a position, `[*]`, `@size`, `@type`).
    package static func isMixedOnly(_ component: String) -> Bool {
        component.hasPrefix(marker) || component == typeComponent
    }

    /// How the component is written in a string predicate.
    var spelling: String {
        switch self {
        case .index(let index): index == -1 ? "[LAST]" : "[\(index)]"
        case .key(let key): "[\(PredicateFormat.string(key))]"
        case .all: "[*]"
        case .size: ".@size"
        case .type: ".@type"
        }
    }
}
