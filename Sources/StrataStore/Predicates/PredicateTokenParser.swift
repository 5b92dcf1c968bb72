import Foundation

// The recursive descent behind `PredicateParser.parse`: one parser per string, over its tokens
// (PredicateLexer), one method per rule of the grammar in PredicateParser.swift. The
// predicates and comparisons are here; operands, key paths, lists, SUBQUERY and arguments are
// in PredicateTokenParser+Operands.swift.

/// A parse in progress: the tokens, the position reached, the arguments used so far.
struct PredicateTokenParser {
    typealias Failure = PredicateLexer.Failure

    let tokens: [PredicateToken]
    let scalars: [Unicode.Scalar]
    let arguments: [QueryArgument]
    var index = 0
    var depth = 0
    /// The next argument `%@`, `%K`, `%d` and `%f` read.
    var nextSequential = 0
    /// One past the highest `$n` used.
    var indexedUsed = 0
    /// SUBQUERY variables in scope, innermost last (one per nested SUBQUERY).
    var variables: [String] = []

    init(tokens: [PredicateToken], scalars: [Unicode.Scalar], arguments: [QueryArgument]) {
        self.tokens = tokens
        self.scalars = scalars
        self.arguments = arguments
    }

    /// An operand as parsed, with where it came from for error messages.
    struct Operand {
        var operand: QueryOperand
        var start: Int
        /// Set for operands that came from an argument: its description, e.g. "%@ (argument 2)".
        var argument: String?
    }

    // MARK: Tokens

    var current: PredicateToken {
        tokens[min(index, tokens.count - 1)]
    }

    mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    func text(of token: PredicateToken) -> String {
        if token.kind == .end { return "the end of the format" }
        var s = String.UnicodeScalarView()
        s.append(contentsOf: scalars[max(0, token.start)..<min(token.end, scalars.count)])
        return "'" + String(s) + "'"
    }

    /// The keyword (lowercased) the current token spells, if it is a bare word.
    var keyword: String? { current.keyword }

    func syntax(_ message: String, at token: PredicateToken? = nil) -> Failure {
        Failure(kind: .syntax, message: message, offset: (token ?? current).start)
    }

    // MARK: Predicates

    mutating func parseAll() throws(Failure) -> QueryPredicate {
        if current.kind == .end {
            throw syntax("the predicate is empty: write a condition such as \"age > 3\", or TRUEPREDICATE")
        }
        let predicate = try parseOr()
        if current.kind != .end {
            if current.kind == .closeParen {
                throw syntax("unbalanced ')': there is no '(' to close")
            }
            if case .word(let word) = current.kind, ["sort", "distinct", "limit"].contains(word.lowercased()) {
                throw Failure(kind: .unsupported,
                              message: "\(word.uppercased())(…) clauses are not supported in a predicate: sort, make distinct or take a prefix of the results instead",
                              offset: current.start)
            }
            throw syntax("unexpected \(text(of: current)) after a complete condition: expected AND, OR or the end")
        }
        let used = max(nextSequential, indexedUsed)
        if arguments.count > used {
            throw Failure(kind: .invalidArgument,
                          message: "\(arguments.count) arguments were given but the format uses \(used)",
                          offset: scalars.count)
        }
        return predicate
    }

    /// One level of parentheses while a predicate is read: the disjuncts and conjuncts so far,
    /// and the NOTs waiting for the next condition.
    struct Group {
        var open: PredicateToken?
        var disjuncts: [QueryPredicate] = []
        var conjuncts: [QueryPredicate] = []
        var pendingNots = 0

        /// The group's predicate once its last condition was added.
        mutating func endConjunction() {
            disjuncts.append(conjuncts.count == 1 ? conjuncts[0] : .and(conjuncts))
            conjuncts = []
        }

        mutating func finish() -> QueryPredicate {
            endConjunction()
            return disjuncts.count == 1 ? disjuncts[0] : .or(disjuncts)
        }
    }

