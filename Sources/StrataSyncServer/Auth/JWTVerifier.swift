import Foundation

/// Checks the JSON Web Tokens of `.jwt(token:)` logins (RFC 7519): HS256 only, signed with one
/// of the app's configured keys, `exp` (when present) in the future; `sub` becomes the user id.
public struct JWTVerifier: Sendable {
    /// The HMAC keys the app accepts (their UTF-8 bytes).
    public let keys: [[UInt8]]

    /// A verifier accepting tokens signed with any of `keys`.
    public init(keys: [String]) { self.keys = keys.map { Array($0.utf8) } }

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
        guard let subject = claims["sub"] as? String, !subject.isEmpty else {
            throw .malformedToken("the JWT has no sub")
        }
        return subject
    }
}
