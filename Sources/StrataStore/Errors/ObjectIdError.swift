/// The error thrown when a string is not a valid ``ObjectId``.
public enum ObjectIdError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The string is not 24 hexadecimal digits. The associated value is the string given.
    case invalidString(String)

    /// A sentence saying what was wrong, for logs and error messages.
    public var description: String {
        switch self {
        case .invalidString(let string):
            "\"\(string)\" is not a valid ObjectId: expected 24 hexadecimal digits"
        }
    }
}
