import Testing
@testable import StrataRealmFile

/// Decimal128 values: Realm's narrow leaf forms (BID32, BID64) widened, and the manifest's
/// text form.
@Suite("Realm Decimal128")
struct DecimalTests {
    @Test("BID64 values widen to the same number", arguments: [
        (UInt64(0x31A0_0000_0000_000F), "1.5"),
        (UInt64(0x6C73_86F2_6FC0_FFFF), "9999999999999999"),
        (UInt64(0xB160_0000_0001_E240), "-123.456"),
        (UInt64(0x7800_0000_0000_0000), "Inf"),
        (UInt64(0xF800_0000_0000_0000), "-Inf"),
        (UInt64(0x7C00_0000_0000_0000), "NaN"),
    ])
    func bid64(bits: UInt64, text: String) {
        #expect(RealmDecimal128(bid64: bits).description == text)
    }

    @Test("BID32 values widen to the same number", arguments: [
        (UInt32(0x3200_000F), "1.5"),
        (UInt32(0xB200_0005), "-5E-1"),
        (UInt32(0x3280_0000), "0"),
        (UInt32(0x3300_0007), "7E1"),
    ])
    func bid32(bits: UInt32, text: String) {
        #expect(RealmDecimal128(bid32: bits).description == text)
    }

    @Test("Realm's null marker survives widening from the narrow forms")
    func nullMarker() {
        #expect(RealmDecimal128(bid32: 0x7C00_00AA).isRealmNull)
        #expect(RealmDecimal128(bid64: 0x7C00_0000_0000_00AA).isRealmNull)
        #expect(!RealmDecimal128(bid64: 0x7C00_0000_0000_0000).isRealmNull)
        #expect(RealmDecimal128.null.isNaN)
    }

    @Test("the text form moves the point left while the exponent is not zero")
    func textForm() {
        // 123456789 × 10^292 and 1 × 10^-6176, as the all-types fixture holds them.
        let large = RealmDecimal128(low: 123_456_789, high: UInt64(292 + 6176) << 49)
        #expect(large.description == "1.23456789E300")
        #expect(RealmDecimal128(low: 1, high: 0).description == "1E-6176")
        #expect(RealmDecimal128(low: 0, high: 0x3040_0000_0000_0000).description == "0")
    }
}
