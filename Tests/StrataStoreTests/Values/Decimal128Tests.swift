import Foundation
import StrataStore
import Testing

// Expected strings and encodings below were derived from the IEEE 754-2008 decimal128
// definition (34 digits, exponent -6176...6111, round half even, clamping) and checked against
// an independent implementation of the General Decimal Arithmetic specification configured
// as decimal128.

@Suite struct Decimal128Tests {
    static func decimal(_ string: String) throws -> Decimal128 {
        try Decimal128(string: string)
    }

    // MARK: Encoding

    @Test(arguments: [
        ("1", 0x3040_0000_0000_0000, 1),
        ("-1", 0xB040_0000_0000_0000, 1),
        ("0.1", 0x303E_0000_0000_0000, 1),
        ("0", 0x3040_0000_0000_0000, 0),
        ("-0", 0xB040_0000_0000_0000, 0),
        ("1.5E+10", 0x3052_0000_0000_0000, 15),
        ("NaN", 0x7C00_0000_0000_0000, 0),
        ("Infinity", 0x7800_0000_0000_0000, 0),
        ("-Infinity", 0xF800_0000_0000_0000, 0),
        ("9.999999999999999999999999999999999E+6144", 0x5FFF_ED09_BEAD_87C0, 0x378D_8E63_FFFF_FFFF),
        ("1E-6176", 0x0000_0000_0000_0000, 1),
        ("-1E-6176", 0x8000_0000_0000_0000, 1),
        ("0E-6176", 0x0000_0000_0000_0000, 0),
        ("0E+6111", 0x5FFE_0000_0000_0000, 0),
        ("1234567890123456789012345678901234", 0x3040_3CDE_6FFF_9732, 0xDE82_5CD0_7E96_AFF2),
    ] as [(String, UInt64, UInt64)])
    func bidEncodingMatchesTheStandard(string: String, high: UInt64, low: UInt64) throws {
        let value = try Self.decimal(string)
        #expect(value.bidHigh == high)
        #expect(value.bidLow == low)
        let decoded = Decimal128(bidHigh: high, bidLow: low)
        #expect(decoded.description == string)
        #expect(decoded.bidHigh == high && decoded.bidLow == low)
    }

    @Test func constantsHaveTheirEncodings() {
        #expect(Decimal128().bidHigh == 0x3040_0000_0000_0000 && Decimal128().bidLow == 0)
        #expect(Decimal128.max.description == "9.999999999999999999999999999999999E+6144")
        #expect(Decimal128.min.description == "-9.999999999999999999999999999999999E+6144")
        #expect(Decimal128.leastNonzeroMagnitude.description == "1E-6176")
        #expect(Decimal128.nan.bidHigh == 0x7C00_0000_0000_0000)
        #expect(Decimal128.infinity.bidHigh == 0x7800_0000_0000_0000)
        #expect((-Decimal128.infinity).bidHigh == 0xF800_0000_0000_0000)
    }

    @Test func nonCanonicalEncodingsReadAsZero() {
        // Coefficient 10^34 in the ordinary form: one above the largest.
        let tooLarge = Decimal128(bidHigh: 0x3041_ED09_BEAD_87C0, bidLow: 0x378D_8E64_0000_0000)
        #expect(tooLarge == 0)
        #expect(tooLarge.description == "0")
        // The large-coefficient form (bits 126..125 = 11), exponent bits 124..111 = 6176.
        let largeForm = Decimal128(bidHigh: 0x6000_0000_0000_0000 | UInt64(6176) << 47, bidLow: 5)
        #expect(largeForm.description == "0")
        #expect(!largeForm.isNaN && !largeForm.isInfinite)
        // NaN with a payload and a sign is still NaN, printed without either.
        let payloadNaN = Decimal128(bidHigh: 0xFE00_0000_0000_0000, bidLow: 12)
        #expect(payloadNaN.isNaN)
        #expect(payloadNaN.description == "NaN")
    }

    // MARK: Strings

