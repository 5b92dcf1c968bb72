/// The error thrown when a string is not a valid ``Decimal128``.
public enum Decimal128Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// The string is not a decimal number, `NaN` or `Infinity`. The associated value is the
    /// string given.
    case invalidString(String)

    /// A sentence saying what was wrong, for logs and error messages.
    public var description: String {
        switch self {
        case .invalidString(let string):
            "\"\(string)\" is not a valid Decimal128: expected a decimal number such as "
                + "\"-12.5\" or \"1.5E+10\", \"NaN\" or \"Infinity\""
        }
    }
}
