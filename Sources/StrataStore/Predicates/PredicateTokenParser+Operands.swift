import Foundation

// Operands of a predicate: literals, key paths (with `@links`, map keys and collection
// operators), `{…}` lists, SUBQUERY, and the `%@`/`%K`/`$n` arguments that fill them.

extension PredicateTokenParser {
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
            while current.kind == .dot || current.kind == .openBracket || isCollectionAccess {
                if case .collectionAccess(let component) = current.kind {
                    path.append(component)
                    advance()
                    continue
                }
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
        while current.kind == .dot || current.kind == .openBracket || isCollectionAccess {
            var new: [String] = []
            if case .collectionAccess(let component) = current.kind {
                advance()
                if collection != nil { afterCollection.append(component) } else { names.append(component) }
                continue
            }
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
            case .atWord(let word) where word.lowercased() == "type" && collection == nil:
                advance()
                new = [MixedPathComponent.typeComponent]
            case .atWord(let word):
                if let collection {
                    throw syntax("'@\(word)' cannot follow '@\(collection.name)'", at: component)
                }
                let lower = word.lowercased()
                guard ["count", "size", "min", "max", "sum", "avg"].contains(lower) else {
                    throw Failure(kind: .unsupported,
                                  message: "'@\(word)' is not supported (supported: @count, @size, @min, @max, @sum, @avg, @allKeys and @allValues on maps, and @type on mixed values)",
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

    /// Whether the current token is a `[0]`, `[LAST]` or `[*]` into a mixed value.
    var isCollectionAccess: Bool {
        if case .collectionAccess = current.kind { return true }
        return false
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
            case .mixedList: "a list"
            case .mixedDictionary: "a dictionary"
            }
        }
    }
}
