// Decimal128 arithmetic, following IEEE 754-2008 §5.4 with round-half-even, which is also
// what the General Decimal Arithmetic specification (speleotrove.com/decimal/decarith.html)
// computes for a decimal128 context. Each operation computes the exact result, in a 256-bit
// integer where 128 bits do not suffice, and keeps the "ideal" exponent when that exact
// result fits in 34 digits. Otherwise `rounded` drops digits to 34, halves to even, then
// brings the exponent into -6176...6111: rounding further below (subnormal results), padding
// the coefficient with zeros above ("clamping"), or overflowing to infinity.

// MARK: - Rounding

extension Decimal128 {
    /// Rounds an exact (or, with `inexactBelow`, nearly exact) result to a representable
    /// value: 34 digits, halves to even, exponent clamped into range.
    ///
    /// `inexactBelow` says the true value is slightly more than `coefficient` (in magnitude):
    /// nonzero digits were already discarded below the last digit of `coefficient`. Callers
    /// pass it only when `coefficient` has at least 35 digits, so at least one digit is
    /// dropped here and the discarded part only ever acts as the "sticky" bit.
    static func rounded(
        negative: Bool, coefficient: WideUInt, exponent: Int, inexactBelow: Bool = false
    ) -> Decimal128 {
        var coefficient = coefficient
        var exponent = exponent
        let digits = coefficient.digitCount
        let dropped = Swift.max(digits - maximumDigits, minimumExponent - exponent, 0)
        assert(dropped > 0 || !inexactBelow, "an inexact result must lose at least one digit")
        if dropped > 0 {
            // `roundDigit` is the most significant discarded digit; `sticky` says whether any
            // discarded digit below it is nonzero.
            var roundDigit: UInt128 = 0
            var sticky = inexactBelow
            if dropped > digits {
                sticky = sticky || !coefficient.isZero
                coefficient = WideUInt(0)
            } else {
                var remaining = dropped
                while remaining > 0 {
                    let step = Swift.min(remaining, 38)
                    let (quotient, remainder) = coefficient.quotientAndRemainder(dividingBy: powersOfTen[step])
                    sticky = sticky || roundDigit != 0 || remainder % powersOfTen[step - 1] != 0
                    roundDigit = remainder / powersOfTen[step - 1]
                    coefficient = quotient
                    remaining -= step
                }
            }
            exponent += dropped
            if roundDigit > 5 || (roundDigit == 5 && (sticky || coefficient.isOdd)) {
                coefficient = coefficient + WideUInt(1)
                if coefficient == WideUInt(powersOfTen[maximumDigits]) {
                    coefficient = WideUInt(powersOfTen[maximumDigits - 1])
                    exponent += 1
                }
            }
        }
        assert(coefficient.high == 0, "rounding leaves at most 34 digits")
        var result = coefficient.low
        if exponent > maximumExponent {
            // Too large an exponent is fine if zeros can be appended to the coefficient
            // instead ("clamping"); otherwise the value overflows.
            let excess = exponent - maximumExponent
            if result == 0 {
                exponent = maximumExponent
            } else if WideUInt(result).digitCount + excess <= maximumDigits {
                result *= powersOfTen[excess]
                exponent = maximumExponent
            } else {
                return infinity(negative: negative)
            }
        }
        return Decimal128(negative: negative, coefficient: result, exponent: exponent)
    }
}

// MARK: - Operators

extension Decimal128: SignedNumeric {
    /// The value with its sign flipped. Negating zero gives `-0` and negating NaN gives NaN.
    public static prefix func - (operand: Decimal128) -> Decimal128 {
        Decimal128(bidHigh: operand.bidHigh ^ signBit, bidLow: operand.bidLow)
    }

    /// Flips the sign of the value.
    public mutating func negate() {
        self = -self
    }

