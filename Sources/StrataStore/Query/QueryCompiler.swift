// Resolving a `QueryPredicate` against one table's schema: names become property indices and
// tables, types are checked, and each comparison becomes either a column kernel (a property of
// the queried object against a constant: runs over whole chunks) or a general comparison
// (links, lists, aggregates, subqueries: evaluated per object).

/// Resolves predicates against a table.
struct QueryCompiler {
    let root: TableAccess
    private var variables: [(name: String, table: TableAccess?, kind: PropertyKind)] = []

    init(root: TableAccess) {
        self.root = root
    }

    mutating func compile(_ predicate: QueryPredicate) throws(QueryError) -> QueryNode {
        switch predicate {
        case .constant(let value):
            return .constant(value)
        case .and(let parts):
            var nodes: [QueryNode] = []
            for part in parts {
                let node = try compile(part)
                if case .constant(true) = node { continue }
                if case .constant(false) = node { return .constant(false) }
                nodes.append(node)
            }
            return nodes.isEmpty ? .constant(true) : (nodes.count == 1 ? nodes[0] : .and(nodes))
        case .or(let parts):
            var nodes: [QueryNode] = []
            for part in parts {
                let node = try compile(part)
                if case .constant(false) = node { continue }
                if case .constant(true) = node { return .constant(true) }
                nodes.append(node)
            }
            return nodes.isEmpty ? .constant(false) : (nodes.count == 1 ? nodes[0] : .or(nodes))
        case .not(let inner):
            let node = try compile(inner)
            if case .constant(let value) = node { return .constant(!value) }
            return .not(node)
        case .comparison(let comparison):
            return try compile(comparison)
        }
    }

    // MARK: Comparisons

    private mutating func compile(_ comparison: QueryComparison) throws(QueryError) -> QueryNode {
        var lhs = try resolve(comparison.lhs)
        var rhs = try resolve(comparison.rhs)
        var op = comparison.op
        let options = comparison.options

        // A constant on the left of a path: mirror it (`3 < age` is `age > 3`; `5 IN scores`
        // is `ANY scores == 5`).
        if isConstant(lhs), case .path(let path) = rhs {
            if op == .in, path.isCollection {
                swap(&lhs, &rhs)
                op = .equal
            } else if let mirrored = op.mirrored {
                swap(&lhs, &rhs)
                op = mirrored
            }
        }
        try check(lhs, op, rhs, options: options)

        if isConstant(lhs) && isConstant(rhs) {
            return .constant(GeneralEvaluator.compareConstants(lhs, op, rhs, options: options))
        }
        if case .path(let path) = lhs, !path.isCollection, case .root = path.origin, path.steps.count == 1, path.steps[0].mapKey == nil,
           path.steps[0].mixedPath.isEmpty,
           let node = kernelNode(path.steps[0], op, rhs, options: options) {
            return node
        }
        if op == .in, case .list(let values) = rhs, values.isEmpty, !isCollection(lhs) { return .constant(false) }
        return .general(GeneralComparison(lhs: lhs, op: op, rhs: rhs, options: options, modifier: comparison.modifier))
    }

    private func isConstant(_ source: QueryValueSource) -> Bool {
        switch source {
        case .constant, .list: true
        default: false
        }
    }

    private func isCollection(_ source: QueryValueSource) -> Bool {
        if case .path(let path) = source { return path.isCollection }
        return false
    }

    /// A column kernel for `property op constant`, when one applies.
    private func kernelNode(_ step: QueryStep, _ op: QueryOperator, _ rhs: QueryValueSource, options: QueryStringOptions) -> QueryNode? {
        switch (op, rhs) {
        case (.in, .list(let values)):
            guard values.count <= 16 else { return nil }
            var nodes: [QueryNode] = []
            for value in values {
                guard let kernel = QueryKernel.make(step, .equal, value, options: options) else { return nil }
                nodes.append(.kernel(kernel))
            }
            return nodes.isEmpty ? .constant(false) : (nodes.count == 1 ? nodes[0] : .or(nodes))
        case (.between, .list(let values)):
            guard values.count == 2, let low = QueryKernel.make(step, .greaterOrEqual, values[0], options: options),
                  let high = QueryKernel.make(step, .lessOrEqual, values[1], options: options) else { return nil }
            return .and([.kernel(low), .kernel(high)])
        case (_, .constant(let value)):
            return QueryKernel.make(step, op, value, options: options).map { .kernel($0) }
        default:
            return nil
        }
    }

    /// Resolves a key path from the queried object (for sorting, distinct and aggregates).
    mutating func resolvePath(_ names: [String]) throws(QueryError) -> QueryValueSource {
        try resolve(.keyPath(names))
    }

    // MARK: Operands

