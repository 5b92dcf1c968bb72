import Foundation

// The tokens of an NSPredicate-format string, for `PredicateParser`. The lexer works on Unicode
// scalars (so a combining mark after a quote cannot merge with it into one Character); token
// positions are scalar offsets, which the parser turns into character offsets for errors.

/// Splits a format into tokens. Every malformed character sequence is a `QueryError` whose
/// position is the scalar offset of the problem (the parser converts it to characters).
struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    /// The error type the lexer throws before positions are converted: a kind, a message and a
    /// scalar offset.
    struct Failure: Error {
        var kind: QueryError.Kind
        var message: String
        var offset: Int
    }

    static func tokenize(_ scalars: [Unicode.Scalar]) throws(Failure) -> [PredicateToken] {
        var lexer = PredicateLexer(scalars)
        var tokens: [PredicateToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let i = index + offset
        return i >= 0 && i < scalars.count ? scalars[i] : nil
    }

    private func text(_ start: Int, _ end: Int) -> String {
        var s = String.UnicodeScalarView()
        s.append(contentsOf: scalars[max(0, start)..<min(end, scalars.count)])
        return String(s)
    }

    private static func isDigit(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        return c >= "0" && c <= "9"
    }

    private static func isHexDigit(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        return isDigit(c) || (c >= "a" && c <= "f") || (c >= "A" && c <= "F")
    }

    static func isWordStart(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        if c.isASCII { return c == "_" || (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") }
        return c.properties.isAlphabetic
    }

    static func isWordContinuation(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        if c.isASCII { return c == "_" || (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") }
        return c.properties.isAlphabetic || c.properties.numericType != nil
    }

    /// How a scalar is shown in a message.
    static func show(_ c: Unicode.Scalar) -> String {
        if c.value < 0x20 || c.value == 0x7F || (c.properties.generalCategory == .format) {
            return "U+" + String(c.value, radix: 16, uppercase: true)
        }
        return "'" + String(c) + "'"
    }

    private mutating func readWord() -> String {
        let start = index
        while PredicateLexer.isWordContinuation(peek()) { index += 1 }
        return text(start, index)
    }

    mutating func next() throws(Failure) -> PredicateToken {
        while let c = peek(), c.properties.isWhitespace { index += 1 }
        let start = index
        guard let c = peek() else { return PredicateToken(kind: .end, start: start, end: start) }

        func token(_ kind: PredicateToken.Kind, length: Int) -> PredicateToken {
            index = start + length
            return PredicateToken(kind: kind, start: start, end: index)
        }

        switch c {
        case "]": return token(.closeBracket, length: 1)
        case "(": return token(.openParen, length: 1)
        case ")": return token(.closeParen, length: 1)
        case "{": return token(.openBrace, length: 1)
        case "}": return token(.closeBrace, length: 1)
        case ",": return token(.comma, length: 1)
        case ".":
            if PredicateLexer.isDigit(peek(1)) {
                throw Failure(kind: .syntax, message: "a number must start with a digit (write '0\(text(start, start + 2))…')", offset: start)
            }
            return token(.dot, length: 1)
        case "&":
            if peek(1) == "&" { return token(.and, length: 2) }
            throw Failure(kind: .syntax, message: "unexpected '&' (did you mean '&&'?)", offset: start)
        case "|":
            if peek(1) == "|" { return token(.or, length: 2) }
            throw Failure(kind: .syntax, message: "unexpected '|' (did you mean '||'?)", offset: start)
        case "!":
            if peek(1) == "=" { return token(.comparison(.notEqual), length: 2) }
            return token(.not, length: 1)
        case "=":
            switch peek(1) {
            case "=": return token(.comparison(.equal), length: 2)
            case "<": return token(.comparison(.lessOrEqual), length: 2)
            case ">": return token(.comparison(.greaterOrEqual), length: 2)
            default: return token(.comparison(.equal), length: 1)
            }
        case "<":
            switch peek(1) {
            case "=": return token(.comparison(.lessOrEqual), length: 2)
            case ">": return token(.comparison(.notEqual), length: 2)
            default: return token(.comparison(.less), length: 1)
            }
        case ">":
            if peek(1) == "=" { return token(.comparison(.greaterOrEqual), length: 2) }
            return token(.comparison(.greater), length: 1)
        case "[":
            // A map key (a string literal or an argument) rather than options ([c], [cd]).
            var ahead = 1
            while let next = peek(ahead), next.properties.isWhitespace { ahead += 1 }
            if let next = peek(ahead), next == "\"" || next == "'" || next == "%" || next == "$" {
                return token(.openBracket, length: 1)
            }
            if let access = collectionAccess(from: start) { return access }
            index += 1
            let letters = readWord()
            guard peek() == "]" else {
                throw Failure(kind: .syntax, message: "unterminated option brackets: expected ']' after '[\(letters)'", offset: start)
            }
            index += 1
            return PredicateToken(kind: .options(letters), start: start, end: index)
        case "%":
            guard let letter = peek(1) else {
                throw Failure(kind: .syntax, message: "'%' at the end of the format: expected %@, %K, %d or %f", offset: start)
            }
            switch letter {
            case "@", "K", "d", "f": return token(.formatArgument(Character(letter)), length: 2)
            case "i", "u", "l", "x", "g", "e", "s":
                throw Failure(kind: .unsupported, message: "'%\(letter)' is not supported: use %@, %K, %d or %f", offset: start)
            default:
                throw Failure(kind: .syntax, message: "unknown format specifier '%\(String(letter))': expected %@, %K, %d or %f", offset: start)
            }
        case "$":
            index += 1
            if PredicateLexer.isDigit(peek()) {
                let digits = readDigits()
                guard let n = Int(digits), n < 1_000_000 else {
                    throw Failure(kind: .invalidArgument, message: "argument index $\(digits) is too large", offset: start)
                }
                if PredicateLexer.isWordContinuation(peek()) {
                    throw Failure(kind: .syntax, message: "malformed argument '$\(digits)\(text(index, index + 1))'", offset: start)
                }
                return PredicateToken(kind: .indexedArgument(n), start: start, end: index)
            }
            guard PredicateLexer.isWordStart(peek()) else {
                throw Failure(kind: .syntax, message: "'$' must be followed by an argument index ($0) or a SUBQUERY variable name ($x)", offset: start)
            }
            return PredicateToken(kind: .variable(readWord()), start: start, end: index)
        case "#":
            index += 1
            guard PredicateLexer.isWordStart(peek()) else {
                throw Failure(kind: .syntax, message: "'#' must be followed by a property name", offset: start)
            }
            return PredicateToken(kind: .escapedWord(readWord()), start: start, end: index)
        case "@":
            index += 1
            guard PredicateLexer.isWordStart(peek()) else {
                throw Failure(kind: .syntax, message: "'@' must be followed by an operator name such as @count", offset: start)
            }
            return PredicateToken(kind: .atWord(readWord()), start: start, end: index)
        case "\"", "'":
            let value = try readString()
            return PredicateToken(kind: .literal(.string(value)), start: start, end: index)
        case "-":
            if PredicateLexer.isDigit(peek(1)) {
                index += 1
                return try readNumber(start: start, negative: true)
            }
            throw Failure(kind: .syntax, message: "unexpected '-': arithmetic is not supported; a negative number is written -5", offset: start)
        default:
            if PredicateLexer.isDigit(c) { return try readNumber(start: start, negative: false) }
            if (c == "T" || c == "t"), let timestamp = try readEpochTimestamp() {
                return PredicateToken(kind: .literal(.date(timestamp)), start: start, end: index)
            }
            if PredicateLexer.isWordStart(c) {
                let word = readWord()
                let lower = word.lowercased()
                if peek() == "(" && (lower == "oid" || lower == "uuid") {
                    let value = try readFunctionLiteral(lower, start: start)
                    return PredicateToken(kind: .literal(value), start: start, end: index)
                }
                if (peek() == "\"" || peek() == "'") && lower == "b64" {
                    let contentStart = index
                    let encoded = try readString()
                    guard let data = Data(base64Encoded: encoded) else {
                        throw Failure(kind: .syntax, message: "malformed base64 data literal B64\(text(contentStart, index))", offset: contentStart)
                    }
                    return PredicateToken(kind: .literal(.data(data)), start: start, end: index)
                }
                return PredicateToken(kind: .word(word), start: start, end: index)
            }
            throw Failure(kind: .syntax, message: "unexpected character \(PredicateLexer.show(c))", offset: start)
        }
    }

    /// `[0]`, `[-1]`, `[FIRST]`, `[LAST]` or `[*]` (spaces allowed inside) starting at `start`
    /// (the `[`): the component it reads, consumed through the `]`; nil, consuming nothing,
    /// for anything else (options such as `[c]`).
    private mutating func collectionAccess(from start: Int) -> PredicateToken? {
        var ahead = 1
        func skipSpaces() { while let next = peek(ahead), next.properties.isWhitespace { ahead += 1 } }
        skipSpaces()
        var inside = ""
        while let next = peek(ahead), next != "]", !next.properties.isWhitespace, inside.unicodeScalars.count < 24 {
            inside.unicodeScalars.append(next)
            ahead += 1
        }
        skipSpaces()
        guard peek(ahead) == "]" else { return nil }
        let component: String
        switch inside.uppercased() {
        case "*": component = MixedPathComponent.allComponent
        case "FIRST": component = MixedPathComponent.component(index: 0)
        case "LAST": component = MixedPathComponent.component(index: -1)
        default:
            guard let number = Int(inside), inside.allSatisfy({ $0 == "-" || $0.isASCII && $0.isNumber }) else { return nil }
            component = MixedPathComponent.component(index: number)
        }
        index += ahead + 1
        return PredicateToken(kind: .collectionAccess(component), start: start, end: index)
    }

    private mutating func readDigits() -> String {
        let start = index
        while PredicateLexer.isDigit(peek()) { index += 1 }
        return text(start, index)
    }

    // MARK: Strings

    /// A quoted string starting at the current quote; leaves `index` after the closing quote.
    private mutating func readString() throws(Failure) -> String {
        let start = index
        guard let quote = peek() else {
            throw Failure(kind: .syntax, message: "expected a string", offset: start)
        }
        index += 1
        var result = String.UnicodeScalarView()
        while true {
            guard let c = peek() else {
                throw Failure(kind: .syntax, message: "unterminated string: no closing \(quote == "\"" ? "\"" : "'") for the quote", offset: start)
            }
            if c == quote {
                index += 1
                return String(result)
            }
            if c == "\\" {
                let escapeStart = index
                guard let e = peek(1) else {
                    throw Failure(kind: .syntax, message: "unterminated string: it ends with a backslash", offset: start)
                }
                index += 2
                switch e {
                case "\\", "\"", "'": result.append(e)
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "0": result.append("\u{0}")
                case "u":
                    var value: UInt32 = 0
                    for _ in 0..<4 {
                        guard let h = peek(), PredicateLexer.isHexDigit(h), let digit = UInt32(String(h), radix: 16) else {
                            throw Failure(kind: .syntax, message: "malformed escape \(text(escapeStart, index + 1)): \\u needs four hexadecimal digits", offset: escapeStart)
                        }
                        value = value * 16 + digit
                        index += 1
                    }
                    guard let scalar = Unicode.Scalar(value) else {
                        throw Failure(kind: .syntax, message: "escape \(text(escapeStart, index)) is a surrogate, not a character", offset: escapeStart)
                    }
                    result.append(scalar)
                default:
                    throw Failure(kind: .syntax, message: "unknown escape '\\\(String(e))' in a string (supported: \\\\ \\\" \\' \\n \\t \\r \\0 \\uXXXX)", offset: escapeStart)
                }
                continue
            }
            result.append(c)
            index += 1
        }
    }

    // MARK: Numbers and dates

    private mutating func readNumber(start: Int, negative: Bool) throws(Failure) -> PredicateToken {
        let digitsStart = index
        // Hexadecimal.
        if peek() == "0" && (peek(1) == "x" || peek(1) == "X") {
            index += 2
            let hexStart = index
            while PredicateLexer.isHexDigit(peek()) { index += 1 }
            let hex = text(hexStart, index)
            if hex.isEmpty || PredicateLexer.isWordContinuation(peek()) {
                throw Failure(kind: .syntax, message: "malformed hexadecimal number '\(text(start, index + (peek() == nil ? 0 : 1)))'", offset: start)
            }
            guard let magnitude = UInt64(hex, radix: 16) else {
                throw Failure(kind: .syntax, message: "number '\(text(start, index))' does not fit in 64 bits", offset: start)
            }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else {
                    throw Failure(kind: .syntax, message: "number '\(text(start, index))' does not fit in 64 bits", offset: start)
                }
                return PredicateToken(kind: .literal(.int(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))), start: start, end: index)
            }
            guard magnitude <= UInt64(Int64.max) else {
                throw Failure(kind: .syntax, message: "number '\(text(start, index))' does not fit in 64 bits", offset: start)
            }
            return PredicateToken(kind: .literal(.int(Int64(magnitude))), start: start, end: index)
        }
        _ = readDigits()
        // A date: YYYY-MM-DD@HH:MM:SS[:NANOS] or with T in place of @.
        if !negative && peek() == "-" && PredicateLexer.isDigit(peek(1)) {
            index = digitsStart
            let date = try readDate(start: start)
            return PredicateToken(kind: .literal(.date(date)), start: start, end: index)
        }
        var isFloat = false
        if peek() == "." && PredicateLexer.isDigit(peek(1)) {
            isFloat = true
            index += 1
            _ = readDigits()
        }
        if peek() == "e" || peek() == "E" {
            var look = 1
            if peek(1) == "+" || peek(1) == "-" { look = 2 }
            if PredicateLexer.isDigit(peek(look)) {
                isFloat = true
                index += look
                _ = readDigits()
            }
        }
        if PredicateLexer.isWordContinuation(peek()) || peek() == "." && PredicateLexer.isDigit(peek(1)) {
            throw Failure(kind: .syntax, message: "malformed number '\(text(start, index + 1))'", offset: start)
        }
        let literal = text(start, index)
        if isFloat {
            guard let value = Double(literal), value.isFinite else {
                throw Failure(kind: .syntax, message: "number '\(literal)' is out of range for a Double", offset: start)
            }
            return PredicateToken(kind: .literal(.double(value)), start: start, end: index)
        }
        guard let value = Int64(literal) else {
            throw Failure(kind: .syntax, message: "integer '\(literal)' does not fit in 64 bits", offset: start)
        }
        return PredicateToken(kind: .literal(.int(value)), start: start, end: index)
    }

    /// `YYYY-MM-DD@HH:MM:SS[:NANOS]` (or `T` for `@`), UTC.
    private mutating func readDate(start: Int) throws(Failure) -> Date {
        func malformed(_ why: String) -> Failure {
            Failure(kind: .syntax, message: "malformed date '\(text(start, index))': \(why) (expected YYYY-MM-DD@HH:MM:SS or YYYY-MM-DD@HH:MM:SS:NANOSECONDS)", offset: start)
        }
        func field(_ name: String, maxDigits: Int) throws(Failure) -> Int64 {
            let digits = readDigits()
            guard !digits.isEmpty else { throw malformed("missing \(name)") }
            guard digits.count <= maxDigits, let value = Int64(digits) else { throw malformed("\(name) has too many digits") }
            return value
        }
        func expect(_ separator: Unicode.Scalar, _ alternative: Unicode.Scalar? = nil, before name: String) throws(Failure) {
            guard let c = peek(), c == separator || c == alternative else {
                throw malformed("expected '\(separator)' before the \(name)")
            }
            index += 1
        }
        let year = try field("year", maxDigits: 6)
        try expect("-", before: "month")
        let month = try field("month", maxDigits: 2)
        try expect("-", before: "day")
        let day = try field("day", maxDigits: 2)
        try expect("@", "T", before: "time")
        let hour = try field("hour", maxDigits: 2)
        try expect(":", before: "minutes")
        let minute = try field("minutes", maxDigits: 2)
        try expect(":", before: "seconds")
        let second = try field("seconds", maxDigits: 2)
        var nanos: Int64 = 0
        if peek() == ":" && PredicateLexer.isDigit(peek(1)) {
            index += 1
            nanos = try field("nanoseconds", maxDigits: 9)
        }
        if PredicateLexer.isWordContinuation(peek()) || peek() == ":" || peek() == "." {
            index += 1
            throw malformed("unexpected characters after the time")
        }
        guard (1...12).contains(month) else { throw malformed("month \(month) is not 1 through 12") }
        guard day >= 1 && day <= PredicateDates.daysInMonth(year: year, month: month) else {
            throw malformed("day \(day) does not exist in month \(month)")
        }
        guard hour < 24 else { throw malformed("hour \(hour) is not 0 through 23") }
        guard minute < 60 else { throw malformed("minutes \(minute) are not 0 through 59") }
        guard second < 60 else { throw malformed("seconds \(second) are not 0 through 59") }
        let days = PredicateDates.daysSince1970(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
        return PredicateDates.date(secondsSince1970: seconds, nanoseconds: nanos)
    }

    /// `Tseconds:nanoseconds` since 1970, or nil (with `index` unchanged) when the word at
    /// `index` is not one.
    private mutating func readEpochTimestamp() throws(Failure) -> Date? {
        let start = index
        var i = 1
        if peek(i) == "-" { i += 1 }
        guard PredicateLexer.isDigit(peek(i)) else { return nil }
        while PredicateLexer.isDigit(peek(i)) { i += 1 }
        guard peek(i) == ":" else { return nil }
        // It is a timestamp from here on.
        index += 1
        func malformed(_ why: String) -> Failure {
            Failure(kind: .syntax, message: "malformed timestamp '\(text(start, index))': \(why) (expected Tseconds:nanoseconds)", offset: start)
        }
        func signedField(_ name: String) throws(Failure) -> Int64 {
            let fieldStart = index
            if peek() == "-" { index += 1 }
            let digits = readDigits()
            guard !digits.isEmpty else { throw malformed("missing \(name)") }
            guard let value = Int64(text(fieldStart, index)) else { throw malformed("\(name) do not fit in 64 bits") }
            return value
        }
        let seconds = try signedField("seconds")
        index += 1  // ':'
        let nanos = try signedField("nanoseconds")
        if PredicateLexer.isWordContinuation(peek()) || peek() == ":" || peek() == "." {
            index += 1
            throw malformed("unexpected characters after the nanoseconds")
        }
        guard abs(nanos) < 1_000_000_000 else { throw malformed("nanoseconds must be less than 1000000000") }
        guard (seconds >= 0 && nanos >= 0) || (seconds <= 0 && nanos <= 0) else {
            throw malformed("seconds and nanoseconds must have the same sign")
        }
        guard abs(seconds) < PredicateDates.maximumSeconds else { throw malformed("seconds are out of range") }
        // Normalise to whole seconds rounded down and a non-negative fraction.
        var s = seconds, n = nanos
        if n < 0 {
            s -= 1
            n += 1_000_000_000
        }
        return PredicateDates.date(secondsSince1970: s, nanoseconds: n)
    }

    // MARK: oid(…) and uuid(…)

    private mutating func readFunctionLiteral(_ name: String, start: Int) throws(Failure) -> StoreValue {
        index += 1  // '('
        let contentStart = index
        while let c = peek(), c != ")" { index += 1 }
        guard peek() == ")" else {
            throw Failure(kind: .syntax, message: "unterminated \(name)(…): expected ')'", offset: start)
        }
        let content = text(contentStart, index).trimmingCharacters(in: .whitespaces)
        index += 1
        if name == "oid" {
            guard content.utf8.count == 24, content.utf8.allSatisfy({ PredicateLexer.isHexDigit(Unicode.Scalar($0)) }),
                  let id = ObjectId(content)
            else {
                throw Failure(kind: .syntax, message: "malformed ObjectId oid(\(content)): expected 24 hexadecimal digits", offset: contentStart)
            }
            return .objectId(id)
        }
        let groups = content.split(separator: "-", omittingEmptySubsequences: false).map(\.utf8.count)
        guard groups == [8, 4, 4, 4, 12], content.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || PredicateLexer.isHexDigit(Unicode.Scalar($0)) }),
              let uuid = UUID(uuidString: content)
        else {
            throw Failure(kind: .syntax, message: "malformed UUID uuid(\(content)): expected 8-4-4-4-12 hexadecimal digits", offset: contentStart)
        }
        return .uuid(uuid)
    }
}
