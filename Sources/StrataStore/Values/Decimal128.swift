// IEEE 754-2008 decimal128 in the binary integer decimal (BID) encoding, the form BSON,
// MongoDB and Realm store. A value is sign × coefficient × 10^exponent with a coefficient of
// at most 34 decimal digits and an exponent in -6176...6111. The 128 bits are:
//
//     bit 127        sign
//     bits 126..113  biased exponent (exponent + 6176), when bits 126..125 are not 11
//     bits 112..0    coefficient
//
// When bits 126..125 are 11, bits 126..122 = 11110 means infinity and 11111 means NaN; any
// other pattern starting 11 is the "large coefficient" form, whose coefficient is always
// above 10^34 - 1 and so, as IEEE 754 requires, reads as zero. Coefficients above 10^34 - 1
// in the ordinary form read as zero too. Values this type produces are always canonical:
// ordinary form, coefficient ≤ 10^34 - 1, NaN and infinity with an empty payload.
//
// `description` is the to-scientific-string conversion of the General Decimal Arithmetic
// specification (speleotrove.com/decimal/decarith.html), which BSON and MongoDB also use.
// The arithmetic and the rounding every inexact result goes through are in
// Decimal128+Arithmetic.swift.
/// A 128-bit decimal floating-point number: 34 significant digits, exact for decimal
/// fractions such as money.
///
/// `Decimal128` is the IEEE 754-2008 decimal128 type in the encoding BSON, MongoDB and Realm
/// use, so values round-trip bit for bit through those systems. Unlike `Double`, it stores
/// `0.1` exactly and keeps the precision it was given (`1.50` prints as `1.50`):
///
/// ```swift
/// let price: Decimal128 = "19.99"
/// let total = price * 3                    // 59.97, exactly
/// let parsed = try Decimal128(string: "1.5E+10")
/// print(Decimal128(0.1) + Decimal128(0.2)) // 0.3
/// ```
///
/// Arithmetic is exact when the result fits in 34 digits and otherwise rounds to 34 digits,
/// halves to even. Results too large become infinity; results too small lose digits and
/// eventually become zero.
///
/// Values compare by number, not by representation: `1.0 == 1.00` and `0 == -0`, and equal
/// values have equal hash values. Not-a-number behaves as in `Double`: `nan == nan` is
/// `false`. For sorting, ``nan`` orders before every other value, so that sorting an array
/// or an index that holds NaN has one well-defined result.
///
/// A `Decimal128` encodes with `Codable` as its string form (``description``), which keeps
/// every digit; a number in JSON would lose them.
public struct Decimal128: Sendable {
    /// The high 64 bits of the BID encoding: the sign, the exponent and the top of the
    /// coefficient.
    ///
    /// Together with ``bidLow`` this is the value's 16-byte storage form. Pass both to
    /// ``init(bidHigh:bidLow:)`` to get the value back.
    public let bidHigh: UInt64

    /// The low 64 bits of the BID encoding: the bottom of the coefficient.
    public let bidLow: UInt64

    /// Creates a value from the two halves of its BID encoding, as stored by BSON or by
    /// ``bidHigh`` and ``bidLow``.
    ///
    /// Every bit pattern is accepted. Patterns IEEE 754 calls non-canonical (a coefficient
    /// above 10^34 - 1) read as zero with the stored sign and exponent.
    public init(bidHigh: UInt64, bidLow: UInt64) {
        self.bidHigh = bidHigh
        self.bidLow = bidLow
    }
}

// MARK: - Encoding

extension Decimal128 {
    static let maximumDigits = 34
    static let minimumExponent = -6176
    static let maximumExponent = 6111
    private static let exponentBias = 6176
    static let signBit: UInt64 = 1 << 63
    private static let infinityHigh: UInt64 = 0x7800_0000_0000_0000
    private static let nanHigh: UInt64 = 0x7C00_0000_0000_0000

