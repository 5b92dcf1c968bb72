/// Base64 with the URL- and filename-safe alphabet and no padding (RFC 4648 §5), as JWTs and
/// the server's own tokens use it.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The unpadded base64url text of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int((group >> UInt32(shift)) & 63)]) }
            index += 3
        }
        let rest = input.count - index
        if rest == 1 {
            let group = UInt32(input[index]) << 16
            output.append(alphabet[Int((group >> 18) & 63)])
            output.append(alphabet[Int((group >> 12) & 63)])
        } else if rest == 2 {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            output.append(alphabet[Int((group >> 18) & 63)])
            output.append(alphabet[Int((group >> 12) & 63)])
            output.append(alphabet[Int((group >> 6) & 63)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of unpadded (or padded) base64url `text`, or nil when it is not base64url.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        var sawPadding = false
        for character in text.utf8 {
            if character == UInt8(ascii: "=") { sawPadding = true; continue }
            if sawPadding { return nil }
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(character - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(character - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        if values.count % 4 == 1 { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            var group: UInt32 = 0
            for (offset, value) in chunk.enumerated() { group |= UInt32(value) << UInt32(18 - 6 * offset) }
            let byteCount = chunk.count - 1
            for offset in 0..<byteCount { output.append(UInt8(truncatingIfNeeded: group >> UInt32(16 - 8 * offset))) }
            index += 4
        }
        return output
    }
}