    /// The sum, exact if it fits in 34 digits and otherwise rounded, halves to even.
    ///
    /// An exact sum keeps the smaller exponent of the two operands (`1.5 + 1.25` is `2.75`,
    /// `1.0 + 1.0` is `2.0`). `infinity + -infinity` is NaN, and so is any sum with NaN.
    public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        switch (lhs.unpacked, rhs.unpacked) {
        case (.nan, _), (_, .nan):
            return .nan
        case (.infinity(let lhsNegative), .infinity(let rhsNegative)):
            return lhsNegative == rhsNegative ? infinity(negative: lhsNegative) : .nan
        case (.infinity(let negative), .finite), (.finite, .infinity(let negative)):
            return infinity(negative: negative)
        case (.finite(let lhsNegative, let lhsCoefficient, let lhsExponent),
              .finite(let rhsNegative, let rhsCoefficient, let rhsExponent)):
            return add(
                (lhsNegative, lhsCoefficient, lhsExponent),
                (rhsNegative, rhsCoefficient, rhsExponent)
            )
        }
    }

    private typealias FiniteParts = (negative: Bool, coefficient: UInt128, exponent: Int)

    private static func add(_ lhs: FiniteParts, _ rhs: FiniteParts) -> Decimal128 {
        // `larger` has the larger exponent; the exact sum has `smaller`'s exponent.
        let (larger, smaller) = lhs.exponent >= rhs.exponent ? (lhs, rhs) : (rhs, lhs)
        if larger.coefficient == 0, smaller.coefficient == 0 {
            // An exact zero sum is +0 unless both operands are -0 (IEEE 754 §6.3).
            return Decimal128(
                negative: lhs.negative && rhs.negative, coefficient: 0, exponent: smaller.exponent
            )
        }
        if larger.coefficient == 0 {
            return Decimal128(negative: smaller.negative, coefficient: smaller.coefficient, exponent: smaller.exponent)
        }
        if smaller.coefficient == 0 {
            // Exact: move as far towards the smaller exponent as 34 digits allow.
            let digits = WideUInt(larger.coefficient).digitCount
            let shift = Swift.min(larger.exponent - smaller.exponent, maximumDigits - digits)
            return Decimal128(
                negative: larger.negative,
                coefficient: larger.coefficient * powersOfTen[shift],
                exponent: larger.exponent - shift
            )
        }

        var smallerCoefficient = smaller.coefficient
        var exponent = smaller.exponent
        let largerDigits = WideUInt(larger.coefficient).digitCount
        let largerLeading = larger.exponent + largerDigits
        let smallerLeading = smaller.exponent + WideUInt(smaller.coefficient).digitCount
        if largerLeading - smallerLeading >= 36 {
            // The smaller operand starts 36 or more digits below the larger one's leading
            // digit, so it lies wholly below the digit that decides rounding (the 35th digit of
            // the sum, which is the 36th of the larger operand when subtraction borrows). There
            // it only makes the sum a little larger or smaller than the larger operand; a 1 at
            // the larger operand's 38th digit has the same effect on rounding, and keeps the
            // aligned coefficients within 256 bits however far apart the exponents are.
            smallerCoefficient = 1
            exponent = larger.exponent - (38 - largerDigits)
        }
        let aligned = WideUInt(larger.coefficient).multiplied(byPowerOfTen: larger.exponent - exponent)
        let other = WideUInt(smallerCoefficient)

        if larger.negative == smaller.negative {
            return rounded(negative: larger.negative, coefficient: aligned + other, exponent: exponent)
        }
        if aligned == other {
            return Decimal128(negative: false, coefficient: 0, exponent: exponent)
        }
        return aligned > other
            ? rounded(negative: larger.negative, coefficient: aligned - other, exponent: exponent)
            : rounded(negative: smaller.negative, coefficient: other - aligned, exponent: exponent)
    }

    /// The difference, exact if it fits in 34 digits and otherwise rounded, halves to even.
    public static func - (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        lhs + -rhs
    }

    /// The product, exact if it fits in 34 digits and otherwise rounded, halves to even.
    ///
    /// An exact product's exponent is the sum of the operands' (`1.5 * 1.5` is `2.25`).
    /// `infinity * 0` is NaN.
    public static func * (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        switch (lhs.unpacked, rhs.unpacked) {
        case (.nan, _), (_, .nan):
            return .nan
        case (.infinity(let lhsNegative), .infinity(let rhsNegative)):
            return infinity(negative: lhsNegative != rhsNegative)
        case (.infinity(let infinityNegative), .finite(let negative, let coefficient, _)),
             (.finite(let negative, let coefficient, _), .infinity(let infinityNegative)):
            return coefficient == 0 ? .nan : infinity(negative: infinityNegative != negative)
        case (.finite(let lhsNegative, let lhsCoefficient, let lhsExponent),
              .finite(let rhsNegative, let rhsCoefficient, let rhsExponent)):
            return rounded(
                negative: lhsNegative != rhsNegative,
                coefficient: WideUInt.product(lhsCoefficient, rhsCoefficient),
                exponent: lhsExponent + rhsExponent
            )
        }
    }

    /// The quotient, exact if it fits in 34 digits and otherwise rounded, halves to even.
    ///
    /// An exact quotient keeps the exponent closest to the difference of the operands'
    /// (`1 / 8` is `0.125`, `6.0 / 2` is `3.0`). Dividing a nonzero value by zero gives
    /// infinity with the sign of the quotient; `0 / 0` and `infinity / infinity` are NaN.
    public static func / (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        switch (lhs.unpacked, rhs.unpacked) {
        case (.nan, _), (_, .nan), (.infinity, .infinity):
            return .nan
        case (.infinity(let lhsNegative), .finite(let rhsNegative, _, _)):
            return infinity(negative: lhsNegative != rhsNegative)
        case (.finite(let lhsNegative, _, _), .infinity(let rhsNegative)):
            return Decimal128(negative: lhsNegative != rhsNegative, coefficient: 0, exponent: minimumExponent)
        case (.finite(let lhsNegative, let lhsCoefficient, let lhsExponent),
              .finite(let rhsNegative, let rhsCoefficient, let rhsExponent)):
            let negative = lhsNegative != rhsNegative
            let idealExponent = lhsExponent - rhsExponent
            if rhsCoefficient == 0 {
                return lhsCoefficient == 0 ? .nan : infinity(negative: negative)
            }
            if lhsCoefficient == 0 {
                return rounded(negative: negative, coefficient: WideUInt(0), exponent: idealExponent)
            }
            // Scale the dividend so the quotient has at least 35 digits: 34 to keep and one
            // to round on, with the remainder as the sticky part.
            let scale = Swift.max(0, WideUInt(rhsCoefficient).digitCount + 35 - WideUInt(lhsCoefficient).digitCount)
            var (quotient, remainder) = WideUInt(lhsCoefficient)
                .multiplied(byPowerOfTen: scale)
                .quotientAndRemainder(dividingBy: rhsCoefficient)
            var exponent = idealExponent - scale
            if remainder == 0 {
                while exponent < idealExponent {
                    let (tenth, digit) = quotient.quotientAndRemainder(dividingBy: 10)
                    guard digit == 0 else { break }
                    quotient = tenth
                    exponent += 1
                }
            }
            return rounded(negative: negative, coefficient: quotient, exponent: exponent, inexactBelow: remainder != 0)
        }
    }

    /// Adds `rhs` to `lhs`.
    public static func += (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs + rhs }

    /// Subtracts `rhs` from `lhs`.
    public static func -= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs - rhs }

    /// Multiplies `lhs` by `rhs`.
    public static func *= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs * rhs }

    /// Divides `lhs` by `rhs`.
    public static func /= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs / rhs }
}

// MARK: - 256-bit coefficients