    /// 10^0 through 10^38, every power of ten a UInt128 holds.
    static let powersOfTen: [UInt128] = {
        var powers: [UInt128] = [1]
        for _ in 1...38 { powers.append(powers[powers.count - 1] * 10) }
        return powers
    }()

    /// The value as an `Int64` when it is a whole number in `Int64`'s range (`5`, `5.00`,
    /// `5E+2`), else nil.
    package var exactInt64: Int64? {
        guard case .finite(let negative, var coefficient, let exponent) = unpacked else { return nil }
        if coefficient == 0 { return 0 }
        if exponent < 0 {
            // A coefficient below 10^34 is a multiple of 10^k only for k < 34.
            guard -exponent < Decimal128.powersOfTen.count else { return nil }
            let divisor = Decimal128.powersOfTen[-exponent]
            guard coefficient % divisor == 0 else { return nil }
            coefficient /= divisor
        } else if exponent > 0 {
            guard exponent < Decimal128.powersOfTen.count else { return nil }
            let (product, overflow) = coefficient.multipliedReportingOverflow(by: Decimal128.powersOfTen[exponent])
            guard !overflow else { return nil }
            coefficient = product
        }
        let limit = UInt128(UInt64(Int64.max)) + (negative ? 1 : 0)
        guard coefficient <= limit else { return nil }
        return negative ? Int64(truncatingIfNeeded: 0 &- UInt64(coefficient)) : Int64(coefficient)
    }

    /// 10^34 - 1, the largest coefficient.
    static let maximumCoefficient: UInt128 = powersOfTen[34] - 1

    /// The value taken apart. Zero is a finite value with coefficient 0.
    enum Unpacked {
        case finite(negative: Bool, coefficient: UInt128, exponent: Int)
        case infinity(negative: Bool)
        case nan
    }

    var unpacked: Unpacked {
        let negative = bidHigh & Decimal128.signBit != 0
        if (bidHigh >> 61) & 0b11 == 0b11 {
            switch (bidHigh >> 58) & 0b11111 {
            case 0b11111: return .nan
            case 0b11110: return .infinity(negative: negative)
            default:
                // Large-coefficient form: the coefficient is at least 2^113 > 10^34 - 1.
                let biased = Int((bidHigh >> 47) & 0x3FFF)
                return .finite(negative: negative, coefficient: 0, exponent: biased - Decimal128.exponentBias)
            }
        }
        let biased = Int((bidHigh >> 49) & 0x3FFF)
        var coefficient = UInt128(bidHigh & 0x1_FFFF_FFFF_FFFF) << 64 | UInt128(bidLow)
        if coefficient > Decimal128.maximumCoefficient { coefficient = 0 }
        return .finite(negative: negative, coefficient: coefficient, exponent: biased - Decimal128.exponentBias)
    }

    /// Encodes a finite value that is already in range: `coefficient` ≤ 10^34 - 1 and
    /// `exponent` in -6176...6111.
    init(negative: Bool, coefficient: UInt128, exponent: Int) {
        precondition(coefficient <= Decimal128.maximumCoefficient)
        precondition((Decimal128.minimumExponent...Decimal128.maximumExponent).contains(exponent))
        let biased = UInt64(exponent + Decimal128.exponentBias)
        self.init(
            bidHigh: (negative ? Decimal128.signBit : 0) | biased << 49 | UInt64(truncatingIfNeeded: coefficient >> 64),
            bidLow: UInt64(truncatingIfNeeded: coefficient)
        )
    }

    static func infinity(negative: Bool) -> Decimal128 {
        Decimal128(bidHigh: infinityHigh | (negative ? signBit : 0), bidLow: 0)
    }
}

// MARK: - Constants and properties

extension Decimal128 {
    /// Zero.
    public init() {
        self.init(negative: false, coefficient: 0, exponent: 0)
    }

    /// The largest finite value, 9.999999999999999999999999999999999E+6144.
    public static let max = Decimal128(negative: false, coefficient: maximumCoefficient, exponent: maximumExponent)

    /// The most negative finite value, -9.999999999999999999999999999999999E+6144.
    public static let min = Decimal128(negative: true, coefficient: maximumCoefficient, exponent: maximumExponent)

