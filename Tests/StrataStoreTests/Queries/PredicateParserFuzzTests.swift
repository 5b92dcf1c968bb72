import Foundation
import StrataStore
import StrataTestWorkloads
import Testing

/// Seeded fuzzing of the string-predicate parser: random predicates must survive a round trip
/// through `description`, and random or mangled text must either parse or throw a
/// `QueryError` with a position inside the text — never crash or hang.
///
/// `STRATA_FUZZ_ITERATIONS` sets the number of inputs per test (default 5,000, a few seconds
/// in a debug build);
/// `STRATA_FUZZ_SEED` changes the seed.
@Suite struct PredicateParserFuzzTests {
    static var iterations: Int {
        ProcessInfo.processInfo.environment["STRATA_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 5_000
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["STRATA_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x5EED_F022
    }

    /// Arguments offered to every fuzzed format: placeholders beyond them, or of the wrong kind,
    /// must be `.invalidArgument` errors.
    static let arguments: [QueryArgument] = [
        .value(.int(3)), .value(.string("name")), .value(.double(1.5)), .list([.int(1), .int(2)]),
        .value(.null), .value(.string("owner.dogs")),
    ]

    @Test func generatedPredicatesRoundTripThroughDescription() throws {
        var generator = PredicateGenerator(seed: Self.seed)
        for i in 0..<Self.iterations {
            let predicate = generator.predicate(depth: 0)
            let text = predicate.description
            do {
                let parsed = try PredicateParser.parse(text, arguments: [])
                if parsed != predicate {
                    Issue.record("iteration \(i): \(text) parsed back as \(parsed.description)")
                    return
                }
            } catch {
                Issue.record("iteration \(i): \(text) does not parse: \(error)")
                return
            }
        }
    }

    /// The same predicates with their constants passed as `%@` (or `$n`) arguments parse to
    /// the same predicate.
    @Test func generatedPredicatesWithArgumentsParse() throws {
        var generator = PredicateGenerator(seed: Self.seed &+ 3)
        generator.allowsLinks = true
        for i in 0..<Self.iterations {
            let predicate = generator.predicate(depth: 0)
            var arguments: [QueryArgument] = []
            let marked = Self.markConstants(predicate, &arguments)
            let indexed = i % 2 == 1
            var text = ""
            var remainder = Substring(marked.description)
            var n = 0
            while let range = remainder.range(of: Self.marker) {
                text += remainder[..<range.lowerBound]
                text += indexed ? "$\(n)" : "%@"
                n += 1
                remainder = remainder[range.upperBound...]
            }
            text += remainder
            do {
                let parsed = try PredicateParser.parse(text, arguments: arguments)
                if parsed != predicate {
                    Issue.record("iteration \(i): \(text) with \(arguments) parsed as \(parsed.description), not \(predicate.description)")
                    return
                }
            } catch {
                Issue.record("iteration \(i): \(text) with \(arguments) does not parse: \(error)")
                return
            }
        }
    }

    static let marker = "ARGUMENT_MARKER"

    /// Replaces every constant and list operand with a marker key path, appending its value to
    /// `arguments` in the order `description` writes them.
    static func markConstants(_ predicate: QueryPredicate, _ arguments: inout [QueryArgument]) -> QueryPredicate {
        switch predicate {
        case .constant: return predicate
        case .and(let parts): return .and(parts.map { markConstants($0, &arguments) })
        case .or(let parts): return .or(parts.map { markConstants($0, &arguments) })
        case .not(let inner): return .not(markConstants(inner, &arguments))
        case .comparison(var comparison):
            comparison.lhs = markConstants(comparison.lhs, &arguments)
            comparison.rhs = markConstants(comparison.rhs, &arguments)
            return .comparison(comparison)
        }
    }

    static func markConstants(_ operand: QueryOperand, _ arguments: inout [QueryArgument]) -> QueryOperand {
        switch operand {
        case .constant(let value):
            arguments.append(.value(value))
            return .keyPath([marker])
        case .list(let values):
            arguments.append(.list(values))
            return .keyPath([marker])
        case .subqueryCount(let list, let variable, let predicate):
            return .subqueryCount(list: list, variable: variable, predicate: markConstants(predicate, &arguments))
        default:
            return operand
        }
    }

    @Test func randomTextParsesOrThrowsAQueryError() {
        var random = SplitMix64(seed: Self.seed &+ 1)
        var generator = PredicateGenerator(seed: Self.seed &+ 2)
        var parsed = 0, failed = 0
        for i in 0..<Self.iterations {
            let input: String
            switch i % 4 {
            case 0: input = Self.randomBytes(&random)
            case 1: input = Self.tokenSoup(&random)
            default: input = Self.mutate(generator.predicate(depth: 0).description, &random)
            }
            if Self.check(input) { parsed += 1 } else { failed += 1 }
        }
        // Both outcomes occur: the inputs are neither all garbage nor all valid.
        #expect(parsed > 0)
        #expect(failed > 0)
    }

    /// Parses `input`; returns whether it parsed. Records an issue for an error position
    /// outside the text.
    static func check(_ input: String) -> Bool {
        // Once without arguments and once with all of them (most formats use none, and extra
        // arguments are an error).
        let withoutArguments = check(input, arguments: [])
        let withArguments = check(input, arguments: arguments)
        return withoutArguments || withArguments
    }

    static func check(_ input: String, arguments: [QueryArgument]) -> Bool {
        do {
            _ = try PredicateParser.parse(input, arguments: arguments)
            return true
        } catch {
            let length = input.count
            if let position = error.position, position < 0 || position > length {
                Issue.record("error position \(position) outside 0...\(length) for \(input.debugDescription): \(error)")
            } else if error.position == nil {
                Issue.record("error without a position for \(input.debugDescription): \(error)")
            }
            return false
        }
    }

    static func randomBytes(_ random: inout SplitMix64) -> String {
        let count = random.int(0...40)
        let bytes = (0..<count).map { _ in
            // Mostly printable ASCII, some control and high bytes (decoded leniently).
            random.chance(0.85) ? UInt8(random.int(0x20...0x7E)) : UInt8(random.int(0...255))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static let soup = [
        "age", "dogs", ".", "@count", "@size", "@avg", "@min", "@keys", "name", "#in", "(", ")", "{", "}", ",",
        "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "&&", "||", "!", "AND", "OR", "NOT",
        "ANY", "ALL", "NONE", "SOME", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE",
        "[c]", "[cd]", "[x", "TRUEPREDICATE", "FALSEPREDICATE", "true", "nil", "SUBQUERY", "$x", "$0", "$7",
        "%@", "%K", "%d", "%f", "%", "3", "-1", "0x1F", "1.5e3", "'str'", "\"q\\\"\"", "'open", "\\", "2021-02-20@17:30:15",
        "2021-02-30@1:2:3", "T12:5", "T1:-1", "oid(507f1f77bcf86cd799439011)", "oid(12)", "uuid(3b241101-e2bb-4255-8caf-4136c566a962)",
        "uuid(x)", "B64\"AAEC\"", "é", "\u{301}", " ", "  ",
        // Maps: keys, @allKeys, @allValues, and their broken forms.
        "['k']", "[\"a b\"]", "[%@]", "[$0]", "[ 'x' ]", "[", "]", "['open", "@allKeys", "@allValues", ".@allkeys",
    ]

    static func tokenSoup(_ random: inout SplitMix64) -> String {
        let count = random.int(0...14)
        return (0..<count).map { _ in soup[random.int(0..<soup.count)] }
            .joined(separator: random.chance(0.7) ? " " : "")
    }

    static func mutate(_ text: String, _ random: inout SplitMix64) -> String {
        var scalars = Array(text.unicodeScalars)
        for _ in 0..<random.int(1...3) {
            switch random.int(0..<5) {
            case 0 where !scalars.isEmpty:  // delete a run
                let start = random.int(0..<scalars.count)
                let end = min(scalars.count, start + random.int(1...4))
                scalars.removeSubrange(start..<end)
            case 1:  // insert a soup token
                let at = random.int(0...scalars.count)
                scalars.insert(contentsOf: soup[random.int(0..<soup.count)].unicodeScalars, at: at)
            case 2 where !scalars.isEmpty:  // replace one scalar with punctuation
                let at = random.int(0..<scalars.count)
                let choices: [Unicode.Scalar] = ["(", ")", "'", "\"", "\\", ".", "@", "$", "%", "{", "}", "[", "]", ",", "-", ":", "#", "0"]
                scalars[at] = choices[random.int(0..<choices.count)]
            case 3 where !scalars.isEmpty:  // truncate
                scalars.removeSubrange(random.int(0..<scalars.count)...)
            default:  // duplicate a run
                guard !scalars.isEmpty else { break }
                let start = random.int(0..<scalars.count)
                let end = min(scalars.count, start + random.int(1...8))
                scalars.insert(contentsOf: scalars[start..<end], at: random.int(0...scalars.count))
            }
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }
}

/// Random predicates of the shapes the parser produces, so that a predicate's description
/// parses back to an equal one.
struct PredicateGenerator {
    var random: SplitMix64
    /// SUBQUERY variables in scope.
    var variables: [String] = []
    /// Whether constants may be links (which have no literal, only arguments).
    var allowsLinks = false

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    static let names = ["age", "name", "dogs", "owner", "a", "_b", "größe", "x1", "in", "AND", "nil", "Any", "oid", "uuid", "T1", "b64", "between", "no", "Yes"]
    static let variableNames = ["x", "d", "o", "in", "v2"]

    mutating func pick<T>(_ items: [T]) -> T { items[random.int(0..<items.count)] }

    mutating func path() -> [String] {
        var path = [pick(Self.names)]
        for _ in 0..<random.int(0...2) {
            // Now and then a map's component (a key, @allKeys, @allValues) after a name.
            if random.chance(0.2) {
                path.append(pick([MapPathComponent.component(forKey: pick(["k", "a b", "it's", "q\"", "é", ""])),
                                  MapPathComponent.allKeysComponent, MapPathComponent.allValuesComponent]))
            }
            path.append(pick(Self.names))
        }
        return path
    }

    mutating func predicate(depth: Int) -> QueryPredicate {
        let leaf = depth >= 3 || random.chance(0.5)
        if leaf {
            if random.chance(0.04) { return .constant(random.chance(0.5)) }
            return .comparison(comparison(depth: depth))
        }
        switch random.int(0..<3) {
        case 0: return .and((0..<random.int(2...4)).map { _ in predicate(depth: depth + 1) })
        case 1: return .or((0..<random.int(2...4)).map { _ in predicate(depth: depth + 1) })
        default: return .not(predicate(depth: depth + 1))
        }
    }

    mutating func comparison(depth: Int) -> QueryComparison {
        let ops: [QueryOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual,
                                    .beginsWith, .endsWith, .contains, .like, .in, .between]
        let op = pick(ops)
        var lhs = leftOperand(depth: depth)
        let rhs: QueryOperand
        switch op {
        case .in:
            switch random.int(0..<3) {
            case 0: rhs = .list((0..<random.int(0...4)).map { _ in value() })
            case 1 where !variables.isEmpty: rhs = .variable(pick(variables), path())
            default: rhs = .keyPath(path())
            }
        case .between:
            rhs = .list([value(), value()])
        default:
            rhs = random.chance(0.8) ? .constant(value()) : .keyPath(path())
        }
        // A constant on the left of a path would be mirrored by the parser; keep constants
        // on the left only against constants, or for operators that have no mirror.
        if random.chance(0.05), case .constant = rhs {
            lhs = .constant(value())
        }
        var options: QueryStringOptions = []
        if [.equal, .notEqual, .beginsWith, .endsWith, .contains, .like].contains(op) {
            options = QueryStringOptions(rawValue: UInt8(random.int(0...3)))
        }
        var modifier = QueryCollectionModifier.any
        switch lhs {
        case .keyPath, .variable: modifier = pick([.any, .all, .none])
        default: break
        }
        return QueryComparison(lhs, op, rhs, options: options, modifier: modifier)
    }

    mutating func leftOperand(depth: Int) -> QueryOperand {
        switch random.int(0..<10) {
        case 0: return .count(path())
        case 1: return .aggregate(pick([.min, .max, .sum, .average]), list: path(), element: random.chance(0.5) ? [] : path())
        case 2 where depth < 2:
            let variable = pick(Self.variableNames)
            variables.append(variable)
            let inner = predicate(depth: depth + 1)
            variables.removeLast()
            return .subqueryCount(list: path(), variable: variable, predicate: inner)
        case 3 where !variables.isEmpty:
            return .variable(pick(variables), random.chance(0.3) ? [] : path())
        default:
            return .keyPath(path())
        }
    }

    mutating func value() -> StoreValue {
        switch random.int(0..<(allowsLinks ? 11 : 10)) {
        case 10: return .link(ObjectKey(Int64(random.int(0...1_000))))
        case 0: return .null
        case 1: return .bool(random.chance(0.5))
        case 2: return .int(Int64(bitPattern: random.next()) >> random.int(0...63))
        case 3:
            let double = Double(bitPattern: random.next())
            return .double(double.isFinite ? double : Double(random.int(-1000...1000)) / 8)
        case 4: return .string(string())
        case 5:
            // Whole seconds and nanoseconds, as every date literal is read.
            let seconds = Int64(random.int(-5_000_000_000...5_000_000_000))
            let nanos = Int64(random.int(0...999_999_999))
            return .date(Date(timeIntervalSinceReferenceDate: Double(seconds - 978_307_200) + Double(nanos) / 1e9))
        case 6:
            var bytes: [UInt8] = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return .uuid(UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                     bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes.removeLast())))
        case 7:
            let bytes: [UInt8] = (0..<12).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return ObjectId(bytes: bytes).map(StoreValue.objectId) ?? .null
        case 8: return .data(Data((0..<random.int(0...6)).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        default: return .int(Int64(random.int(-100...100)))
        }
    }

    mutating func string() -> String {
        let pieces: [String] = ["a", "Z", " ", "'", "\"", "\\", "\n", "\t", "\r", "\u{0}", "\u{1}", "\u{7F}", "é", "e\u{301}", "\u{301}", "日", "🐕", "%@", "$0", "*", "?", ")"]
        return (0..<random.int(0...6)).map { _ in pick(pieces) }.joined()
    }
}
