/// SHA-224 (FIPS 180-4) and HMAC-SHA224 (RFC 2104), which Realm uses to authenticate each
/// encrypted page. swift-crypto offers SHA-256 but not SHA-224, which is SHA-256 with other
/// initial values and a digest cut to 28 bytes.
enum SHA224 {
    static let digestSize = 28
    private static let blockSize = 64

    private static let initialState: [UInt32] = [
        0xC105_9ED8, 0x367C_D507, 0x3070_DD17, 0xF70E_5939, 0xFFC0_0B31, 0x6858_1511, 0x64F9_8FA7, 0xBEFA_4FA4,
    ]

    private static let roundConstants: [UInt32] = [
        0x428A_2F98, 0x7137_4491, 0xB5C0_FBCF, 0xE9B5_DBA5, 0x3956_C25B, 0x59F1_11F1, 0x923F_82A4, 0xAB1C_5ED5,
        0xD807_AA98, 0x1283_5B01, 0x2431_85BE, 0x550C_7DC3, 0x72BE_5D74, 0x80DE_B1FE, 0x9BDC_06A7, 0xC19B_F174,
        0xE49B_69C1, 0xEFBE_4786, 0x0FC1_9DC6, 0x240C_A1CC, 0x2DE9_2C6F, 0x4A74_84AA, 0x5CB0_A9DC, 0x76F9_88DA,
        0x983E_5152, 0xA831_C66D, 0xB003_27C8, 0xBF59_7FC7, 0xC6E0_0BF3, 0xD5A7_9147, 0x06CA_6351, 0x1429_2967,
        0x27B7_0A85, 0x2E1B_2138, 0x4D2C_6DFC, 0x5338_0D13, 0x650A_7354, 0x766A_0ABB, 0x81C2_C92E, 0x9272_2C85,
        0xA2BF_E8A1, 0xA81A_664B, 0xC24B_8B70, 0xC76C_51A3, 0xD192_E819, 0xD699_0624, 0xF40E_3585, 0x106A_A070,
        0x19A4_C116, 0x1E37_6C08, 0x2748_774C, 0x34B0_BCB5, 0x391C_0CB3, 0x4ED8_AA4A, 0x5B9C_CA4F, 0x682E_6FF3,
        0x748F_82EE, 0x78A5_636F, 0x84C8_7814, 0x8CC7_0208, 0x90BE_FFFA, 0xA450_6CEB, 0xBEF9_A3F7, 0xC671_78F2,
    ]

    /// The SHA-224 digest of `message`.
    static func hash<Bytes: Collection>(_ message: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var state = initialState
        var block = [UInt8]()
        block.reserveCapacity(blockSize)
        var length: UInt64 = 0
        var schedule = [UInt32](repeating: 0, count: 64)
        for byte in message {
            block.append(byte)
            length &+= 1
            if block.count == blockSize {
                compress(&state, block, &schedule)
                block.removeAll(keepingCapacity: true)
            }
        }
        block.append(0x80)
        if block.count > blockSize - 8 {
            block.append(contentsOf: [UInt8](repeating: 0, count: blockSize - block.count))
            compress(&state, block, &schedule)
            block.removeAll(keepingCapacity: true)
        }
        block.append(contentsOf: [UInt8](repeating: 0, count: blockSize - 8 - block.count))
        let bitLength = length &* 8
        for shift in stride(from: 56, through: 0, by: -8) {
            block.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        compress(&state, block, &schedule)
        var digest: [UInt8] = []
        for word in state.prefix(7) {
            digest += [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)]
        }
        return digest
    }

    /// HMAC-SHA224 of `message` under `key`.
    static func authenticationCode<Bytes: Collection>(for message: Bytes, key: [UInt8]) -> [UInt8] where Bytes.Element == UInt8 {
        var paddedKey = key.count > blockSize ? hash(key) : key
        paddedKey += [UInt8](repeating: 0, count: blockSize - paddedKey.count)
        let inner = hash(paddedKey.map { $0 ^ 0x36 } + Array(message))
        return hash(paddedKey.map { $0 ^ 0x5C } + inner)
    }

    private static func compress(_ state: inout [UInt32], _ block: [UInt8], _ schedule: inout [UInt32]) {
        for index in 0..<16 {
            schedule[index] = UInt32(block[index * 4]) << 24 | UInt32(block[index * 4 + 1]) << 16
                | UInt32(block[index * 4 + 2]) << 8 | UInt32(block[index * 4 + 3])
        }
        for index in 16..<64 {
            let previous15 = schedule[index - 15]
            let previous2 = schedule[index - 2]
            let sigma0 = rotate(previous15, 7) ^ rotate(previous15, 18) ^ (previous15 >> 3)
            let sigma1 = rotate(previous2, 17) ^ rotate(previous2, 19) ^ (previous2 >> 10)
            schedule[index] = schedule[index - 16] &+ sigma0 &+ schedule[index - 7] &+ sigma1
        }
        var a = state[0], b = state[1], c = state[2], d = state[3]
        var e = state[4], f = state[5], g = state[6], h = state[7]
        for index in 0..<64 {
            let sum1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
            let choice = (e & f) ^ (~e & g)
            let temporary1 = h &+ sum1 &+ choice &+ roundConstants[index] &+ schedule[index]
            let sum0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let temporary2 = sum0 &+ majority
            h = g
            g = f
            f = e
            e = d &+ temporary1
            d = c
            c = b
            b = a
            a = temporary1 &+ temporary2
        }
        state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
        state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value >> count) | (value << (32 - count))
    }
}