    /// The smallest positive value, 1E-6176.
    public static let leastNonzeroMagnitude = Decimal128(negative: false, coefficient: 1, exponent: minimumExponent)

    /// Not a number: the result of invalid operations such as `0 / 0` or `infinity - infinity`.
    ///
    /// Like `Double.nan`, it is not equal to any value, itself included. Use ``isNaN`` to test
    /// for it.
    public static let nan = Decimal128(bidHigh: nanHigh, bidLow: 0)

    /// Positive infinity. Negate it for negative infinity.
    public static let infinity = Decimal128.infinity(negative: false)

    /// Whether the value is not a number.
    public var isNaN: Bool {
        if case .nan = unpacked { return true }
        return false
    }

    /// Whether the value is positive or negative infinity.
    public var isInfinite: Bool {
        if case .infinity = unpacked { return true }
        return false
    }

    /// Whether the sign bit is set: true for negative numbers, `-0` and `-infinity`.
    ///
    /// Use it to tell `-0` from `0`, which compare equal.
    public var isSigned: Bool {
        bidHigh & Decimal128.signBit != 0
    }

    /// The absolute value: the same value with the sign bit cleared.
    public var magnitude: Decimal128 {
        Decimal128(bidHigh: bidHigh & ~Decimal128.signBit, bidLow: bidLow)
    }
}

// MARK: - Conversions

extension Decimal128 {
    /// Creates a value equal to `value`.
    public init(_ value: Int) {
        self.init(negative: value < 0, coefficient: UInt128(value.magnitude), exponent: 0)
    }

    /// Creates a value equal to `value`.
    public init(_ value: Int64) {
        self.init(negative: value < 0, coefficient: UInt128(value.magnitude), exponent: 0)
    }

    /// Creates a value from the shortest decimal that converts back to `value`.
    ///
    /// The result is the number `Double` prints, not the binary fraction it stores, so
    /// `Decimal128(0.1)` is exactly 0.1. Whole numbers that fit in 34 digits keep exponent 0
    /// (`Decimal128(100.0)` prints as `100`); other values keep only significant digits
    /// (`Decimal128(1.50)` prints as `1.5`). NaN and infinities convert to their decimal
    /// counterparts, and `-0.0` to `-0`.
    ///
    /// A `Double` holds at most 17 significant digits. To create a value with more, parse a
    /// string with ``init(string:)``.
    public init(_ value: Double) {
        if value.isNaN {
            self = .nan
            return
        }
        if value.isInfinite {
            self = .infinity(negative: value < 0)
            return
        }
        // Swift prints a Double as the shortest decimal that reads back as the same Double.
        guard let parsed = Decimal128.parse(value.description),
              case .finite(let negative, var coefficient, var exponent) = parsed.unpacked
        else {
            preconditionFailure("Double.description produced \(value.description), which is not a decimal")
        }
        if coefficient == 0 {
            exponent = 0
        } else {
            while coefficient % 10 == 0 {
                coefficient /= 10
                exponent += 1
            }
            if exponent > 0, WideUInt(coefficient).digitCount + exponent <= Decimal128.maximumDigits {
                coefficient *= Decimal128.powersOfTen[exponent]
                exponent = 0
            }
        }
        self.init(negative: negative, coefficient: coefficient, exponent: exponent)
    }

    /// The nearest `Double` to the value, halves to even.
    ///
    /// Values beyond the range of `Double` become infinity or zero; digits beyond the 15–17 a
    /// `Double` holds are lost.
    public var doubleValue: Double {
        switch unpacked {
        case .nan:
            return .nan
        case .infinity(let negative):
            return negative ? -.infinity : .infinity
        case .finite(let negative, let coefficient, let exponent):
            // Both factors are exact Doubles when the coefficient is below 2^53 and the power
            // is at most 10^22, so one correctly rounded operation gives the nearest Double.
            if coefficient <= 1 << 53, (-22...22).contains(exponent) {
                let powerOfTen = Double(Decimal128.powersOfTen[abs(exponent)])
                let magnitude = exponent >= 0 ? Double(coefficient) * powerOfTen : Double(coefficient) / powerOfTen
                return negative ? -magnitude : magnitude
            }
            // Otherwise let the standard library's correctly rounded parser do it.
            guard let double = Double(description) else {
                preconditionFailure("Double could not parse \(description)")
            }
            return double
        }
    }
}

