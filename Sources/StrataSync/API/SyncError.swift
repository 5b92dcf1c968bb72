import Foundation
public import StrataSyncProtocol

/// What went wrong in sync: a refusal from the server, a connection that failed, a login that
/// was refused, or the local file failing to take a download. Sessions report these through
/// ``SyncSession/errorHandler``; `wait(for:)`, logins and subscription updates throw them.
public struct SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why, as one case.
    public enum Code: Sendable, Hashable {
        // The server's refusals (``SyncErrorCode``).
        /// A frame that did not decode, or a message out of place.
        case malformedFrame
        /// A frame over the size limit.
        case frameTooLarge
        /// The server does not speak this client's protocol version. Fatal.
        case unsupportedProtocolVersion
        /// The access token was refused (expired, malformed, unknown key). Fatal: log in again.
        case invalidToken
        /// The server does not serve this app id. Fatal.
        case unknownApp
        /// An operation named a class or property the app's schema does not have.
        case unknownClassOrProperty
        /// This client's schema disagrees with the app's in a breaking way. Fatal.
        case schemaMismatch
        /// An upload skipped ahead of what the server acknowledged.
        case outOfOrderUpload
        /// The server's history no longer reaches the client's checkpoint; a reset follows.
        case clientResetRequired
        /// The server failed; the session reconnects later.
        case serverError
        /// An operation's value does not fit its property's type.
        case invalidValue
        // The client's own.
        /// The connection could not be opened.
        case connectionFailed
        /// The connection closed or broke.
        case connectionClosed
        /// The login was refused (HTTP 401): a bad or expired token.
        case invalidCredentials
        /// The login failed otherwise (unreachable server, unexpected answer).
        case loginFailed
        /// The session stopped (its user logged out, or a fatal error) before the awaited work
        /// was done.
        case sessionStopped
        /// The local file failed to record a download, an acknowledgement or subscriptions.
        case localFileError

        /// The client-side code for a server's ``SyncErrorCode``.
        public init(_ code: SyncErrorCode) {
            switch code {
            case .malformedFrame: self = .malformedFrame
            case .frameTooLarge: self = .frameTooLarge
            case .unsupportedProtocolVersion: self = .unsupportedProtocolVersion
            case .invalidToken: self = .invalidToken
            case .unknownApp: self = .unknownApp
            case .unknownClassOrProperty: self = .unknownClassOrProperty
            case .schemaMismatch: self = .schemaMismatch
            case .outOfOrderUpload: self = .outOfOrderUpload
            case .clientResetRequired: self = .clientResetRequired
            case .serverError: self = .serverError
            case .invalidValue: self = .invalidValue
            }
        }

        /// Errors after which reconnecting cannot help: the session stops until the app acts
        /// (logs in again, ships a matching schema, fixes its app id or upgrades).
        public var isFatal: Bool {
            switch self {
            case .invalidToken, .unknownApp, .schemaMismatch, .unsupportedProtocolVersion: true
            default: false
            }
        }
    }

    /// Why.
    public var code: Code
    /// What happened, in words (the server's message for its refusals).
    public var message: String

    /// An error with `code` and `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    init(connectionFailed message: String, url: URL) {
        self.init(.connectionFailed, "could not connect to \(url.absoluteString): \(message)")
    }

    /// The code and the message.
    public var description: String { "SyncError.\(code): \(message)" }
}
