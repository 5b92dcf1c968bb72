import Foundation

// The NSPredicate-format parser behind `filter("age > %@", 3)`. It is purely syntactic: it turns
// the text and its arguments into a `QueryPredicate` and knows nothing about schemas; the query
// compiler resolves the names and types afterwards.
//
// Grammar (keywords are case-insensitive):
//
//   predicate   := and ( ("OR" | "||") and )*
//   and         := unary ( ("AND" | "&&") unary )*
//   unary       := ("NOT" | "!") unary | "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE"
//                | comparison
//   comparison  := [ "ANY" | "SOME" | "ALL" | "NONE" ] operand operator [ options ] operand
//   operator    := "==" | "=" | "!=" | "<>" | "<" | "<=" | "=<" | ">" | ">=" | "=>"
//                | "BEGINSWITH" | "ENDSWITH" | "CONTAINS" | "LIKE" | "IN" | "BETWEEN"
//   options     := "[c]" | "[d]" | "[cd]"
//   operand     := literal | argument | keypath | "$" variable ( "." name )*
//                | "{" [ value ( "," value )* ] "}"
//                | "SUBQUERY" "(" keypath "," "$" variable "," predicate ")" "." ("@count" | "@size")
//   keypath     := name ( "." ( name | "@count" | "@size" | "@min" | "@max" | "@sum" | "@avg" ) )*
//   name        := word | "#" word | "%K" | "@links" "." type "." property
//
// `@links.Person.dogs` names the objects of type Person whose property `dogs` (a link or a
// list of links) points at the object: a list of links, as a `LinkingObjects` property is.

/// Parses NSPredicate-format strings into `QueryPredicate`s.
package enum PredicateParser {
    /// How deeply parentheses, NOT and SUBQUERY may nest.
    package static let maximumDepth = 1_000
    /// How deeply SUBQUERYs may nest inside each other (each level is parsed recursively).
    package static let maximumSubqueryDepth = 100

    /// Parses an NSPredicate-format string. Arguments fill `%@`, `%K`, `%d`, `%f` in order and
    /// `$0`, `$1`, … by index.
    package static func parse(_ format: String, arguments: [QueryArgument]) throws(QueryError) -> QueryPredicate {
        let scalars = Array(format.unicodeScalars)
        do {
            let tokens = try PredicateLexer.tokenize(scalars)
            var parser = Parser(tokens: tokens, scalars: scalars, arguments: arguments)
            return try parser.parseAll()
        } catch {
            throw QueryError(error.kind, error.message, position: characterOffset(ofScalar: error.offset, in: format))
        }
    }

    /// The character offset of the character that contains the scalar at `offset`.
    static func characterOffset(ofScalar offset: Int, in format: String) -> Int {
        var scalarsSeen = 0
        var characters = 0
        for character in format {
            let count = character.unicodeScalars.count
            if scalarsSeen + count > offset { return characters }
            scalarsSeen += count
            characters += 1
        }
        return characters
    }
}

/// Words with a meaning of their own; as property names they need `#` (or `%K`).
let predicateKeywords: Set<String> = [
    "and", "or", "not", "any", "some", "all", "none", "in", "between", "like", "beginswith",
    "endswith", "contains", "truepredicate", "falsepredicate", "true", "false", "nil", "null",
    "subquery", "matches", "yes", "no",
]

private struct Parser {
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

    // MARK: Operands