extension Decimal128: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    /// Creates a value equal to an integer literal.
    public init(integerLiteral value: Int) {
        self.init(value)
    }

    /// Creates a value from a floating-point literal, through `Double`: `0.1` becomes exactly
    /// 0.1, as with the `Double` initializer.
    ///
    /// A literal with more than 15 significant digits may not survive the trip through
    /// `Double`; write it as a string literal instead.
    public init(floatLiteral value: Double) {
        self.init(value)
    }

    /// Creates a value equal to `source`, or returns `nil` if it has more than 34 digits.
    public init?<Source: BinaryInteger>(exactly source: Source) {
        guard let magnitude = UInt128(exactly: source.magnitude), magnitude <= Decimal128.maximumCoefficient else {
            return nil
        }
        self.init(negative: source < 0, coefficient: magnitude, exponent: 0)
    }
}

// MARK: - Strings

extension Decimal128: CustomStringConvertible, ExpressibleByStringLiteral {
    /// Creates a value from its decimal string form.
    ///
    /// Accepted forms, with an optional leading `+` or `-`: digits with an optional decimal
    /// point (`123`, `-1.50`, `.5`, `5.`), optionally followed by an exponent (`1.5E+10`,
    /// `1e-3`); and, in any letter case, `NaN`, `Inf` and `Infinity`. No spaces are allowed.
    ///
    /// The value keeps the precision written: `"1.50"` has coefficient 150 and exponent -2,
    /// and prints back as `1.50`. Beyond 34 significant digits the value rounds, halves to
    /// even; a value too large for the exponent range becomes infinity and one too small
    /// rounds towards zero, as IEEE 754 specifies.
    ///
    /// ```swift
    /// let amount = try Decimal128(string: "-1234.5678")
    /// ```
    ///
    /// - Throws: ``Decimal128Error/invalidString(_:)`` if `string` is not in one of the forms
    ///   above.
    public init(string: String) throws(Decimal128Error) {
        guard let value = Decimal128.parse(string) else { throw .invalidString(string) }
        self = value
    }

    /// Creates a value from a string literal, such as `let price: Decimal128 = "19.99"`.
    ///
    /// A literal that is not a valid decimal is a programming error and stops the program.
    /// Use ``init(string:)`` for strings that come from input.
    public init(stringLiteral value: String) {
        guard let parsed = Decimal128.parse(value) else {
            fatalError("Decimal128 literal \"\(value)\" is not a valid decimal number")
        }
        self = parsed
    }

    /// The value in scientific string form, the same form MongoDB and Realm print.
    ///
    /// Numbers with a non-positive exponent and no more than six leading zeros after the
    /// point print plainly (`123`, `-1.50`, `0.000001`); others use an exponent
    /// (`1.5E+10`, `1E-7`, `0E+3`). The sign of zero is kept (`-0`), and the special values
    /// print as `NaN`, `Infinity` and `-Infinity`. Parsing the string with ``init(string:)``
    /// gives back the same value with the same bits.
    public var description: String {
        switch unpacked {
        case .nan:
            return "NaN"
        case .infinity(let negative):
            return negative ? "-Infinity" : "Infinity"
        case .finite(let negative, let coefficient, let exponent):
            let digits = String(coefficient)
            let adjustedExponent = exponent + digits.count - 1
            var text = negative ? "-" : ""
            if exponent <= 0, adjustedExponent >= -6 {
                let fractionDigits = -exponent
                if fractionDigits == 0 {
                    text += digits
                } else if digits.count > fractionDigits {
                    text += String(digits.dropLast(fractionDigits)) + "." + String(digits.suffix(fractionDigits))
                } else {
                    text += "0." + String(repeating: "0", count: fractionDigits - digits.count) + digits
                }
            } else {
                text += String(digits.prefix(1))
                if digits.count > 1 {
                    text += "." + String(digits.dropFirst())
                }
                text += adjustedExponent < 0 ? "E-" : "E+"
                text += String(adjustedExponent.magnitude)
            }
            return text
        }
    }

