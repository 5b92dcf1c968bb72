/// A Realm `Decimal128`: an IEEE 754-2008 decimal128 in its binary-integer-decimal (BID)
/// encoding, kept as the two 64-bit words Realm stores.
public struct RealmDecimal128: Hashable, Sendable, CustomStringConvertible {
    /// Bits 0–63.
    public let low: UInt64
    /// Bits 64–127: the sign, the combination field and the top of the coefficient.
    public let high: UInt64

    /// A decimal from its two words.
    public init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// The NaN with payload 0xAA that Realm stores for a null decimal.
    static let null = RealmDecimal128(low: 0xAA, high: 0x7C00_0000_0000_0000)

    /// Whether this is Realm's null marker rather than a value.
    var isRealmNull: Bool { self == RealmDecimal128.null }

    /// Widens Realm's 4-byte (BID32) form.
    init(bid32 bits: UInt32) {
        let negative = bits >> 31 == 1
        if bits & 0x7C00_0000 == 0x7C00_0000 {
            self.init(low: UInt64(bits & 0x000F_FFFF), high: 0x7C00_0000_0000_0000 | (negative ? 1 << 63 : 0))
            return
        }
        if bits & 0x7800_0000 == 0x7800_0000 {
            self.init(low: 0, high: 0x7800_0000_0000_0000 | (negative ? 1 << 63 : 0))
            return
        }
        let exponent: Int
        let coefficient: UInt64
        if (bits >> 29) & 3 == 3 {
            exponent = Int((bits >> 21) & 0xFF)
            coefficient = UInt64(bits & 0x1F_FFFF | 0x80_0000)
        } else {
            exponent = Int((bits >> 23) & 0xFF)
            coefficient = UInt64(bits & 0x7F_FFFF)
        }
        self.init(negative: negative, biasedExponent: exponent - 101 + 6176, coefficient: coefficient)
    }

    /// Widens Realm's 8-byte (BID64) form.
    init(bid64 bits: UInt64) {
        let negative = bits >> 63 == 1
        if bits & 0x7C00_0000_0000_0000 == 0x7C00_0000_0000_0000 {
            self.init(low: bits & 0x0003_FFFF_FFFF_FFFF, high: 0x7C00_0000_0000_0000 | (negative ? 1 << 63 : 0))
            return
        }
        if bits & 0x7800_0000_0000_0000 == 0x7800_0000_0000_0000 {
            self.init(low: 0, high: 0x7800_0000_0000_0000 | (negative ? 1 << 63 : 0))
            return
        }
        let exponent: Int
        let coefficient: UInt64
        if (bits >> 61) & 3 == 3 {
            exponent = Int((bits >> 51) & 0x3FF)
            coefficient = bits & 0x0007_FFFF_FFFF_FFFF | 0x0020_0000_0000_0000
        } else {
            exponent = Int((bits >> 53) & 0x3FF)
            coefficient = bits & 0x001F_FFFF_FFFF_FFFF
        }
        self.init(negative: negative, biasedExponent: exponent - 398 + 6176, coefficient: coefficient)
    }

    private init(negative: Bool, biasedExponent: Int, coefficient: UInt64) {
        let exponentBits = UInt64(max(0, min(biasedExponent, 0x3FFF)))
        self.init(low: coefficient, high: (negative ? 1 << 63 : 0) | exponentBits << 49)
    }

    /// Whether the value is a NaN (any payload).
    public var isNaN: Bool { high & 0x7C00_0000_0000_0000 == 0x7C00_0000_0000_0000 }
    /// Whether the value is an infinity.
    public var isInfinite: Bool { !isNaN && high & 0x7800_0000_0000_0000 == 0x7800_0000_0000_0000 }
    /// Whether the sign bit is set.
    public var isNegative: Bool { high >> 63 == 1 }

    /// The exponent and coefficient of a finite value (value = coefficient × 10^exponent).
    /// Non-canonical coefficients (10^34 or more) are zero, as IEEE 754 requires.
    public var exponentAndCoefficient: (exponent: Int, coefficient: UInt128)? {
        if isNaN || isInfinite { return nil }
        let biased: Int
        var coefficient: UInt128
        if (high >> 61) & 3 == 3 {
            biased = Int((high >> 47) & 0x3FFF)
            coefficient = UInt128(high & 0x0000_7FFF_FFFF_FFFF | 0x0002_0000_0000_0000) << 64 | UInt128(low)
        } else {
            biased = Int((high >> 49) & 0x3FFF)
            coefficient = UInt128(high & 0x0001_FFFF_FFFF_FFFF) << 64 | UInt128(low)
        }
        if coefficient >= RealmDecimal128.tenTo34 { coefficient = 0 }
        return (biased - 6176, coefficient)
    }

    private static let tenTo34: UInt128 = {
        var value: UInt128 = 1
        for _ in 0..<34 { value *= 10 }
        return value
    }()

    /// The value in scientific form: the coefficient's digits with the decimal point moved left
    /// (adding 1 to the exponent each time) while more than one digit precedes it and the
    /// exponent is not zero, then `E` and the remaining exponent if it is not zero (`1.5`,
    /// `-5E-1`, `1.23456789E300`); `NaN`, `Inf`, `-Inf`.
    public var description: String {
        if isNaN { return "NaN" }
        if isInfinite { return isNegative ? "-Inf" : "Inf" }
        guard let (startExponent, coefficient) = exponentAndCoefficient else { return "NaN" }
        var digits = String(coefficient)
        var exponent = startExponent
        var pointPosition = digits.count
        while pointPosition > 1 && exponent != 0 {
            pointPosition -= 1
            exponent += 1
        }
        if pointPosition < digits.count {
            let index = digits.index(digits.startIndex, offsetBy: pointPosition)
            digits.insert(".", at: index)
        }
        var result = (isNegative ? "-" : "") + digits
        if exponent != 0 { result += "E\(exponent)" }
        return result
    }
}