    private mutating func resolve(_ operand: QueryOperand) throws(QueryError) -> QueryValueSource {
        switch operand {
        case .constant(let value):
            return .constant(value)
        case .list(let values):
            return .list(values)
        case .keyPath(let names):
            return .path(try path(names, origin: .root))
        case .variable(let name, let names):
            guard let slot = variables.lastIndex(where: { $0.name == name }) else {
                throw QueryError(.unknownProperty, "'$\(name)' is not a SUBQUERY variable in scope")
            }
            return .path(try path(names, origin: .variable(slot)))
        case .count(let names):
            let list = try path(names, origin: .root)
            if let last = list.steps.last, last.kind == .mixed, !last.isList {
                // `mixed.@count` / `mixed.@size`: the size of the collection nested in it.
                return .path(try path(names + [MixedPathComponent.sizeComponent], origin: .root))
            }
            guard list.steps.last?.isList == true else {
                throw QueryError(.typeMismatch, "'\(list.text)' is not a list, so @count does not apply to it")
            }
            return .count(list)
        case .aggregate(let aggregate, let names, let elementNames):
            let list = try path(names, origin: .root)
            guard let last = list.steps.last, last.isList else {
                throw QueryError(.typeMismatch, "'\(list.text)' is not a list, so \(aggregate.rawValue) does not apply to it")
            }
            var element: [QueryStep] = []
            var kind = last.kind
            if last.kind == .link {
                guard !elementNames.isEmpty else {
                    throw QueryError(.typeMismatch, "\(aggregate.rawValue) on the list of objects '\(list.text)' needs a property: '\(list.text).\(aggregate.rawValue).property'")
                }
                guard let target = last.target else {
                    return .aggregate(aggregate, list: list, element: [])  // no objects of that type yet
                }
                element = try steps(elementNames, from: target, prefix: list.text + "." + aggregate.rawValue).steps
                guard element.allSatisfy({ !$0.isList }) else {
                    throw QueryError(.typeMismatch, "\(aggregate.rawValue) cannot go through another list in '\(list.text)'")
                }
                kind = element.last?.kind ?? .link
            } else if !elementNames.isEmpty {
                throw QueryError(.typeMismatch, "'\(list.text)' is a list of \(last.kind) values, which have no property '\(elementNames.joined(separator: "."))'")
            }
            guard kind.isSummable || ((aggregate == .min || aggregate == .max) && kind == .date) else {
                throw QueryError(.typeMismatch, "\(aggregate.rawValue) applies to numbers\(aggregate == .min || aggregate == .max ? " and dates" : ""), not to '\(list.text)' (\(kind))")
            }
            return .aggregate(aggregate, list: list, element: element)
        case .subqueryCount(let names, let variable, let predicate):
            let list = try path(names, origin: .root)
            guard let last = list.steps.last, last.isList else {
                throw QueryError(.typeMismatch, "SUBQUERY needs a list, and '\(list.text)' is not one")
            }
            variables.append((variable, last.target, last.kind))
            defer { variables.removeLast() }
            let slot = variables.count - 1
            let node = try compile(predicate)
            return .subqueryCount(list: list, variable: slot, predicate: node)
        }
    }

    private func path(_ names: [String], origin: QueryPath.Origin) throws(QueryError) -> QueryPath {
        switch origin {
        case .root:
            guard !names.isEmpty else { throw QueryError(.unknownProperty, "an empty key path") }
            let (steps, collection) = try steps(names, from: root, prefix: nil)
            return QueryPath(origin: .root, steps: steps, isCollection: collection, kind: steps.last?.resultKind,
                             text: names.contains(where: MixedPathComponent.isMixedOnly) ? PredicateFormat.keyPath(names) : names.joined(separator: "."))
        case .variable(let slot):
            let variable = variables[slot]
            let text = (["$" + variable.name] + names).joined(separator: ".")
            if names.isEmpty {
                return QueryPath(origin: origin, steps: [], isCollection: false, kind: variable.kind, text: text)
            }
            guard variable.kind == .link, let table = variable.table else {
                if variable.kind == .link {
                    // No objects of the type exist yet: the path reads nothing.
                    return QueryPath(origin: origin, steps: [], isCollection: true, kind: nil, text: text)
                }
                throw QueryError(.typeMismatch, "'$\(variable.name)' is a \(variable.kind) value and has no property '\(names.joined(separator: "."))'")
            }
            let (steps, collection) = try steps(names, from: table, prefix: "$" + variable.name)
            return QueryPath(origin: origin, steps: steps, isCollection: collection, kind: steps.last?.resultKind, text: text)
        }
    }

