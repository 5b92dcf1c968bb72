/// One step of a resolved key path.
struct QueryStep {
    // Alive while used: the session holds its tables for life, and is held while queries run.
    unowned(unsafe) let table: TableAccess
    let property: Int
    let kind: PropertyKind
    let isList: Bool
    let isOptional: Bool
    /// For links and lists of links: the target table (nil while the file has none yet).
    let target: TableAccess?
    let name: String
    /// Whether the step goes through an inverse relationship (a `LinkingObjects` property):
    /// it reads, as a list of links, the objects of `target` (the origin table) whose
    /// property `property` (of the origin table, not of `table`) links to the object.
    var isInverse = false
    /// For a map property read by key (`scores['a']`): the key. The step reads one value (nil
    /// when the map has no such key), not the list of values.
    var mapKey: String?
    /// For a map property's keys (`scores.@allKeys`): the step reads the keys, as strings.
    var isMapKeys = false
    /// For a mixed property read into (`value[0]`, `value['k']`, `value[*]`, `value.@size`):
    /// the way from the property's value to the values the step reads.
    var mixedPath: [MixedPathComponent] = []

    /// The kind of the values the step reads: `kind`, but for `@size` and `@type` on a mixed
    /// value.
    var resultKind: PropertyKind {
        switch mixedPath.last {
        case .size?: .int
        case .type?: .string
        default: kind
        }
    }
}

/// A resolved key path, from the queried object or from a SUBQUERY variable.
struct QueryPath {
    enum Origin { case root, variable(Int) }
    let origin: Origin
    let steps: [QueryStep]
    /// Whether the path crosses a list (so it yields any number of values).
    let isCollection: Bool
    /// The kind of the values at the end: nil for a variable that stands for a primitive
    /// element whose kind is `variableKind`.
    let kind: PropertyKind?
    let text: String
}

/// A resolved operand.
enum QueryValueSource {
    case constant(StoreValue)
    case list([StoreValue])
    case path(QueryPath)
    case count(QueryPath)
    case aggregate(QueryAggregate, list: QueryPath, element: [QueryStep])
    case subqueryCount(list: QueryPath, variable: Int, predicate: QueryNode)
}

/// A comparison evaluated object by object.
final class GeneralComparison {
    let lhs: QueryValueSource
    let op: QueryOperator
    let rhs: QueryValueSource
    let options: QueryStringOptions
    let modifier: QueryCollectionModifier

    init(lhs: QueryValueSource, op: QueryOperator, rhs: QueryValueSource, options: QueryStringOptions, modifier: QueryCollectionModifier) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.options = options
        self.modifier = modifier
    }
}

/// A compiled predicate.
indirect enum QueryNode {
    case constant(Bool)
    case and([QueryNode])
    case or([QueryNode])
    case not(QueryNode)
    case kernel(QueryKernel)
    case general(GeneralComparison)

    /// How deep the tree is (the evaluator keeps one mask per level).
    var depth: Int {
        switch self {
        case .constant, .kernel, .general: 1
        case .and(let parts), .or(let parts): 1 + (parts.map(\.depth).max() ?? 0)
        case .not(let inner): 1 + inner.depth
        }
    }
}
