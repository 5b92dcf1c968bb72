import Foundation
import StrataStore
import Testing

/// `name.other` as a key path operand.
private func kp(_ path: String) -> QueryOperand {
    .keyPath(path.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
}

private func c(_ value: StoreValue) -> QueryOperand { .constant(value) }

private func cmp(_ lhs: QueryOperand, _ op: QueryOperator, _ rhs: QueryOperand,
                 _ options: QueryStringOptions = [], _ modifier: QueryCollectionModifier = .any) -> QueryPredicate {
    .comparison(QueryComparison(lhs, op, rhs, options: options, modifier: modifier))
}

private func parse(_ format: String, _ arguments: [QueryArgument] = []) throws -> QueryPredicate {
    try PredicateParser.parse(format, arguments: arguments)
}

/// The error parsing `format` throws (nil when it parses).
private func parseError(_ format: String, _ arguments: [QueryArgument] = []) -> QueryError? {
    do {
        _ = try PredicateParser.parse(format, arguments: arguments)
        return nil
    } catch {
        return error
    }
}

private func date(_ seconds: Int64, _ nanos: Int64 = 0) -> StoreValue {
    .date(Date(timeIntervalSinceReferenceDate: Double(seconds - 978_307_200) + Double(nanos) / 1e9))
}

@Suite struct PredicateParserTests {
    // MARK: Comparisons

    @Test(arguments: [
        ("age == 3", QueryOperator.equal), ("age = 3", .equal), ("age != 3", .notEqual), ("age <> 3", .notEqual),
        ("age < 3", .less), ("age <= 3", .lessOrEqual), ("age =< 3", .lessOrEqual), ("age > 3", .greater),
        ("age >= 3", .greaterOrEqual), ("age => 3", .greaterOrEqual), ("age==3", .equal), ("age>=3", .greaterOrEqual),
    ])
    func comparisonOperators(format: String, op: QueryOperator) throws {
        let predicate = try parse(format)
        #expect(predicate == cmp(kp("age"), op, c(.int(3))))
    }

    @Test(arguments: [
        ("3 < age", QueryOperator.greater), ("3 <= age", .greaterOrEqual), ("3 > age", .less),
        ("3 >= age", .lessOrEqual), ("3 == age", .equal), ("3 != age", .notEqual),
    ])
    func constantOnTheLeftIsMirrored(format: String, op: QueryOperator) throws {
        let predicate = try parse(format)
        #expect(predicate == cmp(kp("age"), op, c(.int(3))))
    }

    @Test func twoKeyPathsAndTwoConstantsKeepTheirOrder() throws {
        #expect(try parse("age < limit") == cmp(kp("age"), .less, kp("limit")))
        #expect(try parse("1 < 2") == cmp(c(.int(1)), .less, c(.int(2))))
        // Operators without a mirror stay as written.
        #expect(try parse("'abc' BEGINSWITH name") == cmp(c(.string("abc")), .beginsWith, kp("name")))
        #expect(try parse("3 IN scores") == cmp(c(.int(3)), .in, kp("scores")))
    }

    @Test(arguments: [
        ("name BEGINSWITH 'a'", QueryOperator.beginsWith), ("name beginswith 'a'", .beginsWith),
        ("name ENDSWITH 'a'", .endsWith), ("name CONTAINS 'a'", .contains), ("name Contains 'a'", .contains),
        ("name LIKE 'a'", .like),
    ])
    func stringOperators(format: String, op: QueryOperator) throws {
        let predicate = try parse(format)
        #expect(predicate == cmp(kp("name"), op, c(.string("a"))))
    }

    @Test func likeCarriesThePatternUnchanged() throws {
        #expect(try parse("name LIKE 'a?c*'") == cmp(kp("name"), .like, c(.string("a?c*"))))
    }

    static let optionCases: [(String, UInt8)] = [("[c]", 1), ("[d]", 2), ("[cd]", 3), ("[dc]", 3), ("[C]", 1)]

    @Test(arguments: optionCases)
    func stringOptions(options: String, raw: UInt8) throws {
        let expected = QueryStringOptions(rawValue: raw)
        for op in ["==", "!=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE"] {
            let predicate = try parse("name \(op)\(options) 'x'")
            let spaced = try parse("name \(op) \(options) 'x'")
            guard case .comparison(let comparison) = predicate else {
                Issue.record("not a comparison: \(predicate)")
                continue
            }
            #expect(comparison.options == expected)
            #expect(comparison.rhs == c(.string("x")))
            #expect(spaced == predicate)
        }
    }

    // MARK: IN and BETWEEN

    @Test func inWithALiteralListAnArrayArgumentAndAListProperty() throws {
        #expect(try parse("age IN {1, 2, 3}") == cmp(kp("age"), .in, .list([.int(1), .int(2), .int(3)])))
        #expect(try parse("age IN {}") == cmp(kp("age"), .in, .list([])))
        #expect(try parse("name IN {'a', \"b\", nil}") == cmp(kp("name"), .in, .list([.string("a"), .string("b"), .null])))
        #expect(try parse("age in %@", [.list([.int(4), .int(5)])]) == cmp(kp("age"), .in, .list([.int(4), .int(5)])))
        #expect(try parse("'x' IN tags") == cmp(c(.string("x")), .in, kp("tags")))
        #expect(try parse("age IN {%@, $1}", [.value(.int(1)), .value(.int(2))]) == cmp(kp("age"), .in, .list([.int(1), .int(2)])))
    }

    @Test func betweenWithALiteralAndAnArgument() throws {
        #expect(try parse("age BETWEEN {1, 10}") == cmp(kp("age"), .between, .list([.int(1), .int(10)])))
        #expect(try parse("age between %@", [.list([.double(1.5), .int(10)])]) == cmp(kp("age"), .between, .list([.double(1.5), .int(10)])))
    }

    // MARK: Compound predicates

    @Test func andOrNotAndPrecedence() throws {
        let a = cmp(kp("a"), .equal, c(.int(1)))
        let b = cmp(kp("b"), .equal, c(.int(2)))
        let d = cmp(kp("d"), .equal, c(.int(3)))
        #expect(try parse("a == 1 AND b == 2") == .and([a, b]))
        #expect(try parse("a == 1 && b == 2 and d == 3") == .and([a, b, d]))
        #expect(try parse("a == 1 OR b == 2 || d == 3") == .or([a, b, d]))
        // AND binds tighter than OR.
        #expect(try parse("a == 1 OR b == 2 AND d == 3") == .or([a, .and([b, d])]))
        #expect(try parse("a == 1 AND b == 2 OR d == 3") == .or([.and([a, b]), d]))
        #expect(try parse("(a == 1 OR b == 2) AND d == 3") == .and([.or([a, b]), d]))
        // NOT binds tighter than AND.
        #expect(try parse("NOT a == 1 AND b == 2") == .and([.not(a), b]))
        #expect(try parse("!a == 1") == .not(a))
        #expect(try parse("not (a == 1 or b == 2)") == .not(.or([a, b])))
        #expect(try parse("NOT NOT a == 1") == .not(.not(a)))
        // Parenthesised groups keep their structure.
        #expect(try parse("a == 1 AND (b == 2 AND d == 3)") == .and([a, .and([b, d])]))
        #expect(try parse("((a == 1))") == a)
    }

    @Test func constantPredicates() throws {
        #expect(try parse("TRUEPREDICATE") == .constant(true))
        #expect(try parse("falsepredicate") == .constant(false))
        #expect(try parse("TRUEPREDICATE AND age > 1") == .and([.constant(true), cmp(kp("age"), .greater, c(.int(1)))]))
    }

    // MARK: Key paths, collections and subqueries

    @Test func keyPathsThroughLinks() throws {
        #expect(try parse("owner.name == 'Ann'") == cmp(kp("owner.name"), .equal, c(.string("Ann"))))
        #expect(try parse("a.b.c.d > 1") == cmp(kp("a.b.c.d"), .greater, c(.int(1))))
        #expect(try parse("_private == 1") == cmp(kp("_private"), .equal, c(.int(1))))
        #expect(try parse("größe == 1") == cmp(kp("größe"), .equal, c(.int(1))))
        #expect(try parse("value2 == 1") == cmp(kp("value2"), .equal, c(.int(1))))
    }

    @Test func reservedWordsAsPropertyNamesAreEscapedWithHash() throws {
        #expect(try parse("#in == 1") == cmp(kp("in"), .equal, c(.int(1))))
        #expect(try parse("owner.#AND == 1") == cmp(kp("owner.AND"), .equal, c(.int(1))))
        #expect(try parse("#nil == nil") == cmp(kp("nil"), .equal, c(.null)))
        let error = parseError("in == 1")
        #expect(error?.kind == .syntax && error?.position == 0)
        #expect(error?.message.contains("#in") == true)
    }

    @Test func collectionModifiers() throws {
        let rhs = c(.string("r"))
        #expect(try parse("ANY dogs.name BEGINSWITH 'r'") == cmp(kp("dogs.name"), .beginsWith, rhs, [], .any))
        #expect(try parse("SOME dogs.name BEGINSWITH 'r'") == cmp(kp("dogs.name"), .beginsWith, rhs, [], .any))
        #expect(try parse("all dogs.name BEGINSWITH 'r'") == cmp(kp("dogs.name"), .beginsWith, rhs, [], .all))
        #expect(try parse("NONE dogs.name BEGINSWITH[c] 'r'") == cmp(kp("dogs.name"), .beginsWith, rhs, .caseInsensitive, .none))
        #expect(try parse("NOT ANY dogs.age > 3") == .not(cmp(kp("dogs.age"), .greater, c(.int(3)))))
        // The constant is mirrored before the modifier applies.
        #expect(try parse("ALL 3 < dogs.age") == cmp(kp("dogs.age"), .greater, c(.int(3)), [], .all))
    }

    @Test func countAndAggregates() throws {
        #expect(try parse("dogs.@count > 2") == cmp(.count(["dogs"]), .greater, c(.int(2))))
        #expect(try parse("owner.dogs.@size == 0") == cmp(.count(["owner", "dogs"]), .equal, c(.int(0))))
        #expect(try parse("2 < dogs.@COUNT") == cmp(.count(["dogs"]), .greater, c(.int(2))))
        #expect(try parse("scores.@min > 1") == cmp(.aggregate(.min, list: ["scores"], element: []), .greater, c(.int(1))))
        #expect(try parse("scores.@max > 1") == cmp(.aggregate(.max, list: ["scores"], element: []), .greater, c(.int(1))))
        #expect(try parse("scores.@sum > 1") == cmp(.aggregate(.sum, list: ["scores"], element: []), .greater, c(.int(1))))
        #expect(try parse("dogs.@avg.age >= 2.5") == cmp(.aggregate(.average, list: ["dogs"], element: ["age"]), .greaterOrEqual, c(.double(2.5))))
        #expect(try parse("owner.dogs.@sum.toy.price < 9") == cmp(.aggregate(.sum, list: ["owner", "dogs"], element: ["toy", "price"]), .less, c(.int(9))))
    }

    @Test func subqueryCount() throws {
        let predicate = try parse("SUBQUERY(dogs, $d, $d.age > 3 AND $d.name BEGINSWITH 'R').@count > 1")
        let inner = QueryPredicate.and([
            cmp(.variable("d", ["age"]), .greater, c(.int(3))),
            cmp(.variable("d", ["name"]), .beginsWith, c(.string("R"))),
        ])
        #expect(predicate == cmp(.subqueryCount(list: ["dogs"], variable: "d", predicate: inner), .greater, c(.int(1))))
    }

    @Test func subqueryNestingAndVariables() throws {
        let predicate = try parse("SUBQUERY(owners, $o, SUBQUERY(dogs, $d, $d.owner == $o).@size == 0).@count == 2")
        let inner = cmp(.subqueryCount(list: ["dogs"], variable: "d",
                                       predicate: cmp(.variable("d", ["owner"]), .equal, .variable("o", []))),
                        .equal, c(.int(0)))
        #expect(predicate == cmp(.subqueryCount(list: ["owners"], variable: "o", predicate: inner), .equal, c(.int(2))))
        // A variable is only known inside its SUBQUERY.
        let error = parseError("SUBQUERY(dogs, $d, $d.age > 1).@count > 0 AND $d.age > 1")
        #expect(error?.kind == .syntax && error?.position == 46)
    }

    // MARK: Arguments

    @Test func formatArguments() throws {
        #expect(try parse("age > %@ AND name BEGINSWITH[c] %@", [.value(.int(3)), .value(.string("a"))])
            == .and([cmp(kp("age"), .greater, c(.int(3))), cmp(kp("name"), .beginsWith, c(.string("a")), .caseInsensitive)]))
        #expect(try parse("age == %d", [.value(.int(7))]) == cmp(kp("age"), .equal, c(.int(7))))
        #expect(try parse("score == %f", [.value(.double(1.5))]) == cmp(kp("score"), .equal, c(.double(1.5))))
        #expect(try parse("score == %f", [.value(.float(1.5))]) == cmp(kp("score"), .equal, c(.float(1.5))))
        #expect(try parse("score == %f", [.value(.int(2))]) == cmp(kp("score"), .equal, c(.double(2))))
        #expect(try parse("%@ == age", [.value(.int(1))]) == cmp(kp("age"), .equal, c(.int(1))))
        #expect(try parse("date > %@", [.value(.date(Date(timeIntervalSinceReferenceDate: 5)))])
            == cmp(kp("date"), .greater, c(.date(Date(timeIntervalSinceReferenceDate: 5)))))
        #expect(try parse("owner == %@", [.value(.link(ObjectKey(4)))]) == cmp(kp("owner"), .equal, c(.link(ObjectKey(4)))))
        #expect(try parse("owner == %@", [.value(.null)]) == cmp(kp("owner"), .equal, c(.null)))
    }

    @Test func keyPathArguments() throws {
        #expect(try parse("%K == 1", [.value(.string("age"))]) == cmp(kp("age"), .equal, c(.int(1))))
        #expect(try parse("%K == 1", [.value(.string("owner.name"))]) == cmp(kp("owner.name"), .equal, c(.int(1))))
        #expect(try parse("%K == 1", [.value(.string("in"))]) == cmp(kp("in"), .equal, c(.int(1))))
        #expect(try parse("%K.@count == %@", [.value(.string("dogs")), .value(.int(0))]) == cmp(.count(["dogs"]), .equal, c(.int(0))))
        #expect(try parse("owner.%K BEGINSWITH %@", [.value(.string("name")), .value(.string("A"))])
            == cmp(kp("owner.name"), .beginsWith, c(.string("A"))))
        #expect(try parse("%K == %K", [.value(.string("a")), .value(.string("b"))]) == cmp(kp("a"), .equal, kp("b")))
    }

    @Test func indexedArgumentsAreReusable() throws {
        let arguments: [QueryArgument] = [.value(.int(1)), .value(.string("x"))]
        #expect(try parse("a == $0 OR b == $0 OR name == $1", arguments)
            == .or([cmp(kp("a"), .equal, c(.int(1))), cmp(kp("b"), .equal, c(.int(1))), cmp(kp("name"), .equal, c(.string("x")))]))
        #expect(try parse("a IN $0", [.list([.int(1)])]) == cmp(kp("a"), .in, .list([.int(1)])))
        #expect(try parse("name == $1", arguments) == cmp(kp("name"), .equal, c(.string("x"))))
    }

    // MARK: Literals

    @Test func integerLiterals() throws {
        let cases: [(String, Int64)] = [
            ("0", 0), ("42", 42), ("-7", -7), ("0x1F", 31), ("0XfF", 255), ("-0x10", -16),
            ("9223372036854775807", .max), ("-9223372036854775808", .min), ("-0x8000000000000000", .min),
        ]
        for (literal, value) in cases {
            #expect(try parse("n == \(literal)") == cmp(kp("n"), .equal, c(.int(value))), "\(literal)")
        }
    }

    @Test func floatingPointLiterals() throws {
        let cases: [(String, Double)] = [
            ("1.5", 1.5), ("-0.25", -0.25), ("1e3", 1000), ("1E+3", 1000), ("2.5e-3", 0.0025), ("-1.0", -1), ("2.5e-300", 2.5e-300),
        ]
        for (literal, value) in cases {
            #expect(try parse("x == \(literal)") == cmp(kp("x"), .equal, c(.double(value))), "\(literal)")
        }
    }

    @Test func stringLiterals() throws {
        let cases: [(String, String)] = [
            (#""abc""#, "abc"), ("'abc'", "abc"), (#""it's""#, "it's"), (#"'say "hi"'"#, #"say "hi""#),
            (#""a\"b""#, #"a"b"#), (#"'a\'b'"#, "a'b"), (#""a\\b""#, #"a\b"#), (#""a\nb\tc\rd""#, "a\nb\tc\rd"),
            (#""\u00e9\u0041""#, "éA"), (#""""#, ""), ("'日本語 ✓'", "日本語 ✓"), (#""a\0b""#, "a\u{0}b"),
        ]
        for (literal, value) in cases {
            #expect(try parse("s == \(literal)") == cmp(kp("s"), .equal, c(.string(value))), "\(literal)")
        }
    }

    @Test func booleanAndNilLiterals() throws {
        #expect(try parse("b == true") == cmp(kp("b"), .equal, c(.bool(true))))
        #expect(try parse("b == TRUE") == cmp(kp("b"), .equal, c(.bool(true))))
        #expect(try parse("b == False") == cmp(kp("b"), .equal, c(.bool(false))))
        #expect(try parse("b == YES") == cmp(kp("b"), .equal, c(.bool(true))))
        #expect(try parse("b == no") == cmp(kp("b"), .equal, c(.bool(false))))
        #expect(try parse("b == nil") == cmp(kp("b"), .equal, c(.null)))
        #expect(try parse("b != NULL") == cmp(kp("b"), .notEqual, c(.null)))
        #expect(try parse("nil == b") == cmp(kp("b"), .equal, c(.null)))
    }

    @Test func dateLiterals() throws {
        // 2021-02-20 17:30:15 UTC is 1613842215 seconds after 1970.
        #expect(try parse("d == 2021-02-20@17:30:15") == cmp(kp("d"), .equal, c(date(1_613_842_215))))
        #expect(try parse("d == 2021-02-20T17:30:15") == cmp(kp("d"), .equal, c(date(1_613_842_215))))
        #expect(try parse("d == 2021-2-20@17:30:15:500000000") == cmp(kp("d"), .equal, c(date(1_613_842_215, 500_000_000))))
        #expect(try parse("d > T1613842215:500000000") == cmp(kp("d"), .greater, c(date(1_613_842_215, 500_000_000))))
        #expect(try parse("d > T0:0") == cmp(kp("d"), .greater, c(date(0))))
        #expect(try parse("d > 1970-01-01@00:00:00") == cmp(kp("d"), .greater, c(date(0))))
        #expect(try parse("d > 2001-01-01@00:00:00") == cmp(kp("d"), .greater, .constant(.date(Date(timeIntervalSinceReferenceDate: 0)))))
        // Before 1970, in both forms; the negative form has both parts negative.
        #expect(try parse("d < T-1:-500000000") == cmp(kp("d"), .less, c(date(-2, 500_000_000))))
        #expect(try parse("d < 1969-12-31@23:59:58:500000000") == cmp(kp("d"), .less, c(date(-2, 500_000_000))))
        #expect(try parse("d < 1900-03-01@00:00:00") == cmp(kp("d"), .less, c(date(-2_203_891_200))))
        // Leap day.
        #expect(try parse("d == 2024-02-29@12:00:00") == cmp(kp("d"), .equal, c(date(1_709_208_000))))
        // A property named like a timestamp prefix is still a property.
        #expect(try parse("T1 == 1") == cmp(kp("T1"), .equal, c(.int(1))))
        #expect(try parse("Tag == 1") == cmp(kp("Tag"), .equal, c(.int(1))))
    }

    @Test func objectIdUUIDAndDataLiterals() throws {
        let oid = try ObjectId(string: "507f1f77bcf86cd799439011")
        #expect(try parse("_id == oid(507f1f77bcf86cd799439011)") == cmp(kp("_id"), .equal, c(.objectId(oid))))
        #expect(try parse("_id == OID(507F1F77BCF86CD799439011)") == cmp(kp("_id"), .equal, c(.objectId(oid))))
        let uuid = try #require(UUID(uuidString: "3B241101-E2BB-4255-8CAF-4136C566A962"))
        #expect(try parse("u == uuid(3b241101-e2bb-4255-8caf-4136c566a962)") == cmp(kp("u"), .equal, c(.uuid(uuid))))
        #expect(try parse("data == B64\"AAEC\"") == cmp(kp("data"), .equal, c(.data(Data([0, 1, 2])))))
        // Without the parenthesis they are property names.
        #expect(try parse("oid == 1 AND uuid == 2") == .and([cmp(kp("oid"), .equal, c(.int(1))), cmp(kp("uuid"), .equal, c(.int(2)))]))
    }

    @Test func positionsCountCharactersNotScalars() throws {
        // "é" written as e + combining acute is one character of two scalars.
        let error = parseError("name == \"e\u{301}\" AND )")
        #expect(error?.kind == .syntax)
        #expect(error?.position == 16)  // 17 in scalars
    }

    // MARK: Round trip

    @Test func descriptionParsesBack() throws {
        let formats = [
            "age > 3 AND (name BEGINSWITH[cd] 'a' OR NOT city == nil)",
            "ALL dogs.age BETWEEN {1, 5} OR NONE dogs.name LIKE[c] 'r*'",
            "SUBQUERY(dogs, $d, $d.age > 3 AND $d.owner.#in == \"x\\\"y\").@count == 2",
            "dogs.@avg.age >= 2.5 AND scores.@count == 0 AND #and IN {1, 2.5, 'x', nil, true}",
            "d == T-1:-5 AND u == uuid(3b241101-e2bb-4255-8caf-4136c566a962) AND o == oid(507f1f77bcf86cd799439011)",
            "data == B64\"AAEC\" AND s == \"tab\\tnew\\nline\\u0001\" AND TRUEPREDICATE AND NOT NOT FALSEPREDICATE",
        ]
        for format in formats {
            let predicate = try parse(format)
            let again = try parse(predicate.description)
            #expect(again == predicate, "\(format) → \(predicate.description)")
        }
    }
}

// MARK: Malformed input

@Suite struct PredicateParserErrorTests {
    struct Case: CustomStringConvertible, Sendable {
        var format: String
        var arguments: [QueryArgument] = []
        var kind: QueryError.Kind
        var position: Int
        /// A word the message must contain.
        var mentions: String
        var description: String { format }
    }

    static let cases: [Case] = [
        // Empty and incomplete input.
        Case(format: "", kind: .syntax, position: 0, mentions: "empty"),
        Case(format: "   ", kind: .syntax, position: 3, mentions: "empty"),
        Case(format: "age", kind: .syntax, position: 3, mentions: "operator"),
        Case(format: "age >", kind: .syntax, position: 5, mentions: "end of the format"),
        Case(format: "age > 3 AND", kind: .syntax, position: 11, mentions: "end"),
        Case(format: "age > 3 OR OR b == 1", kind: .syntax, position: 11, mentions: "'OR'"),
        Case(format: "AND age > 3", kind: .syntax, position: 0, mentions: "'AND'"),
        Case(format: "age > 3 b == 1", kind: .syntax, position: 8, mentions: "'b'"),
        Case(format: "age 3", kind: .syntax, position: 4, mentions: "'3'"),
        Case(format: "== 3", kind: .syntax, position: 0, mentions: "'=='"),
        Case(format: "NOT", kind: .syntax, position: 3, mentions: "end"),
        Case(format: "ANY", kind: .syntax, position: 3, mentions: "key path"),
        Case(format: "ANY 3 == 4", kind: .syntax, position: 0, mentions: "ANY"),
        // Parentheses and braces.
        Case(format: "(age > 3", kind: .syntax, position: 0, mentions: "unbalanced '('"),
        Case(format: "((age > 3)", kind: .syntax, position: 0, mentions: "unbalanced '('"),
        Case(format: "age > 3)", kind: .syntax, position: 7, mentions: "unbalanced ')'"),
        Case(format: "()", kind: .syntax, position: 1, mentions: "empty parentheses"),
        Case(format: "(age > 3 b)", kind: .syntax, position: 9, mentions: "'b'"),
        Case(format: "age IN {1, 2", kind: .syntax, position: 7, mentions: "unbalanced '{'"),
        Case(format: "age IN {1 2}", kind: .syntax, position: 10, mentions: "'2'"),
        Case(format: "age IN {1, }", kind: .syntax, position: 11, mentions: "'}'"),
        Case(format: "age IN {a}", kind: .syntax, position: 8, mentions: "constant"),
        // Strings and escapes.
        Case(format: "name == 'abc", kind: .syntax, position: 8, mentions: "unterminated string"),
        Case(format: "name == \"abc", kind: .syntax, position: 8, mentions: "unterminated string"),
        Case(format: "name == \"abc\\", kind: .syntax, position: 8, mentions: "backslash"),
        Case(format: "name == 'a\\qb'", kind: .syntax, position: 10, mentions: "\\q"),
        Case(format: "name == 'a\\u12'", kind: .syntax, position: 10, mentions: "\\u"),
        Case(format: "name == 'a\\uD800'", kind: .syntax, position: 10, mentions: "surrogate"),
        Case(format: "data == B64\"!!\"", kind: .syntax, position: 11, mentions: "base64"),
        // Operators and options.
        Case(format: "age & 3", kind: .syntax, position: 4, mentions: "'&'"),
        Case(format: "age | 3", kind: .syntax, position: 4, mentions: "'|'"),
        Case(format: "age > 3 - 1", kind: .syntax, position: 8, mentions: "'-'"),
        Case(format: "age ~ 3", kind: .syntax, position: 4, mentions: "'~'"),
        Case(format: "age ! 3", kind: .syntax, position: 4, mentions: "'!'"),
        Case(format: "name MATCHES 'a'", kind: .unsupported, position: 5, mentions: "MATCHES"),
        Case(format: "name TEXT 'a'", kind: .unsupported, position: 5, mentions: "TEXT"),
        Case(format: "age > 3 SORT(age ASC)", kind: .unsupported, position: 8, mentions: "SORT"),
        Case(format: "age > 3 limit(5)", kind: .unsupported, position: 8, mentions: "LIMIT"),
        Case(format: "name ==[x] 'a'", kind: .syntax, position: 7, mentions: "'x'"),
        Case(format: "name ==[] 'a'", kind: .syntax, position: 7, mentions: "empty options"),
        Case(format: "name ==[c 'a'", kind: .syntax, position: 7, mentions: "']'"),
        Case(format: "age <[c] 3", kind: .syntax, position: 5, mentions: "<"),
        Case(format: "name BEGINSWITH[c]", kind: .syntax, position: 18, mentions: "end of the format"),
        // IN, BETWEEN and lists.
        Case(format: "age IN 3", kind: .syntax, position: 7, mentions: "IN"),
        Case(format: "age BETWEEN {1}", kind: .syntax, position: 12, mentions: "two values"),
        Case(format: "age BETWEEN {1, 2, 3}", kind: .syntax, position: 12, mentions: "two values"),
        Case(format: "age BETWEEN 3", kind: .syntax, position: 12, mentions: "BETWEEN"),
        Case(format: "age == {1, 2}", kind: .syntax, position: 7, mentions: "IN or BETWEEN"),
        Case(format: "{1} IN age", kind: .syntax, position: 0, mentions: "IN or BETWEEN"),
        // Key paths and collection operators.
        Case(format: "owner. == 1", kind: .syntax, position: 7, mentions: "'=='"),
        Case(format: "owner..name == 1", kind: .syntax, position: 6, mentions: "'.'"),
        Case(format: "dogs.@count.age == 1", kind: .syntax, position: 12, mentions: "@count"),
        Case(format: "dogs.@avg.@max == 1", kind: .syntax, position: 10, mentions: "@max"),
        Case(format: "dogs.@keys == 1", kind: .unsupported, position: 5, mentions: "@keys"),
        Case(format: "@count == 1", kind: .syntax, position: 0, mentions: "@count"),
        Case(format: "dogs.@ == 1", kind: .syntax, position: 5, mentions: "'@'"),
        Case(format: "# == 1", kind: .syntax, position: 0, mentions: "'#'"),
        Case(format: "SUBQUERY(dogs, $d, $d.age > 1) > 0", kind: .syntax, position: 31, mentions: "@count"),
        Case(format: "SUBQUERY(dogs, d, d.age > 1).@count > 0", kind: .syntax, position: 15, mentions: "variable"),
        Case(format: "SUBQUERY(dogs, $d, $d.age > 1", kind: .syntax, position: 0, mentions: "never closed"),
        Case(format: "SUBQUERY(3, $d, $d.age > 1).@count > 0", kind: .syntax, position: 9, mentions: "key path"),
        Case(format: "SUBQUERY dogs", kind: .syntax, position: 9, mentions: "'('"),
        Case(format: "$d.age > 1", kind: .syntax, position: 0, mentions: "$d"),
        Case(format: "SUBQUERY(dogs, $d, $d.toys.@count > 1).@count > 0", kind: .unsupported, position: 27, mentions: "@count"),
        Case(format: "$ == 1", kind: .syntax, position: 0, mentions: "'$'"),
        // Numbers, dates, ObjectIds, UUIDs.
        Case(format: "n == 12abc", kind: .syntax, position: 5, mentions: "malformed number"),
        Case(format: "n == 0x", kind: .syntax, position: 5, mentions: "hexadecimal"),
        Case(format: "n == 0xFG", kind: .syntax, position: 5, mentions: "hexadecimal"),
        Case(format: "n == 9223372036854775808", kind: .syntax, position: 5, mentions: "64 bits"),
        Case(format: "n == -9223372036854775809", kind: .syntax, position: 5, mentions: "64 bits"),
        Case(format: "n == 0x10000000000000000", kind: .syntax, position: 5, mentions: "64 bits"),
        Case(format: "n == 1e999", kind: .syntax, position: 5, mentions: "out of range"),
        Case(format: "n == .5", kind: .syntax, position: 5, mentions: "digit"),
        Case(format: "n == 1.2.3", kind: .syntax, position: 5, mentions: "malformed number"),
        Case(format: "d == 2021-02-30@00:00:00", kind: .syntax, position: 5, mentions: "day 30"),
        Case(format: "d == 2021-13-01@00:00:00", kind: .syntax, position: 5, mentions: "month 13"),
        Case(format: "d == 2021-02-01@24:00:00", kind: .syntax, position: 5, mentions: "hour 24"),
        Case(format: "d == 2021-02-01@23:60:00", kind: .syntax, position: 5, mentions: "minutes 60"),
        Case(format: "d == 2021-02-01@23:00:60", kind: .syntax, position: 5, mentions: "seconds 60"),
        Case(format: "d == 2021-02-01", kind: .syntax, position: 5, mentions: "malformed date"),
        Case(format: "d == 2021-02-01@12:00", kind: .syntax, position: 5, mentions: "malformed date"),
        Case(format: "d == 2021-02-01@12:00:00:1234567890", kind: .syntax, position: 5, mentions: "nanoseconds"),
        Case(format: "d == 2023-02-29@00:00:00", kind: .syntax, position: 5, mentions: "day 29"),
        Case(format: "d == T1:-5", kind: .syntax, position: 5, mentions: "same sign"),
        Case(format: "d == T1:1000000000", kind: .syntax, position: 5, mentions: "nanoseconds"),
        Case(format: "d == T1:", kind: .syntax, position: 5, mentions: "timestamp"),
        Case(format: "d == T1:2x", kind: .syntax, position: 5, mentions: "timestamp"),
        Case(format: "o == oid(507f1f77bcf86cd79943901)", kind: .syntax, position: 9, mentions: "ObjectId"),
        Case(format: "o == oid(507f1f77bcf86cd79943901z)", kind: .syntax, position: 9, mentions: "ObjectId"),
        Case(format: "o == oid(507f1f77bcf86cd799439011", kind: .syntax, position: 5, mentions: "')'"),
        Case(format: "u == uuid(3b241101-e2bb-4255-8caf-4136c566a96)", kind: .syntax, position: 10, mentions: "UUID"),
        Case(format: "u == uuid(3b241101e2bb42558caf4136c566a962)", kind: .syntax, position: 10, mentions: "UUID"),
        Case(format: "u == uuid(3b241101-e2bb-4255-8caf-4136c566a96g)", kind: .syntax, position: 10, mentions: "UUID"),
        // Arguments.
        Case(format: "age > %@", kind: .invalidArgument, position: 6, mentions: "%@ (argument 1)"),
        Case(format: "age > %@ AND b == %@", arguments: [.value(.int(1))], kind: .invalidArgument, position: 18, mentions: "%@ (argument 2)"),
        Case(format: "age > %@", arguments: [.value(.int(1)), .value(.int(2))], kind: .invalidArgument, position: 8, mentions: "2 arguments"),
        Case(format: "age > $1", arguments: [.value(.int(1))], kind: .invalidArgument, position: 6, mentions: "$1"),
        Case(format: "age > 3", arguments: [.value(.int(1))], kind: .invalidArgument, position: 7, mentions: "1 arguments"),
        Case(format: "age == %d", arguments: [.value(.string("3"))], kind: .invalidArgument, position: 7, mentions: "%d (argument 1)"),
        Case(format: "age == %d", arguments: [.value(.double(3))], kind: .invalidArgument, position: 7, mentions: "integer"),
        Case(format: "a == 1 AND age == %f", arguments: [.value(.string("x"))], kind: .invalidArgument, position: 18, mentions: "%f (argument 1)"),
        Case(format: "age == %f", arguments: [.list([.double(1)])], kind: .invalidArgument, position: 7, mentions: "floating-point"),
        Case(format: "%K == 1", arguments: [.value(.int(3))], kind: .invalidArgument, position: 0, mentions: "%K (argument 1)"),
        Case(format: "%K == 1", arguments: [.value(.string("a..b"))], kind: .invalidArgument, position: 0, mentions: "a..b"),
        Case(format: "%K == 1", arguments: [.value(.string(""))], kind: .invalidArgument, position: 0, mentions: "key path"),
        Case(format: "%K == 1", kind: .invalidArgument, position: 0, mentions: "%K (argument 1)"),
        Case(format: "age IN %@", arguments: [.value(.int(3))], kind: .invalidArgument, position: 7, mentions: "%@ (argument 1)"),
        Case(format: "age BETWEEN %@", arguments: [.list([.int(3)])], kind: .invalidArgument, position: 12, mentions: "two values"),
        Case(format: "age == %@", arguments: [.list([.int(3)])], kind: .invalidArgument, position: 7, mentions: "a list"),
        Case(format: "age IN {%@}", arguments: [.list([.int(3)])], kind: .invalidArgument, position: 8, mentions: "%@ (argument 1)"),
        Case(format: "age == %s", kind: .unsupported, position: 7, mentions: "%s"),
        Case(format: "age == %q", kind: .syntax, position: 7, mentions: "%q"),
        Case(format: "age == %", kind: .syntax, position: 7, mentions: "'%'"),
        Case(format: "age == $99999999", kind: .invalidArgument, position: 7, mentions: "too large"),
        // Stray characters.
        Case(format: "age == 3;", kind: .syntax, position: 8, mentions: "';'"),
        Case(format: "age == 3 \u{0}", kind: .syntax, position: 9, mentions: "U+0"),
        Case(format: "name == 'x' ]", kind: .syntax, position: 12, mentions: "']'"),
    ]

    @Test(arguments: cases)
    func malformedInputIsATypedErrorAtTheRightPlace(_ test: Case) {
        guard let error = parseError(test.format, test.arguments) else {
            Issue.record("\(test.format) parsed")
            return
        }
        #expect(error.kind == test.kind, "\(error)")
        #expect(error.position == test.position, "\(error)")
        #expect(error.message.contains(test.mentions), "\(error)")
    }

    @Test func nestingIsCappedWithAClearError() {
        let depth = PredicateParser.maximumDepth
        let deep = String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
        #expect(parseError(deep) == nil)
        let tooDeep = String(repeating: "(", count: depth + 1) + "a == 1" + String(repeating: ")", count: depth + 1)
        let error = parseError(tooDeep)
        #expect(error?.kind == .syntax)
        #expect(error?.position == depth)
        #expect(error?.message.contains("nests more than") == true)
    }

    @Test func notChainsAreCapped() {
        let depth = PredicateParser.maximumDepth
        let nots = String(repeating: "NOT ", count: depth + 1) + "a == 1"
        #expect(parseError(nots)?.position == depth * 4)
        let bangs = String(repeating: "!", count: depth) + "a == 1"
        #expect(parseError(bangs) == nil)
    }

    @Test func subqueryNestingIsCapped() {
        let depth = PredicateParser.maximumSubqueryDepth
        var subqueries = "a == 1"
        for i in 0..<depth { subqueries = "SUBQUERY(l, $v\(i), \(subqueries)).@count > 0" }
        #expect(parseError(subqueries) == nil)
        let tooDeep = "SUBQUERY(l, $w, \(subqueries)).@count > 0"
        let error = parseError(tooDeep)
        #expect(error?.kind == .syntax)
        // The innermost one (written first by the loop) is the one too many.
        let innermost = tooDeep.range(of: "SUBQUERY(l, $v0,").map { tooDeep.distance(from: tooDeep.startIndex, to: $0.lowerBound) }
        #expect(error?.position == innermost)
        #expect(error?.message.contains("SUBQUERYs nest more than") == true)
        // NOT and parentheses inside SUBQUERYs count towards the overall cap.
        let mixed = "SUBQUERY(l, $x, " + String(repeating: "NOT ", count: PredicateParser.maximumDepth) + "$x.a == 1).@count > 0"
        #expect(parseError(mixed)?.message.contains("nests more than 1000") == true)
    }

    @Test func longChainsAreNotNesting() {
        let wide = Array(repeating: "a == 1", count: 5_000).joined(separator: " AND ")
        #expect(parseError(wide) == nil)
    }
}