    /// The value in scientific string form; the same as ``description``.
    public var stringValue: String { description }

    static func parse(_ string: String) -> Decimal128? {
        var string = string
        return string.withUTF8 { parse($0) }
    }

    private static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Decimal128? {
        var index = 0
        var negative = false
        if index < text.count, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") {
            negative = text[index] == UInt8(ascii: "-")
            index += 1
        }

        let word = String(decoding: UnsafeBufferPointer(rebasing: text[index...]), as: UTF8.self).lowercased()
        switch word {
        case "inf", "infinity": return infinity(negative: negative)
        case "nan": return negative ? -nan : nan
        default: break
        }

        // Keep up to 36 significant digits: two more than the result holds, so that rounding
        // sees the digit after the 34th exactly and anything further only as "nonzero".
        let keptLimit = 36
        var coefficient: UInt128 = 0
        var keptDigits = 0
        var droppedDigits = 0
        var droppedNonzero = false
        var fractionDigits = 0
        var sawDigit = false
        var sawPoint = false
        while index < text.count {
            let character = text[index]
            if character == UInt8(ascii: "."), !sawPoint {
                sawPoint = true
            } else if let digit = decimalDigit(character) {
                sawDigit = true
                if sawPoint { fractionDigits += 1 }
                if keptDigits == 0, digit == 0 {
                    // A leading zero: not significant.
                } else if keptDigits < keptLimit {
                    coefficient = coefficient * 10 + UInt128(digit)
                    keptDigits += 1
                } else {
                    droppedDigits += 1
                    droppedNonzero = droppedNonzero || digit != 0
                }
            } else {
                break
            }
            index += 1
        }
        guard sawDigit else { return nil }

        var exponent = 0
        if index < text.count {
            guard text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") else { return nil }
            index += 1
            var exponentNegative = false
            if index < text.count, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") {
                exponentNegative = text[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < text.count else { return nil }
            while index < text.count {
                guard let digit = decimalDigit(text[index]) else { return nil }
                // Saturate: any exponent this large overflows or underflows all the same.
                if exponent < 1_000_000_000_000 {
                    exponent = exponent * 10 + Int(digit)
                }
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }

        return rounded(
            negative: negative,
            coefficient: WideUInt(coefficient),
            exponent: exponent - fractionDigits + droppedDigits,
            inexactBelow: droppedNonzero
        )
    }

    private static func decimalDigit(_ character: UInt8) -> UInt8? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(character) ? character - UInt8(ascii: "0") : nil
    }
}

// MARK: - Comparison and hashing

extension Decimal128: Hashable, Comparable {
    /// Compares two non-NaN values by number: -1, 0 or 1. Returns `nil` if either is NaN.
    private static func compare(_ lhs: Decimal128, _ rhs: Decimal128) -> Int? {
        switch (lhs.unpacked, rhs.unpacked) {
        case (.nan, _), (_, .nan):
            return nil
        case (.infinity(let lhsNegative), .infinity(let rhsNegative)):
            return lhsNegative == rhsNegative ? 0 : (lhsNegative ? -1 : 1)
        case (.infinity(let negative), .finite):
            return negative ? -1 : 1
        case (.finite, .infinity(let negative)):
            return negative ? 1 : -1
        case (.finite(let lhsNegative, let lhsCoefficient, let lhsExponent),
              .finite(let rhsNegative, let rhsCoefficient, let rhsExponent)):
            switch (lhsCoefficient == 0, rhsCoefficient == 0) {
            case (true, true): return 0
            case (true, false): return rhsNegative ? 1 : -1
            case (false, true): return lhsNegative ? -1 : 1
            case (false, false): break
            }
            if lhsNegative != rhsNegative { return lhsNegative ? -1 : 1 }
            let magnitudeOrder = compareMagnitudes(lhsCoefficient, lhsExponent, rhsCoefficient, rhsExponent)
            return lhsNegative ? -magnitudeOrder : magnitudeOrder
        }
    }