    @Test(arguments: [
        "0", "-0", "1", "-1", "123", "1.5", "-1.50", "0.001", "0.000001", "1E-7", "1.5E+10", "1E+2",
        "100", "0.000", "0E+3", "-0E-7", "1.000000000000000000000000000000000E+40",
        "1234567890123456789012345678901234", "1.234567890123456789012345678901234E-6143",
        "9.999999999999999999999999999999999E+6144", "-9.999999999999999999999999999999999E+6144",
        "1E-6176", "1.0E+6112", "0E+6111", "0E-6176", "NaN", "Infinity", "-Infinity",
    ])
    func canonicalStringsRoundTrip(_ string: String) throws {
        let value = try Self.decimal(string)
        #expect(value.description == string)
        #expect(value.stringValue == string)
        let again = try Self.decimal(value.description)
        #expect(again.bidHigh == value.bidHigh && again.bidLow == value.bidLow)
    }

    @Test(arguments: [
        ("+1", "1"), ("1.", "1"), (".5", "0.5"), ("-.5", "-0.5"), ("1e-3", "0.001"), ("1e3", "1E+3"),
        ("1E+0", "1"), ("0001.2300", "1.2300"), ("-0.0", "-0.0"), ("123.456E-20", "1.23456E-18"),
        ("0.0000001", "1E-7"), ("12E-8", "1.2E-7"), ("inf", "Infinity"), ("-Inf", "-Infinity"),
        ("INFINITY", "Infinity"), ("+infinity", "Infinity"), ("nan", "NaN"), ("-NaN", "NaN"),
        (".000", "0.000"), ("0E+6200", "0E+6111"), ("0E-7000", "0E-6176"),
        // Exponents beyond the range fold into the coefficient when it has room…
        ("1E+6112", "1.0E+6112"), ("1E+6144", "1.000000000000000000000000000000000E+6144"),
        // …and overflow or underflow otherwise.
        ("1E+6145", "Infinity"), ("-1E+6145", "-Infinity"), ("1E-6177", "0E-6176"), ("6E-6177", "1E-6176"),
        ("15E-6177", "2E-6176"), ("25E-6177", "2E-6176"), ("-1E-7000", "-0E-6176"),
        ("1E+99999999999999999999999", "Infinity"), ("1E-99999999999999999999999", "0E-6176"),
    ] as [(String, String)])
    func otherSpellingsParseToTheCanonicalForm(input: String, canonical: String) throws {
        #expect(try Self.decimal(input).description == canonical)
    }

    @Test(arguments: [
        // 35 digits, a tie: the 34th digit (4) is even and stays.
        ("12345678901234567890123456789012345", "1.234567890123456789012345678901234E+34"),
        // A tie with an odd 34th digit (5) rounds up.
        ("12345678901234567890123456789012355", "1.234567890123456789012345678901236E+34"),
        // Not a tie: a nonzero digit far below the 5 rounds up.
        ("12345678901234567890123456789012345000001", "1.234567890123456789012345678901235E+40"),
        ("1234567890123456789012345678901234.5", "1234567890123456789012345678901234"),
        ("1234567890123456789012345678901233.5", "1234567890123456789012345678901234"),
        ("1234567890123456789012345678901234.4999999", "1234567890123456789012345678901234"),
        // Rounding up carries into a 35th digit.
        ("99999999999999999999999999999999995", "1.000000000000000000000000000000000E+35"),
        ("-99999999999999999999999999999999995", "-1.000000000000000000000000000000000E+35"),
        ("9.9999999999999999999999999999999995E+6144", "Infinity"),
        ("9.99999999999999999999999999999999949E+6144", "9.999999999999999999999999999999999E+6144"),
        (
            "0.00000000000000000000000000000000000000001234567890123456789012345678901234567",
            "1.234567890123456789012345678901235E-41"
        ),
    ] as [(String, String)])
    func moreThan34DigitsRoundHalfEven(input: String, expected: String) throws {
        #expect(try Self.decimal(input).description == expected)
    }