    /// `predicate` in the grammar: ORs of ANDs of (NOT-prefixed) conditions and parenthesised
    /// groups. Parentheses and NOT are handled with an explicit stack, so deep nesting costs no
    /// call stack. Stops before a token that cannot continue the predicate.
    mutating func parseOr() throws(Failure) -> QueryPredicate {
        var groups = [Group(open: nil)]
        let startDepth = depth
        while true {
            // Prefixes: NOT and '('.
            let token = current
            if token.kind == .not || keyword == "not" {
                try enter(token)
                groups[groups.count - 1].pendingNots += 1
                advance()
                continue
            }
            if token.kind == .openParen {
                try enter(token)
                advance()
                if current.kind == .closeParen { throw syntax("empty parentheses: expected a condition") }
                groups.append(Group(open: token))
                continue
            }
            var value = try parseCondition()
            // Suffixes: close groups, then AND, OR, or the end of this predicate.
            while true {
                let nots = groups[groups.count - 1].pendingNots
                for _ in 0..<nots { value = .not(value) }
                depth -= nots
                groups[groups.count - 1].pendingNots = 0
                if current.kind == .and || keyword == "and" {
                    groups[groups.count - 1].conjuncts.append(value)
                    advance()
                    break
                }
                if current.kind == .or || keyword == "or" {
                    groups[groups.count - 1].conjuncts.append(value)
                    groups[groups.count - 1].endConjunction()
                    advance()
                    break
                }
                groups[groups.count - 1].conjuncts.append(value)
                let finished = groups[groups.count - 1].finish()
                guard let open = groups[groups.count - 1].open else {
                    assert(depth == startDepth, "PredicateParser: unbalanced nesting count")
                    return finished
                }
                guard current.kind == .closeParen else {
                    if current.kind == .end {
                        throw syntax("unbalanced '(': it is never closed", at: open)
                    }
                    throw syntax("expected ')' or AND/OR, found \(text(of: current))")
                }
                advance()
                depth -= 1
                groups.removeLast()
                value = finished
            }
        }
    }

    mutating func enter(_ token: PredicateToken) throws(Failure) {
        depth += 1
        if depth > PredicateParser.maximumDepth {
            throw syntax("the predicate nests more than \(PredicateParser.maximumDepth) levels deep (parentheses, NOT and SUBQUERY)", at: token)
        }
    }

    /// TRUEPREDICATE, FALSEPREDICATE or a comparison.
    mutating func parseCondition() throws(Failure) -> QueryPredicate {
        switch keyword {
        case "truepredicate":
            advance()
            return .constant(true)
        case "falsepredicate":
            advance()
            return .constant(false)
        default:
            return try parseComparison()
        }
    }

    mutating func parseComparison() throws(Failure) -> QueryPredicate {
        let start = current
        var modifier: QueryCollectionModifier?
        switch keyword {
        case "any", "some": modifier = .any
        case "all": modifier = .all
        case "none": modifier = QueryCollectionModifier.none
        default: break
        }
        if modifier != nil { advance() }

        if current.kind == .end {
            throw syntax(modifier == nil ? "expected a condition, found the end of the format" : "expected a key path after \(text(of: start))")
        }
        let lhs = try parseOperand()
        let operatorToken = current
        let op = try parseOperator(after: lhs)
        var options: QueryStringOptions = []
        if case .options(let letters) = current.kind {
            options = try parseOptions(letters, for: op)
            advance()
        }
        if current.kind == .end {
            throw syntax("expected a value after \(text(of: operatorToken)), found the end of the format")
        }
        let rhs = try parseOperand()
        return .comparison(try makeComparison(lhs, op, rhs, options: options, modifier: modifier, start: start, operatorToken: operatorToken))
    }

