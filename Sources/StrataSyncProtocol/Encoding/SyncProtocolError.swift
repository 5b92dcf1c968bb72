/// Bytes that are not a valid frame or stored encoding: what was wrong, and where.
///
/// `code` is what the receiver reports to its peer before it closes the connection
/// (``SyncErrorCode/malformedFrame``, ``SyncErrorCode/frameTooLarge`` or
/// ``SyncErrorCode/unsupportedProtocolVersion``); `message` names the item being read and its
/// byte offset.
public struct SyncProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, as sent in ``SyncMessage/error(code:message:)``.
    public var code: SyncErrorCode
    /// What was wrong and where, for logs and the peer.
    public var message: String

    /// Makes an error with a code and a description of what was wrong and where.
    public init(code: SyncErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    /// A malformed encoding.
    static func malformed(_ message: String) -> SyncProtocolError {
        SyncProtocolError(code: .malformedFrame, message: message)
    }

    /// The code and the message, for logs.
    public var description: String { "\(code): \(message)" }
}
