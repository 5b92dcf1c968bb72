import Foundation
import Testing
@testable import StrataSyncServer

@Suite("Server auth: SHA-256, HMAC, tokens, JWT")
struct ServerAuthTests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    private func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return result
    }

    @Test func sha256MatchesTheFIPS180Vectors() {
        #expect(hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func hmacMatchesTheRFC4231Vectors() {
        // Test case 1.
        #expect(hex(HMACSHA256.authenticationCode(for: Array("Hi There".utf8), key: [UInt8](repeating: 0x0b, count: 20)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        // Test case 2.
        #expect(hex(HMACSHA256.authenticationCode(for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Test case 6: a key longer than the block is hashed first.
        #expect(hex(HMACSHA256.authenticationCode(for: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                                                  key: [UInt8](repeating: 0xaa, count: 131)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func constantTimeComparisonTellsEqualFromDifferent() {
        #expect(HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2]))
    }

    @Test func base64URLRoundTripsEveryLength() {
        for length in 0..<40 {
            let input = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            let text = Base64URL.encode(input)
            #expect(!text.contains("+") && !text.contains("/") && !text.contains("="))
            #expect(Base64URL.decode(text) == input)
        }
        #expect(Base64URL.decode("a+b") == nil)
        #expect(Base64URL.decode("abcde") == nil)
    }

    @Test func accessTokensVerifyOnlyForTheirAppKindSecretAndLifetime() throws {
        let issuer = TokenIssuer(secret: Array(repeating: 7, count: 32))
        let token = issuer.issue(.access, app: "todo", user: "ann", now: 1_000)
        #expect(try issuer.verify(token, kind: .access, app: "todo", now: 1_001).sub == "ann")
        #expect(throws: AuthenticationError.wrongApp(expected: "other", found: "todo")) {
            try issuer.verify(token, kind: .access, app: "other", now: 1_001)
        }
        #expect(throws: AuthenticationError.wrongKind) { try issuer.verify(token, kind: .refresh, app: "todo", now: 1_001) }
        #expect(throws: AuthenticationError.expired(expiry: 1_000 + 30 * 60)) {
            try issuer.verify(token, kind: .access, app: "todo", now: 1_000 + 30 * 60)
        }
        let otherServer = TokenIssuer(secret: Array(repeating: 8, count: 32))
        #expect(throws: AuthenticationError.badSignature) { try otherServer.verify(token, kind: .access, app: "todo", now: 1_001) }
        var tampered = Array(token.utf8)
        tampered[3] = tampered[3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: AuthenticationError.self) {
            try issuer.verify(String(decoding: tampered, as: UTF8.self), kind: .access, app: "todo", now: 1_001)
        }
        #expect(throws: AuthenticationError.self) { try issuer.verify("not a token", kind: .access, app: "todo", now: 1_001) }
    }

    /// An HS256 JWT built independently of the verifier (its signing input per RFC 7519).
    static func jwt(_ claims: String, key: String, header: String = #"{"alg":"HS256","typ":"JWT"}"#) -> String {
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        return signingInput + "." + Base64URL.encode(HMACSHA256.authenticationCode(for: Array(signingInput.utf8), key: Array(key.utf8)))
    }

    @Test func jwtWithAConfiguredKeyGivesItsSubject() throws {
        let verifier = JWTVerifier(keys: ["first", "second"])
        #expect(try verifier.subject(of: Self.jwt(#"{"sub":"ann","exp":2000}"#, key: "second"), now: 1_000) == "ann")
        #expect(try verifier.subject(of: Self.jwt(#"{"sub":"bob"}"#, key: "first"), now: 1_000) == "bob")
    }

    @Test func jwtNotBeforeAndAudienceAreChecked() throws {
        let plain = JWTVerifier(keys: ["k"])
        #expect(throws: AuthenticationError.notYetValid(notBefore: 1_500)) {
            try plain.subject(of: Self.jwt(#"{"sub":"ann","nbf":1500}"#, key: "k"), now: 1_000)
        }
        #expect(try plain.subject(of: Self.jwt(#"{"sub":"ann","nbf":1000,"aud":"other"}"#, key: "k"), now: 1_000) == "ann")
        let audience = JWTVerifier(keys: ["k"], audience: "todo")
        #expect(try audience.subject(of: Self.jwt(#"{"sub":"ann","aud":"todo"}"#, key: "k"), now: 1_000) == "ann")
        #expect(try audience.subject(of: Self.jwt(#"{"sub":"ann","aud":["x","todo"]}"#, key: "k"), now: 1_000) == "ann")
        #expect(throws: AuthenticationError.wrongAudience(expected: "todo")) {
            try audience.subject(of: Self.jwt(#"{"sub":"ann","aud":"other"}"#, key: "k"), now: 1_000)
        }
        #expect(throws: AuthenticationError.wrongAudience(expected: "todo")) {
            try audience.subject(of: Self.jwt(#"{"sub":"ann"}"#, key: "k"), now: 1_000)
        }
    }

    @Test func jwtIsRefusedWithAWrongKeyABadSignatureAnExpiryOrAnotherAlgorithm() {
        let verifier = JWTVerifier(keys: ["right"])
        #expect(throws: AuthenticationError.badSignature) {
            try verifier.subject(of: Self.jwt(#"{"sub":"ann"}"#, key: "wrong"), now: 1_000)
        }
        let valid = Self.jwt(#"{"sub":"ann"}"#, key: "right")
        let forged = valid.dropLast(4) + "AAAA"
        #expect(throws: AuthenticationError.badSignature) { try verifier.subject(of: String(forged), now: 1_000) }
        #expect(throws: AuthenticationError.expired(expiry: 999)) {
            try verifier.subject(of: Self.jwt(#"{"sub":"ann","exp":999}"#, key: "right"), now: 1_000)
        }
        #expect(throws: AuthenticationError.unsupportedAlgorithm("none")) {
            try verifier.subject(of: Self.jwt(#"{"sub":"ann"}"#, key: "right", header: #"{"alg":"none"}"#), now: 1_000)
        }
        #expect(throws: AuthenticationError.self) { try verifier.subject(of: "a.b", now: 1_000) }
        #expect(throws: AuthenticationError.self) { try verifier.subject(of: Self.jwt(#"{"name":"x"}"#, key: "right"), now: 1_000) }
    }
}
