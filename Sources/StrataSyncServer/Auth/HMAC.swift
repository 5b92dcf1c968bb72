/// HMAC-SHA256 (RFC 2104) and a comparison of signatures whose time does not depend on where
/// they differ, so an attacker cannot learn a valid signature byte by byte from response times.
public enum HMACSHA256 {
    /// The HMAC-SHA256 of `message` under `key`.
    public static func authenticationCode(for message: some Collection<UInt8>, key: some Collection<UInt8>) -> [UInt8] {
        var blockKey = key.count > SHA256.blockSize ? SHA256.hash(key) : Array(key)
        blockKey += [UInt8](repeating: 0, count: SHA256.blockSize - blockKey.count)
        let inner = SHA256.hash(blockKey.map { $0 ^ 0x36 } + Array(message))
        return SHA256.hash(blockKey.map { $0 ^ 0x5c } + inner)
    }

    /// Whether two byte strings are equal, reading every byte of the shorter whatever they hold.
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        var difference: UInt8 = lhs.count == rhs.count ? 0 : 1
        for i in 0..<min(lhs.count, rhs.count) { difference |= lhs[i] ^ rhs[i] }
        return difference == 0
    }
}
