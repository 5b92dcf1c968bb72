/// Why a token or a login was refused. The server answers login failures with HTTP 401 and
/// this error's description, and a session's bad token with `error(.invalidToken)`.
public enum AuthenticationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not `payload.signature` (or a JWT's three parts) in base64url, or its payload
    /// is not the expected JSON.
    case malformedToken(String)
    /// The signature does not match the key.
    case badSignature
    /// The token's expiry (seconds since 1970) has passed.
    case expired(expiry: Int64)
    /// The JWT's `nbf` (seconds since 1970) has not come yet.
    case notYetValid(notBefore: Int64)
    /// The JWT's `aud` does not name the app's configured audience.
    case wrongAudience(expected: String)
    /// The token was issued for another app.
    case wrongApp(expected: String, found: String)
    /// A refresh token was offered where an access token is needed, or the other way round.
    case wrongKind
    /// The JWT's header names an algorithm other than HS256.
    case unsupportedAlgorithm(String)
    /// The app does not accept this login provider (anonymous disabled, or no JWT keys).
    case providerDisabled(String)

    public var description: String {
        switch self {
        case .malformedToken(let why): "malformed token: \(why)"
        case .badSignature: "the token's signature does not match"
        case .expired(let expiry): "the token expired at \(expiry) (seconds since 1970)"
        case .notYetValid(let notBefore): "the token is not valid before \(notBefore) (seconds since 1970)"
        case .wrongAudience(let expected): "the token's aud does not name \(expected)"
        case .wrongApp(let expected, let found): "the token is for app \(found), not \(expected)"
        case .wrongKind: "a refresh token cannot be used as an access token, nor the other way round"
        case .unsupportedAlgorithm(let algorithm): "JWT algorithm \(algorithm) is not supported (only HS256)"
        case .providerDisabled(let provider): "the app does not accept \(provider) logins"
        }
    }
}