    /// Compares two nonzero magnitudes written as coefficient × 10^exponent.
    private static func compareMagnitudes(
        _ lhsCoefficient: UInt128, _ lhsExponent: Int, _ rhsCoefficient: UInt128, _ rhsExponent: Int
    ) -> Int {
        // The position of the leading digit decides unless it is the same; then scaling the
        // one with the larger exponent gives it at most 34 digits, which fits in UInt128.
        let lhsLeading = lhsExponent + WideUInt(lhsCoefficient).digitCount
        let rhsLeading = rhsExponent + WideUInt(rhsCoefficient).digitCount
        if lhsLeading != rhsLeading { return lhsLeading < rhsLeading ? -1 : 1 }
        var lhs = lhsCoefficient
        var rhs = rhsCoefficient
        if lhsExponent > rhsExponent {
            lhs *= powersOfTen[lhsExponent - rhsExponent]
        } else {
            rhs *= powersOfTen[rhsExponent - lhsExponent]
        }
        return lhs == rhs ? 0 : (lhs < rhs ? -1 : 1)
    }

    /// Whether two values are numerically equal.
    ///
    /// Values with different representations of the same number are equal (`1.0 == 1.00`,
    /// `0 == -0`, `0E+3 == 0`). NaN is not equal to anything, itself included, as in IEEE 754
    /// and `Double`.
    public static func == (lhs: Decimal128, rhs: Decimal128) -> Bool {
        compare(lhs, rhs) == 0
    }

    /// Whether `lhs` orders before `rhs`: by number, with NaN before every other value.
    ///
    /// Placing NaN first (rather than making every comparison with it false, as `Double`
    /// does) keeps the order total, so sorting and sorted indexes stay well defined when NaN
    /// values are present. Values that are equal by ``==(_:_:)`` are never ordered before one
    /// another, and neither are two NaNs.
    public static func < (lhs: Decimal128, rhs: Decimal128) -> Bool {
        switch (lhs.isNaN, rhs.isNaN) {
        case (true, true): false
        case (true, false): true
        case (false, true): false
        case (false, false): compare(lhs, rhs)! < 0
        }
    }

    /// Hashes the numeric value, so that equal values hash alike whatever their
    /// representation.
    public func hash(into hasher: inout Hasher) {
        switch unpacked {
        case .nan:
            hasher.combine(2 as UInt8)
        case .infinity(let negative):
            hasher.combine(1 as UInt8)
            hasher.combine(negative)
        case .finite(let negative, var coefficient, var exponent):
            hasher.combine(0 as UInt8)
            guard coefficient != 0 else { return }
            while coefficient % 10 == 0 {
                coefficient /= 10
                exponent += 1
            }
            hasher.combine(negative)
            hasher.combine(coefficient)
            hasher.combine(exponent)
        }
    }
}

// MARK: - Coding

extension Decimal128: Codable {
    /// Decodes a value from its string form.
    ///
    /// - Throws: `DecodingError.dataCorrupted` if the string is not a valid decimal.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let value = Decimal128.parse(string) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: Decimal128Error.invalidString(string).description
            )
        }
        self = value
    }

    /// Encodes the value as its string form (``description``), which keeps every digit.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension Decimal128 {
    /// The 16 stored bytes: the low then the high 64 bits of the BID encoding, little-endian.
    package init(storedBytes: UnsafeRawBufferPointer) {
        let low = storedBytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        let high = storedBytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        self.init(bidHigh: high, bidLow: low)
    }

    package func withStoredBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var pair = (bidLow, bidHigh)
        return try withUnsafeBytes(of: &pair) { try body($0) }
    }
}
