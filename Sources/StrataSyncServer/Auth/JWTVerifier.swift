import Foundation

/// Checks the JSON Web Tokens of `.jwt(token:)` logins (RFC 7519): HS256 only, signed with one
/// of the app's configured keys, `exp` (when present) in the future, `nbf` (when present) not in
/// the future, `aud` naming the app's audience when one is configured; `sub` becomes the user id.
public struct JWTVerifier: Sendable {
    /// The HMAC keys the app accepts (their UTF-8 bytes).
    public let keys: [[UInt8]]
    /// The audience a token must name in `aud`; nil: `aud` is not checked.
    public let audience: String?

    /// A verifier accepting tokens signed with any of `keys` (and naming `audience`, if given).
    public init(keys: [String], audience: String? = nil) {
        self.keys = keys.map { Array($0.utf8) }
        self.audience = audience
    }

    /// The token's subject when it is valid at `now` (seconds since 1970).
    public func subject(of token: String, now: Int64) throws(AuthenticationError) -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]) else {
            throw .malformedToken("a JWT is three base64url parts separated by dots")
        }
        guard let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any] else {
            throw .malformedToken("the JWT header is not a JSON object")
        }
        let algorithm = header["alg"] as? String ?? "none"
        guard algorithm == "HS256" else { throw .unsupportedAlgorithm(algorithm) }
        let signedPart = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        let matches = keys.contains { key in
            HMACSHA256.constantTimeEquals(HMACSHA256.authenticationCode(for: signedPart, key: key), signature)
        }
        guard matches else { throw .badSignature }
        guard let claims = try? JSONSerialization.jsonObject(with: Data(payloadBytes)) as? [String: Any] else {
            throw .malformedToken("the JWT payload is not a JSON object")
        }
        if let expiry = claims["exp"] {
            guard let seconds = (expiry as? NSNumber)?.int64Value else { throw .malformedToken("exp is not a number") }
            guard seconds > now else { throw .expired(expiry: seconds) }
        }
        if let notBefore = claims["nbf"] {
            guard let seconds = (notBefore as? NSNumber)?.int64Value else { throw .malformedToken("nbf is not a number") }
            guard seconds <= now else { throw .notYetValid(notBefore: seconds) }
        }
        if let audience {
            let named: [String]
            switch claims["aud"] {
            case let single as String: named = [single]
            case let several as [Any]: named = several.compactMap { $0 as? String }
            default: named = []
            }
            guard named.contains(audience) else { throw .wrongAudience(expected: audience) }
        }
        guard let subject = claims["sub"] as? String, !subject.isEmpty else {
            throw .malformedToken("the JWT has no sub")
        }
        return subject
    }
}