    @Test(arguments: [
        "", " 1", "1 ", "abc", "1e", "1e+", "e5", ".", "-", "+", "1.2.3", "0x10", "1,5", "--1", "+-1",
        "NaNa", "Infinit", "in", "1E5.0", "1e+-5", "١", "1_000",
    ])
    func malformedStringsThrow(_ string: String) {
        #expect(throws: Decimal128Error.invalidString(string)) { try Decimal128(string: string) }
        #expect(Decimal128Error.invalidString(string).description.contains("not a valid Decimal128"))
    }

    @Test func literals() {
        let integer: Decimal128 = 42
        let float: Decimal128 = 0.1
        let string: Decimal128 = "19.99"
        #expect(integer.description == "42")
        #expect(float.description == "0.1")
        #expect(string.description == "19.99")
    }

    // MARK: Comparison

    @Test func equalityIsNumeric() throws {
        let representations = try ["1", "1.0", "1.00", "0.1E+1", "100E-2", "1.000000000000000000000000000000000"].map(Self.decimal)
        for a in representations {
            for b in representations {
                #expect(a == b)
                #expect(a.hashValue == b.hashValue)
                #expect(!(a < b))
            }
        }
        let zeros = try ["0", "-0", "0E+10", "-0E-6176", "0.000"].map(Self.decimal)
        for a in zeros {
            for b in zeros {
                #expect(a == b)
                #expect(a.hashValue == b.hashValue)
            }
        }
        #expect(Set(representations + zeros).count == 2)
        #expect(try Self.decimal("1.01") != Self.decimal("1.1"))
        #expect(try Self.decimal("-1") != Self.decimal("1"))
        #expect(Decimal128.infinity == Decimal128.infinity)
        #expect(Decimal128.infinity != -Decimal128.infinity)
    }

    @Test func nanIsUnequalToEverythingAndSortsFirst() throws {
        let nan = Decimal128.nan
        #expect(nan != nan)
        #expect(nan != 0)
        #expect(nan.isNaN && !nan.isInfinite)
        #expect(nan < -Decimal128.infinity)
        #expect(!(Decimal128.min < nan))
        #expect(!(nan < nan))
        let sorted = try [Decimal128(3), nan, -Decimal128.infinity, Self.decimal("-0"), nan, 1, Decimal128.infinity].sorted()
        #expect(sorted.map(\.description) == ["NaN", "NaN", "-Infinity", "-0", "1", "3", "Infinity"])
    }

    @Test func orderAcrossExponentsIsNumeric() throws {
        // Ascending by value, with exponents and digit counts deliberately mixed.
        let ascending = try [
            "-Infinity", "-9.999999999999999999999999999999999E+6144", "-1E+100", "-100", "-99.99", "-1E+1",
            "-1.000000000000000000000000000000001", "-1", "-0.99999999999999999999999999999999", "-1E-6176",
            "0", "1E-6176", "2E-6176", "1E-6143", "0.000001", "0.1", "0.99", "1", "1.000000000000000000000000000000001",
            "1.01", "1.1", "9", "10", "10.5", "1.1E+1", "99", "1E+2", "100.5", "1234567890123456789012345678901234",
            "1.234567890123456789012345678901235E+33", "1E+34", "1E+6111", "9.999999999999999999999999999999999E+6144",
            "Infinity",
        ].map(Self.decimal)
        for (index, a) in ascending.enumerated() {
            for (otherIndex, b) in ascending.enumerated() {
                #expect((a < b) == (index < otherIndex), "\(a) < \(b)")
                #expect((a == b) == (index == otherIndex), "\(a) == \(b)")
            }
        }
        var generator = SplitMix64(seed: 3)
        #expect(ascending.shuffled(using: &generator).sorted() == ascending)
    }

    // MARK: Arithmetic