    /// The origin named by a `@links.Type.property` path component (see PredicateParser);
    /// nil for any other name.
    private static func linksComponent(_ name: String) throws(QueryError) -> InverseProperty? {
        guard name.hasPrefix("@links.") else { return nil }
        let parts = name.dropFirst("@links.".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw QueryError(.syntax, "'\(name)' must name a type and one of its properties, as in '@links.Person.dogs'")
        }
        return InverseProperty(originType: String(parts[0]), originProperty: String(parts[1]))
    }

    private func steps(_ names: [String], from start: TableAccess, prefix: String?) throws(QueryError) -> (steps: [QueryStep], isCollection: Bool) {
        var table: TableAccess? = start
        var steps: [QueryStep] = []
        var collection = false
        var walked = prefix.map { [$0] } ?? []
        var consumed = false  // the component was a map's @allKeys, @allValues or [key]
        for (position, name) in names.enumerated() {
            if consumed {
                consumed = false
                continue
            }
            guard let current = table else {
                // A link to a type with no table yet: nothing to read, but the names can't be
                // checked either. Such paths read as null.
                break
            }
            guard let index = current.schema.propertyIndex(named: name) else {
                if let inverse = try Self.linksComponent(name) ?? current.session.store.inverse(name, of: current.schema.name) {
                    // The linking objects: a collection of the origin type's objects.
                    let origin = current.session.table(named: inverse.originType)
                    if origin == nil, name.hasPrefix("@links."), current.session.store.schema[inverse.originType] == nil {
                        throw QueryError(.unknownProperty, "'\(name)' names the type '\(inverse.originType)', which this database does not have")
                    }
                    let originIndex = origin?.schema.propertyIndex(named: inverse.originProperty)
                    if let origin {
                        guard let originIndex else {
                            throw QueryError(.unknownProperty, "'\(current.schema.name).\(name)' links back through '\(inverse.originType).\(inverse.originProperty)', which does not exist")
                        }
                        let originProperty = origin.schema.properties[originIndex]
                        guard originProperty.kind == .link, originProperty.objectType == current.schema.name else {
                            throw QueryError(.typeMismatch, "'\(current.schema.name).\(name)' links back through '\(inverse.originType).\(inverse.originProperty)', which is \(originProperty.typeDescription), not a link to '\(current.schema.name)'")
                        }
                    }
                    // Without an origin table there are no linking objects yet: the path reads
                    // nothing (as a link to a type with no table does).
                    steps.append(QueryStep(table: current, property: originIndex ?? 0, kind: .link, isList: true, isOptional: true,
                                           target: origin, name: name, isInverse: true))
                    collection = true
                    walked.append(name)
                    table = origin
                    continue
                }
                let known = current.schema.properties.map(\.name).joined(separator: ", ")
                throw QueryError(.unknownProperty, "'\(current.schema.name)' has no property '\(name)'" + (walked.isEmpty ? "" : " (in '\((walked + [name]).joined(separator: "."))')") + "; its properties are: \(known)")
            }
            let property = current.schema.properties[index]
            let target = property.kind == .link ? property.objectType.flatMap { current.session.table(named: $0) } : nil
            let next = position + 1 < names.count ? names[position + 1] : nil
            if property.kind == .mixed, !property.isList, position + 1 < names.count {
                // The rest of the path reads into a list or dictionary nested in the value.
                let mixedPath = names[(position + 1)...].map(MixedPathComponent.init)
                if let misplaced = mixedPath.dropLast().first(where: { $0 == .size || $0 == .type }) {
                    throw QueryError(.unsupported, "'\(misplaced.spelling.drop { $0 == "." })' must end the key path '\(PredicateFormat.keyPath(names))'")
                }
                var step = QueryStep(table: current, property: index, kind: .mixed, isList: false, isOptional: true,
                                     target: nil, name: name)
                step.mixedPath = mixedPath
                steps.append(step)
                return (steps, collection || mixedPath.contains(.all))
            }
            if let next, MixedPathComponent.isMixedOnly(next) {
                let access = MixedPathComponent(next)
                throw QueryError(.unsupported, "'\(current.schema.name).\(name)' is a \(property.typeDescription), not a mixed value, so '\(access.spelling.drop { $0 == "." })' does not apply to it (positions, [*], @size on a value and @type read into mixed values)")
            }
            if let next, let access = MapPathComponent(next) {
                guard property.isMap else {
                    throw QueryError(.typeMismatch, "'\(current.schema.name).\(name)' is a \(property.typeDescription), not a map, so \(access.spelling) does not apply to it")
                }
                consumed = true
                walked.append(name)
                switch access {
                case .allValues:
                    steps.append(QueryStep(table: current, property: index, kind: property.kind, isList: true,
                                           isOptional: property.isOptional || property.kind == .link, target: target, name: name))
                    collection = true
                    table = target
                case .allKeys:
                    guard position + 2 == names.count else {
                        throw QueryError(.typeMismatch, "'@allKeys' must end the key path (in '\((walked + names[(position + 1)...]).joined(separator: "."))')")
                    }
                    steps.append(QueryStep(table: current, property: index, kind: .string, isList: true, isOptional: false,
                                           target: nil, name: name, isMapKeys: true))
                    collection = true
                    table = nil
                case .key(let key):
                    if position + 2 < names.count && property.kind != .link {
                        throw QueryError(.typeMismatch, "'\(current.schema.name).\(name)' maps to \(property.kind) values, which have no property '\(names[position + 2])'")
                    }
                    steps.append(QueryStep(table: current, property: index, kind: property.kind, isList: false,
                                           isOptional: true, target: target, name: name, mapKey: key))
                    table = target
                }
                continue
            }
            if position < names.count - 1 && property.kind != .link {
                throw QueryError(.typeMismatch, "'\(current.schema.name).\(name)' is a \(property.typeDescription), not a link, so '\((walked + names[position...]).joined(separator: "."))' cannot go through it")
            }
            steps.append(QueryStep(table: current, property: index, kind: property.kind, isList: property.isList,
                                   isOptional: property.isOptional || property.kind == .link, target: target, name: name))
            if property.isList { collection = true }
            walked.append(name)
            table = target
        }
        return (steps, collection)
    }

