/// One token and where it starts and ends (scalar offsets into the format).
struct PredicateToken {
    enum Kind: Equatable {
        /// A bare word: a property name or a keyword (keywords are recognised by the parser,
        /// case-insensitively).
        case word(String)
        /// `#word`: a property name even when it spells a keyword.
        case escapedWord(String)
        /// `@count`, `@avg`, …: the name without the `@`.
        case atWord(String)
        case literal(StoreValue)
        /// `%@`, `%K`, `%d`, `%f`: the letter.
        case formatArgument(Character)
        /// `$0`, `$1`, …
        case indexedArgument(Int)
        /// `$name`: a SUBQUERY variable.
        case variable(String)
        /// `==`, `=`, `!=`, `<>`, `<`, `<=`, `=<`, `>`, `>=`, `=>`.
        case comparison(QueryOperator)
        /// `[c]`, `[d]`, `[cd]`: the letters between the brackets.
        case options(String)
        case openParen, closeParen, openBrace, closeBrace, comma, dot
        /// `[` before a map key (`scores['a']`, `scores[%@]`), and the `]` after it.
        case openBracket, closeBracket
        /// `[0]`, `[-1]`, `[FIRST]`, `[LAST]` or `[*]` after a mixed property's name: the
        /// key-path component (`MixedPathComponent`) it reads.
        case collectionAccess(String)
        /// `&&`, `||`, `!`.
        case and, or, not
        case end
    }

    var kind: Kind
    var start: Int
    var end: Int
    /// For a bare word that is a keyword: the keyword, lowercased.
    var keyword: String?

    init(kind: Kind, start: Int, end: Int) {
        self.kind = kind
        self.start = start
        self.end = end
        if case .word(let word) = kind, word.utf8.count <= 14 {
            let lower = word.lowercased()
            if predicateKeywords.contains(lower) { keyword = lower }
        }
    }
}