    mutating func parseOperand() throws(Failure) -> Operand {
        let token = current
        switch token.kind {
        case .literal(let value):
            advance()
            return Operand(operand: .constant(value), start: token.start)
        case .openBrace:
            return try parseList()
        case .formatArgument(let letter):
            if letter == "K" {
                let path = try keyPathArgument()
                return try parsePathContinuation(path, start: token.start)
            }
            advance()
            return try argumentOperand(sequentialArgument(letter, token: token), token: token)
        case .indexedArgument(let n):
            advance()
            return try argumentOperand(indexedArgument(n, token: token), token: token)
        case .variable(let name):
            guard variables.contains(name) else {
                throw syntax("unknown variable '$\(name)': a variable is declared by SUBQUERY(list, $\(name), …)")
            }
            advance()
            var path: [String] = []
            while current.kind == .dot || current.kind == .openBracket {
                if current.kind == .openBracket {
                    path.append(MapPathComponent.component(forKey: try mapKey()))
                    continue
                }
                advance()
                let component = current
                switch component.kind {
                case .word(let word), .escapedWord(let word):
                    path.append(word)
                    advance()
                case .formatArgument("K"):
                    path += try keyPathArgument()
                case .atWord(let word) where MapPathComponent.component(atWord: word) != nil:
                    path.append(MapPathComponent.component(atWord: word)!)
                    advance()
                case .atWord(let word):
                    throw Failure(kind: .unsupported,
                                  message: "'@\(word)' on a SUBQUERY variable's path is not supported",
                                  offset: component.start)
                default:
                    throw syntax("expected a property name after '.', found \(text(of: component))")
                }
            }
            return Operand(operand: .variable(name, path), start: token.start)
        case .word(let word):
            switch word.lowercased() {
            case "true", "yes":
                advance()
                return Operand(operand: .constant(.bool(true)), start: token.start)
            case "false", "no":
                advance()
                return Operand(operand: .constant(.bool(false)), start: token.start)
            case "nil", "null":
                advance()
                return Operand(operand: .constant(.null), start: token.start)
            case "subquery":
                return try parseSubquery()
            case let lower where predicateKeywords.contains(lower):
                throw syntax("expected a value or key path, found the keyword \(text(of: token)) (to use it as a property name write #\(word) or pass it with %K)")
            default:
                advance()
                return try parsePathContinuation([word], start: token.start)
            }
        case .escapedWord(let word):
            advance()
            return try parsePathContinuation([word], start: token.start)
        case .atWord(let word) where word.lowercased() == "links":
            advance()
            return try parsePathContinuation([try linksName(at: token)], start: token.start)
        case .atWord(let word):
            throw syntax("'@\(word)' must follow a list's key path, as in 'dogs.@\(word)'")
        case .end:
            throw syntax("expected a value or key path, found the end of the format")
        default:
            throw syntax("expected a value or key path, found \(text(of: token))")
        }
    }

    /// Reads the `.Type.property` after `@links` (already consumed, at `token`) and returns
    /// the path component the query compiler resolves: `"@links.Type.property"`.
    mutating func linksName(at token: PredicateToken) throws(Failure) -> String {
        var parts: [String] = []
        for _ in 0..<2 {
            guard current.kind == .dot else {
                throw syntax("'@links' must be followed by a type and one of its properties, as in '@links.Person.dogs'", at: token)
            }
            advance()
            switch current.kind {
            case .word(let word), .escapedWord(let word):
                parts.append(word)
                advance()
            default:
                throw syntax("'@links' must be followed by a type and one of its properties, as in '@links.Person.dogs'; found \(text(of: current))")
            }
        }
        return "@links." + parts.joined(separator: ".")
    }

    /// Reads `.name`, `.%K` and `.@count`-style components after the first ones of a key path.
    mutating func parsePathContinuation(_ first: [String], start: Int) throws(Failure) -> Operand {
        var names = first
        var collection: (name: String, token: PredicateToken)?
        var afterCollection: [String] = []
        while current.kind == .dot || current.kind == .openBracket {
            var new: [String] = []
            if current.kind == .openBracket {
                new = [MapPathComponent.component(forKey: try mapKey())]
                if collection != nil { afterCollection += new } else { names += new }
                continue
            }
            advance()
            let component = current
            switch component.kind {
            case .word(let word), .escapedWord(let word):
                new = [word]
                advance()
            case .formatArgument("K"):
                new = try keyPathArgument()
            case .atWord(let word) where word.lowercased() == "links" && collection == nil:
                advance()
                new = [try linksName(at: component)]
            case .atWord(let word) where MapPathComponent.component(atWord: word) != nil:
                advance()
                new = [MapPathComponent.component(atWord: word)!]
            case .atWord(let word):
                if let collection {
                    throw syntax("'@\(word)' cannot follow '@\(collection.name)'", at: component)
                }
                let lower = word.lowercased()
                guard ["count", "size", "min", "max", "sum", "avg"].contains(lower) else {
                    throw Failure(kind: .unsupported,
                                  message: "'@\(word)' is not supported (supported: @count, @size, @min, @max, @sum, @avg, and @allKeys and @allValues on maps)",
                                  offset: component.start)
                }
                collection = (lower, component)
                advance()
                continue
            default:
                throw syntax("expected a property name after '.', found \(text(of: component))")
            }
            if let collection {
                if collection.name == "count" || collection.name == "size" {
                    throw syntax("'@\(collection.name)' must end the key path", at: component)
                }
                afterCollection += new
            } else {
                names += new
            }
        }
        guard let collection else { return Operand(operand: .keyPath(names), start: start) }
        let aggregate: QueryAggregate
        switch collection.name {
        case "count", "size": return Operand(operand: .count(names), start: start)
        case "min": aggregate = .min
        case "max": aggregate = .max
        case "sum": aggregate = .sum
        default: aggregate = .average
        }
        return Operand(operand: .aggregate(aggregate, list: names, element: afterCollection), start: start)
    }