    @Test(arguments: [
        ("1", "+", "2", "3"), ("1.5", "+", "1.25", "2.75"), ("1.0", "+", "1.0", "2.0"), ("0.1", "+", "0.2", "0.3"),
        ("-0", "+", "-0", "-0"), ("0", "+", "-0", "0"), ("1", "+", "-1", "0"), ("-1.50", "+", "1.5", "0.00"),
        ("1E+40", "+", "1E-40", "1.000000000000000000000000000000000E+40"),
        ("1E+34", "+", "1", "1.000000000000000000000000000000000E+34"),
        ("9999999999999999999999999999999999", "+", "1", "1.000000000000000000000000000000000E+34"),
        ("9999999999999999999999999999999999", "+", "0.5", "1.000000000000000000000000000000000E+34"),
        ("9999999999999999999999999999999998", "+", "0.5", "9999999999999999999999999999999998"),
        ("1", "+", "0E-10", "1.0000000000"), ("1E+50", "+", "-1", "1.000000000000000000000000000000000E+50"),
        ("Infinity", "+", "-Infinity", "NaN"), ("Infinity", "+", "1", "Infinity"), ("NaN", "+", "1", "NaN"),
        ("9.999999999999999999999999999999999E+6144", "+", "5E+6111", "Infinity"),
        ("1", "-", "0.9", "0.1"), ("0", "-", "0", "0"), ("-0", "-", "0", "-0"),
        ("1E+40", "-", "1E-40", "1.000000000000000000000000000000000E+40"),
        ("10000000000000000000000000000000000", "-", "1", "9999999999999999999999999999999999"),
        ("1.5", "*", "1.5", "2.25"), ("-2", "*", "0", "-0"), ("0.1", "*", "0.1", "0.01"),
        ("1E+6000", "*", "1E+6000", "Infinity"), ("1E-6000", "*", "1E-6000", "0E-6176"),
        ("Infinity", "*", "0", "NaN"), ("-Infinity", "*", "2", "-Infinity"),
        ("9999999999999999999999999999999999", "*", "9999999999999999999999999999999999", "9.999999999999999999999999999999998E+67"),
        ("1E-6176", "*", "0.5", "0E-6176"), ("3E-6176", "*", "0.5", "2E-6176"), ("1E+6111", "*", "100", "1.00E+6113"),
        ("1", "/", "3", "0.3333333333333333333333333333333333"), ("2", "/", "3", "0.6666666666666666666666666666666667"),
        ("1", "/", "8", "0.125"), ("6.0", "/", "2", "3.0"), ("1000", "/", "10", "100"),
        ("1", "/", "7", "0.1428571428571428571428571428571429"), ("-22", "/", "7", "-3.142857142857142857142857142857143"),
        ("12345678901234567890", "/", "1E-20", "1.2345678901234567890E+39"),
        ("1", "/", "0", "Infinity"), ("-1", "/", "0", "-Infinity"), ("0", "/", "0", "NaN"), ("0", "/", "5", "0"),
        ("1", "/", "Infinity", "0E-6176"), ("Infinity", "/", "Infinity", "NaN"), ("Infinity", "/", "-2", "-Infinity"),
        ("1E+6111", "/", "1E-6176", "Infinity"), ("1E-6176", "/", "10", "0E-6176"), ("1E-6176", "/", "3", "0E-6176"),
    ] as [(String, String, String, String)])
    func arithmetic(lhs: String, operation: String, rhs: String, expected: String) throws {
        let a = try Self.decimal(lhs)
        let b = try Self.decimal(rhs)
        let result: Decimal128
        var compound = a
        switch operation {
        case "+": result = a + b; compound += b
        case "-": result = a - b; compound -= b
        case "*": result = a * b; compound *= b
        default: result = a / b; compound /= b
        }
        #expect(result.description == expected)
        #expect(compound.description == expected)
        if expected != "NaN" {
            let parsed = try Self.decimal(expected)
            #expect(result.bidHigh == parsed.bidHigh && result.bidLow == parsed.bidLow)
        }
    }

