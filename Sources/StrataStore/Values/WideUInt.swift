/// An unsigned 256-bit integer, for the exact intermediate results of decimal arithmetic: a
/// product of two 34-digit coefficients has up to 68 digits, and aligned sums up to 69.
/// Only the operations the arithmetic needs; overflow traps.
struct WideUInt: Equatable, Comparable {
    var high: UInt128
    var low: UInt128

    init(_ value: UInt128) {
        high = 0
        low = value
    }

    private init(high: UInt128, low: UInt128) {
        self.high = high
        self.low = low
    }

    static func product(_ lhs: UInt128, _ rhs: UInt128) -> WideUInt {
        let (high, low) = lhs.multipliedFullWidth(by: rhs)
        return WideUInt(high: high, low: low)
    }

    var isZero: Bool { high == 0 && low == 0 }
    var isOdd: Bool { low & 1 == 1 }

    /// The number of decimal digits; 0 for zero.
    var digitCount: Int {
        var value = self
        var digits = 0
        while value.high != 0 {
            value = value.quotientAndRemainder(dividingBy: Decimal128.powersOfTen[19]).quotient
            digits += 19
        }
        // floor(log10(x)) + 1, from the bit length: 1233 / 4096 ≈ log10(2).
        let bitLength = UInt128.bitWidth - value.low.leadingZeroBitCount
        let estimate = (bitLength * 1233) >> 12
        return digits + estimate + (value.low >= Decimal128.powersOfTen[estimate] ? 1 : 0)
    }

    func multiplied(byPowerOfTen exponent: Int) -> WideUInt {
        var result = self
        var remaining = exponent
        while remaining > 0 {
            let step = Swift.min(remaining, 38)
            let factor = Decimal128.powersOfTen[step]
            let lowProduct = result.low.multipliedFullWidth(by: factor)
            result = WideUInt(high: result.high * factor + lowProduct.high, low: lowProduct.low)
            remaining -= step
        }
        return result
    }

    func quotientAndRemainder(dividingBy divisor: UInt128) -> (quotient: WideUInt, remainder: UInt128) {
        let (highQuotient, highRemainder) = high.quotientAndRemainder(dividingBy: divisor)
        let (lowQuotient, remainder) = divisor.dividingFullWidth((highRemainder, low))
        return (WideUInt(high: highQuotient, low: lowQuotient), remainder)
    }

    static func + (lhs: WideUInt, rhs: WideUInt) -> WideUInt {
        let (low, carry) = lhs.low.addingReportingOverflow(rhs.low)
        return WideUInt(high: lhs.high + rhs.high + (carry ? 1 : 0), low: low)
    }

    /// `lhs - rhs`, for `lhs >= rhs`.
    static func - (lhs: WideUInt, rhs: WideUInt) -> WideUInt {
        let (low, borrow) = lhs.low.subtractingReportingOverflow(rhs.low)
        return WideUInt(high: lhs.high - rhs.high - (borrow ? 1 : 0), low: low)
    }

    static func < (lhs: WideUInt, rhs: WideUInt) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