    /// `['key']`, `["key"]`, `[%@]` or `[$0]` after a map's name: the key (a string).
    mutating func mapKey() throws(Failure) -> String {
        let open = current
        advance()
        let token = current
        let key: String
        switch token.kind {
        case .literal(.string(let text)):
            key = text
            advance()
        case .formatArgument("@"), .indexedArgument:
            let argument: (QueryArgument, String)
            if case .indexedArgument(let n) = token.kind {
                argument = try indexedArgument(n, token: token)
            } else {
                argument = try sequentialArgument("@", token: token)
            }
            advance()
            guard case .value(.string(let text)) = argument.0 else {
                throw Failure(kind: .invalidArgument, message: "\(argument.1) is a map key, so it must be a string, not \(kindName(argument.0))", offset: token.start)
            }
            key = text
        default:
            throw syntax("expected a map key (a string or an argument) after '[', found \(text(of: token))", at: open)
        }
        guard current.kind == .closeBracket else {
            throw syntax("expected ']' after the map key, found \(text(of: current))")
        }
        advance()
        return key
    }

    /// `{a, b, …}`: constants and single-value arguments.
    mutating func parseList() throws(Failure) -> Operand {
        let open = current
        advance()
        var values: [StoreValue] = []
        if current.kind == .closeBrace {
            advance()
            return Operand(operand: .list(values), start: open.start)
        }
        while true {
            let token = current
            let element = try parseOperand()
            switch element.operand {
            case .constant(let value): values.append(value)
            default:
                throw Failure(kind: element.argument == nil ? .syntax : .invalidArgument,
                              message: "a list {…} holds constant values only, not \(describe(element))",
                              offset: token.start)
            }
            if current.kind == .comma {
                advance()
                continue
            }
            if current.kind == .closeBrace {
                advance()
                return Operand(operand: .list(values), start: open.start)
            }
            if current.kind == .end {
                throw syntax("unbalanced '{': the list is never closed", at: open)
            }
            throw syntax("expected ',' or '}' in the list, found \(text(of: current))")
        }
    }