    @Test func negationAndMagnitude() throws {
        let value = try Self.decimal("-12.50")
        #expect((-value).description == "12.50")
        #expect(value.magnitude.description == "12.50")
        #expect(value.isSigned && !value.magnitude.isSigned)
        #expect((-Decimal128()).description == "-0")
        #expect((-Decimal128()).isSigned)
        #expect((-Decimal128.nan).isNaN)
        var mutable = value
        mutable.negate()
        #expect(mutable == value.magnitude)
        #expect(Decimal128.min == -Decimal128.max)
    }

    @Test func integerConversions() throws {
        #expect(Decimal128(Int.max).description == "9223372036854775807")
        #expect(Decimal128(Int.min).description == "-9223372036854775808")
        #expect(Decimal128(Int64.min).description == "-9223372036854775808")
        #expect(Decimal128(Int64(7)) == 7)
        #expect(Decimal128(exactly: UInt64.max)?.description == "18446744073709551615")
        let largest = String(repeating: "9", count: 34)
        #expect(Decimal128(exactly: UInt128(largest)!)?.description == largest)
        #expect(Decimal128(exactly: UInt128(largest)! + 1) == nil)
        #expect(Decimal128(exactly: -Int128(largest)!) == (try Decimal128(string: "-" + largest)))
        #expect(Decimal128(exactly: Int128.min) == nil)
    }

    // MARK: Double

    @Test(arguments: [
        (0.1, "0.1"), (1.0, "1"), (100.0, "100"), (1.5, "1.5"), (-2.25, "-2.25"), (0.0, "0"), (-0.0, "-0"),
        (1e16, "10000000000000000"), (123456789012345680.0, "123456789012345680"), (1e300, "1E+300"),
        (1e-5, "0.00001"), (Double.leastNonzeroMagnitude, "5E-324"), (1.7976931348623157e308, "1.7976931348623157E+308"),
        (Double.infinity, "Infinity"), (-Double.infinity, "-Infinity"), (Double.nan, "NaN"),
    ] as [(Double, String)])
    func fromDoubleUsesTheShortestDecimal(double: Double, expected: String) {
        #expect(Decimal128(double).description == expected)
    }

    @Test func toDoubleIsTheNearestDouble() throws {
        #expect(try Self.decimal("0.1").doubleValue == 0.1)
        #expect(try Self.decimal("1.5E+10").doubleValue == 1.5e10)
        #expect(try Self.decimal("-0").doubleValue.sign == .minus)
        #expect(try Self.decimal("1E+400").doubleValue == .infinity)
        #expect(try Self.decimal("-1E+400").doubleValue == -.infinity)
        #expect(try Self.decimal("1E-400").doubleValue == 0)
        #expect(try Self.decimal("NaN").doubleValue.isNaN)
        // 2^53 + 1 is a tie between 2^53 and 2^53 + 2; the even one wins.
        #expect(try Self.decimal("9007199254740993").doubleValue == 9_007_199_254_740_992)
        #expect(try Self.decimal("9007199254740993.0000000000000001").doubleValue == 9_007_199_254_740_994)
        #expect(try Self.decimal("3.141592653589793238462643383279503").doubleValue == Double.pi)
    }

    @Test func doublesRoundTrip() {
        var generator = SplitMix64(seed: 4)
        var checked = 0
        while checked < 5_000 {
            let double = Double(bitPattern: generator.next())
            guard double.isFinite else { continue }
            let decimal = Decimal128(double)
            #expect(decimal.doubleValue == double, "\(double)")
            #expect(decimal.doubleValue.sign == double.sign)
            checked += 1
        }
    }

    // MARK: Coding

    @Test func codableAsString() throws {
        let values = try ["1.50", "-0", "1E-6176", "NaN", "-Infinity"].map(Self.decimal)
        let json = try JSONEncoder().encode(values)
        #expect(String(decoding: json, as: UTF8.self) == #"["1.50","-0","1E-6176","NaN","-Infinity"]"#)
        let decoded = try JSONDecoder().decode([Decimal128].self, from: json)
        #expect(decoded.map(\.description) == values.map(\.description))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([Decimal128].self, from: Data(#"["1.5.0"]"#.utf8))
        }
    }
}
