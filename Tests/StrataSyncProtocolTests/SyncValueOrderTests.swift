import Testing
import StrataSyncProtocol

/// `SyncValue`'s exact equality and total order, which set merging and encodings rely on.
@Suite struct SyncValueOrderTests {
    @Test func floatingPointValuesAreEqualExactlyWhenTheirBitsAre() {
        #expect(SyncValue.double(.nan) == .double(.nan))
        #expect(SyncValue.double(.nan) != .double(Double(bitPattern: 0x7FF8_0000_0000_0001)))
        #expect(SyncValue.double(0.0) != .double(-0.0))
        #expect(SyncValue.float(-0.0) != .float(0.0))
        #expect(SyncValue.date(.nan) == .date(.nan))
        #expect(Set([SyncValue.double(.nan), .double(.nan)]).count == 1)
    }

    @Test func stringsAreEqualExactlyWhenTheirUTF8BytesAre() {
        #expect(SyncValue.string("caf\u{E9}") != .string("cafe\u{301}"))
        let precomposed = SyncValue.embedded(EmbeddedValue(properties: ["m": .map(["caf\u{E9}": .null])]))
        let decomposed = SyncValue.embedded(EmbeddedValue(properties: ["m": .map(["cafe\u{301}": .null])]))
        #expect(precomposed != decomposed)
        #expect(Set([SyncValue.string("caf\u{E9}"), .string("cafe\u{301}")]).count == 2)
    }

    @Test func theOrderIsKindThenPayload() {
        let ordered: [SyncValue] = [
            .null, .bool(false), .bool(true), .int(.min), .int(-1), .int(0), .int(.max),
            .float(-.infinity), .float(-0.0), .float(0.0), .float(.infinity), .float(.nan),
            .double(-.nan), .double(-1), .double(-0.0), .double(0.0), .double(2), .double(.nan),
            .string(""), .string("a"), .string("b"), .string("é"), .data([]), .data([0]), .date(1),
            .objectID([0]), .uuid([0]), .decimal128([0]),
            .link(ObjectRef(className: "A", primaryKey: .int(2))), .link(ObjectRef(className: "B", primaryKey: .int(1))),
            .embedded(EmbeddedValue(properties: [:])), .embedded(EmbeddedValue(properties: ["a": .value(.null)])),
        ]
        var generator = SplitMix64(seed: 5)
        #expect(ordered.shuffled(using: &generator).sorted() == ordered)
        for (index, value) in ordered.enumerated() {
            for (otherIndex, other) in ordered.enumerated() {
                #expect((value < other) == (index < otherIndex), "\(value) vs \(other)")
            }
        }
    }

    @Test(arguments: [61, 62] as [UInt64])
    func theOrderIsTotalAndConsistentWithEquality(seed: UInt64) {
        var random = RandomValues(seed: seed)
        let values = (0 ..< 300).map { _ in random.value() }
        for _ in 0 ..< 3000 {
            let a = random.pick(values), b = random.pick(values), c = random.pick(values)
            #expect([a < b, a == b, b < a].filter { $0 }.count == 1)
            if a < b && b < c { #expect(a < c) }
        }
    }
}
