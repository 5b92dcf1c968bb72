import StrataStore

/// The type-safe query DSL of `Results.where { }`: `$0.name == "x"`, `$0.age > 3`,
/// `$0.owner.name == "Ann"`, combined with `&&`, `||` and `!`.
@dynamicMemberLookup
public struct Query<T> {
    let path: [String]
    let predicate: QueryPredicate?

    init(path: [String], predicate: QueryPredicate? = nil) {
        self.path = path
        self.predicate = predicate
    }

    /// A property of the object.
    public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> where T: Object {
        Query<V>(path: path + KeyPathRecorder.names(keyPath))
    }

    /// A property of a linked (optional) object.
    public subscript<Wrapped: Object, V>(dynamicMember keyPath: KeyPath<Wrapped, V>) -> Query<V> where T == Wrapped? {
        Query<V>(path: path + KeyPathRecorder.names(keyPath))
    }

    fileprivate func compare(_ op: QueryPredicate.Operator, _ value: StoreValue) -> Query<Bool> {
        Query<Bool>(path: [], predicate: .compare(path, op, value))
    }
}

/// Comparisons of a property with a value: `$0.age > 3`, `$0.name == "Ann"`. Ordering
/// comparisons apply to numbers, strings, dates, ObjectIds and Decimal128s; nil never orders.
extension Query where T: _PersistableInsideOptional {
    public static func == (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.equal, rhs._strataStore(nil)) }
    public static func != (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.notEqual, rhs._strataStore(nil)) }
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.less, rhs._strataStore(nil)) }
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.lessOrEqual, rhs._strataStore(nil)) }
    public static func > (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greater, rhs._strataStore(nil)) }
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greaterOrEqual, rhs._strataStore(nil)) }
}

/// Comparisons of an optional property: `$0.nickname == nil`, `$0.count != 5`.
extension Query {
    public static func == <W: _PersistableScalar>(lhs: Query, rhs: W?) -> Query<Bool> where T == W? {
        lhs.compare(.equal, rhs.map { $0._strataStore(nil) } ?? .null)
    }
    public static func != <W: _PersistableScalar>(lhs: Query, rhs: W?) -> Query<Bool> where T == W? {
        lhs.compare(.notEqual, rhs.map { $0._strataStore(nil) } ?? .null)
    }
    public static func < <W: _PersistableScalar>(lhs: Query, rhs: W) -> Query<Bool> where T == W? { lhs.compare(.less, rhs._strataStore(nil)) }
    public static func <= <W: _PersistableScalar>(lhs: Query, rhs: W) -> Query<Bool> where T == W? { lhs.compare(.lessOrEqual, rhs._strataStore(nil)) }
    public static func > <W: _PersistableScalar>(lhs: Query, rhs: W) -> Query<Bool> where T == W? { lhs.compare(.greater, rhs._strataStore(nil)) }
    public static func >= <W: _PersistableScalar>(lhs: Query, rhs: W) -> Query<Bool> where T == W? { lhs.compare(.greaterOrEqual, rhs._strataStore(nil)) }
}

