/// Why a query could not be built or run: a malformed string predicate, a property the type
/// does not have, an argument of the wrong type, an operator that does not apply to a
/// property. The message names what is wrong and, for string predicates, where.
public struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of query errors.
    public enum Kind: Sendable, Hashable {
        /// The predicate text does not parse (unbalanced parentheses, an unterminated string,
        /// an unknown operator, …).
        case syntax
        /// A key path names a property the type does not have, or one that is not persisted.
        case unknownProperty
        /// An operator does not apply to the property's type, or a value has the wrong type
        /// for the property it is compared with.
        case typeMismatch
        /// The arguments do not fit the format: too few, too many, or of the wrong type for
        /// `%d`, `%f` or `%K`.
        case invalidArgument
        /// A construct Strata does not support.
        case unsupported
    }

    /// What kind of error this is.
    public let kind: Kind
    /// A description of the problem, naming the property, value or token involved.
    public let message: String
    /// For string predicates: the offset (in characters) in the format where the problem was
    /// found, when known.
    public let position: Int?

    /// Makes an error.
    public init(_ kind: Kind, _ message: String, position: Int? = nil) {
        self.kind = kind
        self.message = message
        self.position = position
    }

    /// The message, with the position in the format when there is one.
    public var description: String {
        if let position { return "Invalid query at character \(position): \(message)" }
        return "Invalid query: \(message)"
    }
}
