import Foundation

/// Issues and checks the server's own tokens: `base64url(payload).base64url(HMAC-SHA256(secret,
/// payload))`, the payload a JSON object with the app id, the user id, the expiry (seconds since
/// 1970) and the kind (access or refresh). The secret is the server's (``SyncStorage/serverSecret()``),
/// so every instance sharing a store accepts every other's tokens, and tokens survive restarts.
public struct TokenIssuer: Sendable {
    /// Which of the two tokens a login hands out.
    public enum Kind: String, Sendable, Codable {
        /// Opens sync sessions; short-lived.
        case access
        /// Obtains a new access token (`POST /apps/{appID}/refresh`); long-lived.
        case refresh
    }

    /// What a valid token says.
    public struct Claims: Sendable, Hashable, Codable {
        /// The app the token was issued for.
        public var app: String
        /// The user it identifies.
        public var sub: String
        /// Expiry, seconds since 1970.
        public var exp: Int64
        /// Access or refresh.
        public var kind: Kind
    }

    private let secret: [UInt8]
    /// How long an access token is valid.
    public let accessLifetime: Duration
    /// How long a refresh token is valid.
    public let refreshLifetime: Duration

    /// An issuer signing with `secret` (at least 32 random bytes).
    public init(secret: [UInt8], accessLifetime: Duration = .seconds(30 * 60), refreshLifetime: Duration = .seconds(60 * 24 * 3600)) {
        self.secret = secret
        self.accessLifetime = accessLifetime
        self.refreshLifetime = refreshLifetime
    }

    /// A signed token of `kind` for `user` of `app`, valid from `now` (seconds since 1970).
    public func issue(_ kind: Kind, app: String, user: String, now: Int64) -> String {
        let lifetime = kind == .access ? accessLifetime : refreshLifetime
        let claims = Claims(app: app, sub: user, exp: now + lifetime.components.seconds, kind: kind)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding four plain fields cannot fail; an empty payload would fail verification anyway.
        let payload = (try? encoder.encode(claims)).map { [UInt8]($0) } ?? []
        let signature = HMACSHA256.authenticationCode(for: payload, key: secret)
        return Base64URL.encode(payload) + "." + Base64URL.encode(signature)
    }

    /// The claims of `token` when it is well-formed, signed with this issuer's secret, of
    /// `kind`, for `app` and not expired at `now`; otherwise the reason it is not.
    public func verify(_ token: String, kind: Kind, app: String, now: Int64) throws(AuthenticationError) -> Claims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(parts[0]), let signature = Base64URL.decode(parts[1]) else {
            throw .malformedToken("expected two base64url parts separated by a dot")
        }
        let expected = HMACSHA256.authenticationCode(for: payload, key: secret)
        guard HMACSHA256.constantTimeEquals(signature, expected) else { throw .badSignature }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: Data(payload)) else {
            throw .malformedToken("the payload is not the server's claims")
        }
        guard claims.kind == kind else { throw .wrongKind }
        guard claims.app == app else { throw .wrongApp(expected: app, found: claims.app) }
        guard claims.exp > now else { throw .expired(expiry: claims.exp) }
        return claims
    }
}