/// Combining conditions: `&&`, `||` and `!`.
extension Query where T == Bool {
    public static func && (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> { Query(path: [], predicate: .and(lhs.asPredicate, rhs.asPredicate)) }
    public static func || (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> { Query(path: [], predicate: .or(lhs.asPredicate, rhs.asPredicate)) }
    public static prefix func ! (query: Query<Bool>) -> Query<Bool> { Query(path: [], predicate: .not(query.asPredicate)) }

    /// A bare Bool property used as a condition (`$0.done`) means `== true`.
    var asPredicate: QueryPredicate { predicate ?? .compare(path, .equal, .bool(true)) }
}

/// A compiled condition on objects.
indirect enum QueryPredicate {
    enum Operator { case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual }

    case compare([String], Operator, StoreValue)
    case and(QueryPredicate, QueryPredicate)
    case or(QueryPredicate, QueryPredicate)
    case not(QueryPredicate)

    /// The keys of matching objects, in key order. Equality on an indexed property or the
    /// primary key uses the index.
    func evaluate(in context: TableContext) throws -> [ObjectKey] {
        let table = context.table
        if case .compare(let path, .equal, let value) = self, path.count == 1,
           let index = table.schema.propertyIndex(named: path[0]),
           table.schema.properties[index].isIndexed || table.schema.properties[index].isPrimaryKey {
            return try table.find(value, inIndexOf: index)
        }
        var result: [ObjectKey] = []
        try table.forEachCluster { cluster in
            for row in 0..<cluster.count where try matches(context: context, table: table, cluster: cluster, row: row) {
                result.append(cluster.key(at: row))
            }
            return true
        }
        return result
    }

    /// Whether the object at `row` of `cluster` matches: the first step of each path is read
    /// from the cluster's column chunks directly; links are followed by key.
    func matches(context: TableContext, table: TableAccess, cluster: ClusterView, row: Int) throws -> Bool {
        switch self {
        case .and(let a, let b):
            return try a.matches(context: context, table: table, cluster: cluster, row: row)
                && b.matches(context: context, table: table, cluster: cluster, row: row)
        case .or(let a, let b):
            return try a.matches(context: context, table: table, cluster: cluster, row: row)
                || b.matches(context: context, table: table, cluster: cluster, row: row)
        case .not(let a):
            return try !a.matches(context: context, table: table, cluster: cluster, row: row)
        case .compare(let path, let op, let expected):
            guard let first = path.first, let index = table.schema.propertyIndex(named: first) else {
                fatalError("'\(table.schema.name)' has no property '\(path.first ?? "")'")
            }
            let property = table.schema.properties[index]
            var value: StoreValue? = try cluster.column(index).value(row, kind: property.kind)
            if path.count > 1 {
                if case .link(let target)? = value, let targetName = property.objectType, let next = context.session.table(named: targetName) {
                    value = try resolve(Array(path.dropFirst()), from: next, key: target, session: context.session)
                } else {
                    value = nil
                }
            }
            guard let value else { return op == .notEqual ? !expected.isNull : expected.isNull && op == .equal }
            return QueryPredicate.compare(value, op, expected)
        }
    }

    private func resolve(_ path: [String], from table: TableAccess, key: ObjectKey, session: StoreSession) throws -> StoreValue? {
        var table = table
        var key = key
        for (step, name) in path.enumerated() {
            guard let index = table.schema.propertyIndex(named: name) else {
                fatalError("'\(table.schema.name)' has no property '\(name)'")
            }
            let value = try table.value(key, property: index)
            if step == path.count - 1 { return value }
            guard case .link(let target) = value, let targetName = table.schema.properties[index].objectType,
                  let next = session.table(named: targetName) else { return nil }
            table = next
            key = target
        }
        return nil
    }

    static func compare(_ value: StoreValue, _ op: Operator, _ expected: StoreValue) -> Bool {
        switch op {
        case .equal: return value == expected
        case .notEqual: return value != expected
        default:
            guard let order = order(value, expected) else { return false }
            switch op {
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .greaterOrEqual: return order >= 0
            default: return false
            }
        }
    }

    /// -1, 0 or 1 for comparable values of the same kind; nil otherwise (nulls never order).
    static func order(_ a: StoreValue, _ b: StoreValue) -> Int? {
        func cmp<C: Comparable>(_ x: C, _ y: C) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        switch (a, b) {
        case (.int(let x), .int(let y)): return cmp(x, y)
        case (.double(let x), .double(let y)): return cmp(x, y)
        case (.float(let x), .float(let y)): return cmp(x, y)
        case (.string(let x), .string(let y)): return cmp(x, y)
        case (.date(let x), .date(let y)): return cmp(x, y)
        case (.bool(let x), .bool(let y)): return cmp(x ? 1 : 0, y ? 1 : 0)
        case (.objectId(let x), .objectId(let y)): return cmp(x, y)
        case (.decimal128(let x), .decimal128(let y)): return cmp(x, y)
        case (.uuid(let x), .uuid(let y)): return cmp(x.uuidString, y.uuidString)
        default: return nil
        }
    }
}