    // MARK: Type checks

    private func kind(of source: QueryValueSource) -> PropertyKind? {
        switch source {
        case .constant(let value): value.kind
        case .list(let values): values.first(where: { !$0.isNull })?.kind
        case .path(let path): path.kind
        case .count: .int
        case .aggregate(let aggregate, let list, let element):
            aggregate == .average ? .double : (element.last?.kind ?? list.steps.last?.kind)
        case .subqueryCount: .int
        }
    }

    private func describe(_ source: QueryValueSource) -> String {
        switch source {
        case .constant(let value): value.description
        case .list(let values): "{" + values.map(\.description).joined(separator: ", ") + "}"
        case .path(let path): "'\(path.text)' (\(path.kind.map { "\($0)" } ?? "object"))"
        case .count(let path): "'\(path.text).@count'"
        case .aggregate(let aggregate, let list, _): "'\(list.text).\(aggregate.rawValue)'"
        case .subqueryCount: "a SUBQUERY count"
        }
    }

    private func check(_ lhs: QueryValueSource, _ op: QueryOperator, _ rhs: QueryValueSource, options: QueryStringOptions) throws(QueryError) {
        switch op {
        case .in:
            switch rhs {
            case .list, .path: break
            default: throw QueryError(.typeMismatch, "IN needs a list on its right, not \(describe(rhs))")
            }
        case .between:
            guard case .list(let values) = rhs, values.count == 2 else {
                throw QueryError(.typeMismatch, "BETWEEN needs two values, e.g. BETWEEN {1, 10}")
            }
        default:
            if case .list = rhs { throw QueryError(.typeMismatch, "\(op.rawValue) cannot compare with a list \(describe(rhs)); use IN") }
        }
        let left = kind(of: lhs)
        var rightKinds: [PropertyKind] = []
        switch rhs {
        case .list(let values): rightKinds = values.compactMap(\.kind)
        default: if let k = kind(of: rhs) { rightKinds = [k] }
        }
        guard let left else { return }
        // A mixed value compares with anything: values of another kind than its own are
        // simply not equal (numbers compare by value across kinds, as they do elsewhere).
        if left == .mixed || rightKinds.contains(.mixed) {
            if (left == .mixed && rightKinds.contains(.link)) || (left == .link && rightKinds.contains(.mixed)) {
                throw QueryError(.typeMismatch, "cannot compare \(describe(lhs)) with \(describe(rhs)): a mixed value compares with an object given as a mixed value (MixedValue.object(…)), a link with the object itself")
            }
            return
        }
        if [.beginsWith, .endsWith, .contains, .like].contains(op) {
            guard left == .string || (left == .data && op != .like) else {
                throw QueryError(.typeMismatch, "\(op.rawValue) applies to strings\(op == .like ? "" : " and data"), not to \(describe(lhs))")
            }
        }
        if !options.isEmpty && left != .string {
            throw QueryError(.typeMismatch, "[c] and [d] apply to strings, not to \(describe(lhs))")
        }
        let numeric: Set<PropertyKind> = [.int, .float, .double, .decimal128]
        for right in rightKinds {
            let compatible = left == right || (numeric.contains(left) && numeric.contains(right))
            guard compatible else {
                throw QueryError(.typeMismatch, "cannot compare \(describe(lhs)) with \(describe(rhs)) (\(right))")
            }
        }
        if [.less, .lessOrEqual, .greater, .greaterOrEqual, .between].contains(op), left == .link {
            throw QueryError(.typeMismatch, "links cannot be ordered: \(describe(lhs)) with \(op.rawValue)")
        }
    }
}