    /// `SUBQUERY(list, $x, predicate).@count`
    mutating func parseSubquery() throws(Failure) -> Operand {
        let start = current
        try enter(start)
        if variables.count >= PredicateParser.maximumSubqueryDepth {
            throw syntax("SUBQUERYs nest more than \(PredicateParser.maximumSubqueryDepth) levels deep")
        }
        advance()
        guard current.kind == .openParen else { throw syntax("expected '(' after SUBQUERY, found \(text(of: current))") }
        advance()
        let listToken = current
        let list = try parseOperand()
        guard case .keyPath(let path) = list.operand else {
            throw syntax("SUBQUERY's first argument must be the key path of a list, not \(describe(list))", at: listToken)
        }
        guard current.kind == .comma else { throw syntax("expected ',' after SUBQUERY's list, found \(text(of: current))") }
        advance()
        guard case .variable(let name) = current.kind else {
            throw syntax("expected SUBQUERY's variable ($x), found \(text(of: current))")
        }
        advance()
        guard current.kind == .comma else { throw syntax("expected ',' after SUBQUERY's variable, found \(text(of: current))") }
        advance()
        variables.append(name)
        let predicate = try parseOr()
        variables.removeLast()
        guard current.kind == .closeParen else {
            if current.kind == .end { throw syntax("unbalanced SUBQUERY(: it is never closed", at: start) }
            throw syntax("expected ')' to close SUBQUERY, found \(text(of: current))")
        }
        advance()
        guard current.kind == .dot else {
            throw syntax("SUBQUERY(…) must be followed by .@count, found \(text(of: current))")
        }
        advance()
        guard case .atWord(let word) = current.kind, ["count", "size"].contains(word.lowercased()) else {
            throw syntax("SUBQUERY(…) must be followed by .@count, found \(text(of: current))")
        }
        advance()
        depth -= 1
        return Operand(operand: .subqueryCount(list: path, variable: name, predicate: predicate), start: start.start)
    }

    // MARK: Arguments

    mutating func sequentialArgument(_ letter: Character, token: PredicateToken) throws(Failure) -> (QueryArgument, String) {
        let position = nextSequential
        let label = "%\(letter) (argument \(position + 1))"
        guard position < arguments.count else {
            throw Failure(kind: .invalidArgument,
                          message: "\(label) has no value: \(arguments.count) argument\(arguments.count == 1 ? " was" : "s were") given",
                          offset: token.start)
        }
        nextSequential += 1
        let argument = arguments[position]
        switch letter {
        case "d":
            guard case .value(.int) = argument else {
                throw Failure(kind: .invalidArgument, message: "\(label) must be an integer, not \(kindName(argument))", offset: token.start)
            }
            return (argument, label)
        case "f":
            switch argument {
            case .value(.double), .value(.float): return (argument, label)
            case .value(.int(let value)): return (.value(.double(Double(value))), label)
            default:
                throw Failure(kind: .invalidArgument, message: "\(label) must be a floating-point number, not \(kindName(argument))", offset: token.start)
            }
        default:
            return (argument, label)
        }
    }

    mutating func indexedArgument(_ n: Int, token: PredicateToken) throws(Failure) -> (QueryArgument, String) {
        guard n < arguments.count else {
            throw Failure(kind: .invalidArgument,
                          message: "$\(n) has no value: \(arguments.count) argument\(arguments.count == 1 ? " was" : "s were") given",
                          offset: token.start)
        }
        indexedUsed = max(indexedUsed, n + 1)
        return (arguments[n], "$\(n)")
    }

    func argumentOperand(_ argument: (QueryArgument, String), token: PredicateToken) -> Operand {
        switch argument.0 {
        case .value(let value): Operand(operand: .constant(value), start: token.start, argument: argument.1)
        case .list(let values): Operand(operand: .list(values), start: token.start, argument: argument.1)
        }
    }

    /// `%K`: the next argument, a string, as key path components.
    mutating func keyPathArgument() throws(Failure) -> [String] {
        let token = current
        let (argument, label) = try sequentialArgument("K", token: token)
        advance()
        guard case .value(.string(let path)) = argument else {
            throw Failure(kind: .invalidArgument, message: "\(label) must be a string naming a property, not \(kindName(argument))", offset: token.start)
        }
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard components.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("@") }) else {
            throw Failure(kind: .invalidArgument, message: "\(label) \"\(path)\" is not a key path (names separated by single dots)", offset: token.start)
        }
        return components
    }

    func kindName(_ argument: QueryArgument) -> String {
        switch argument {
        case .list: "a list"
        case .value(let value):
            switch value {
            case .null: "nil"
            case .bool: "a Bool"
            case .int: "an integer"
            case .float: "a Float"
            case .double: "a Double"
            case .string(let s): "the string \"\(s)\""
            case .data: "Data"
            case .date: "a Date"
            case .uuid: "a UUID"
            case .objectId: "an ObjectId"
            case .decimal128: "a Decimal128"
            case .link, .typedLink: "an object"
            }
        }
    }
}