    mutating func parseOperator(after lhs: Operand) throws(Failure) -> QueryOperator {
        let token = current
        if case .comparison(let op) = token.kind {
            advance()
            return op
        }
        if case .word(let word) = token.kind {
            let op: QueryOperator? = switch word.lowercased() {
            case "beginswith": .beginsWith
            case "endswith": .endsWith
            case "contains": .contains
            case "like": .like
            case "in": .in
            case "between": .between
            default: nil
            }
            if let op {
                advance()
                return op
            }
            if word.lowercased() == "matches" || word.lowercased() == "text" {
                throw Failure(kind: .unsupported, message: "the \(word.uppercased()) operator is not supported", offset: token.start)
            }
        }
        if token.kind == .end {
            throw syntax("expected an operator (==, <, BEGINSWITH, IN, …) after \(describe(lhs)), found the end of the format")
        }
        throw syntax("expected an operator (==, <, BEGINSWITH, IN, …) after \(describe(lhs)), found \(text(of: token))")
    }

    func describe(_ operand: Operand) -> String {
        if let argument = operand.argument { return argument }
        return "'\(operand.operand)'"
    }

    func parseOptions(_ letters: String, for op: QueryOperator) throws(Failure) -> QueryStringOptions {
        var options: QueryStringOptions = []
        for letter in letters {
            switch letter {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            default:
                throw syntax("unknown option '\(letter)' in [\(letters)]: the options are [c], [d] and [cd]")
            }
        }
        if options.isEmpty { throw syntax("empty options []: the options are [c], [d] and [cd]") }
        switch op {
        case .equal, .notEqual, .beginsWith, .endsWith, .contains, .like: break
        default:
            throw syntax("options [\(letters)] apply to ==, !=, BEGINSWITH, ENDSWITH, CONTAINS and LIKE, not to \(op.rawValue)")
        }
        return options
    }

    func makeComparison(_ lhs: Operand, _ op: QueryOperator, _ rhs: Operand, options: QueryStringOptions,
                        modifier: QueryCollectionModifier?, start: PredicateToken,
                        operatorToken: PredicateToken) throws(Failure) -> QueryComparison {
        if case .list = lhs.operand {
            throw Failure(kind: lhs.argument == nil ? .syntax : .invalidArgument,
                          message: "\(lhs.argument.map { "\($0) is a list; a list" } ?? "a list {…}") may only be on the right of IN or BETWEEN",
                          offset: lhs.start)
        }
        switch op {
        case .in:
            switch rhs.operand {
            case .list, .keyPath, .variable: break
            default:
                throw Failure(kind: rhs.argument == nil ? .syntax : .invalidArgument,
                              message: "the right side of IN must be a list {…}, an array argument or a list property, not \(describe(rhs))",
                              offset: rhs.start)
            }
        case .between:
            guard case .list(let values) = rhs.operand else {
                throw Failure(kind: rhs.argument == nil ? .syntax : .invalidArgument,
                              message: "the right side of BETWEEN must be a two-value list {low, high}, not \(describe(rhs))",
                              offset: rhs.start)
            }
            guard values.count == 2 else {
                throw Failure(kind: rhs.argument == nil ? .syntax : .invalidArgument,
                              message: "BETWEEN needs exactly two values {low, high}; \(describe(rhs)) has \(values.count)",
                              offset: rhs.start)
            }
        default:
            if case .list = rhs.operand {
                throw Failure(kind: rhs.argument == nil ? .syntax : .invalidArgument,
                              message: "\(rhs.argument.map { "\($0) is a list; a list" } ?? "a list {…}") may only be on the right of IN or BETWEEN, not of \(op.rawValue)",
                              offset: rhs.start)
            }
        }
        var left = lhs.operand, right = rhs.operand, op = op
        // A constant on the left of a path reads better mirrored: `3 < age` is `age > 3`.
        if case .constant = left, let mirrored = op.mirrored {
            switch right {
            case .constant, .list: break
            default:
                swap(&left, &right)
                op = mirrored
            }
        }
        if let modifier {
            switch left {
            case .keyPath, .variable: break
            default:
                throw syntax("\(text(of: start)) needs a key path through a list on the left of the comparison", at: start)
            }
            return QueryComparison(left, op, right, options: options, modifier: modifier)
        }
        return QueryComparison(left, op, right, options: options)
    }
}
