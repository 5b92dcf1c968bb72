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
            var parser = PredicateTokenParser(tokens: tokens, scalars: scalars, arguments: arguments)
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
