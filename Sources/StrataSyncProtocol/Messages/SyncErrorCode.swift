/// Why the server (or the client) refused something. Sent in ``SyncMessage/error(code:message:)``.
public enum SyncErrorCode: UInt16, Sendable, Hashable {
    /// A frame that does not decode, or a message out of place.
    case malformedFrame = 1
    /// A frame larger than the limit.
    case frameTooLarge = 2
    /// A protocol version this side does not speak.
    case unsupportedProtocolVersion = 3
    /// The access token is missing, malformed, expired or signed with an unknown key.
    case invalidToken = 4
    /// The server does not serve this app id.
    case unknownApp = 5
    /// An operation names a class or property the app's schema does not have.
    case unknownClassOrProperty = 6
    /// The client's schema disagrees with the app's in a breaking way.
    case schemaMismatch = 7
    /// An upload whose client sequence skips ahead of what the server acknowledged.
    case outOfOrderUpload = 8
    /// The server's history no longer reaches the client's checkpoint: a client reset follows.
    case clientResetRequired = 9
    /// The server failed; the client reconnects later.
    case serverError = 10
    /// The value of an operation does not fit the property's declared type.
    case invalidValue = 11
}
