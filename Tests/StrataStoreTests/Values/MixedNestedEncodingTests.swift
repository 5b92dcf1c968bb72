import Foundation
import Testing
@testable import StrataStore
import StrataTestWorkloads

/// Lists and dictionaries nested in mixed values (`StoreValue.mixedList`/`.mixedDictionary`):
/// they round-trip exactly at any depth up to the limit, one dictionary has one encoding,
/// values stored before nesting existed decode as before, and damaged bytes give a typed
/// `MixedDecodingError`, never a trap, a hang or an allocation beyond the bytes.
@Suite struct MixedNestedEncodingTests {
    static let nested: StoreValue = .mixedList([
        .int(1), .null, .string("two"), .typedLink(table: 4, key: ObjectKey(9)),
        .mixedDictionary(["a": .bool(true), "é": .mixedList([]), "b": .mixedDictionary([:]), "": .null]),
        .mixedList([.double(2.5), .mixedList([.data(Data([1, 2, 3]))])]),
    ])

    private func encoded(_ value: StoreValue) -> [UInt8] { MixedEncoding.withEncoded(value) { Array($0) } }

    private func decoded(_ bytes: [UInt8]) -> Result<StoreValue, MixedDecodingError> {
        bytes.withUnsafeBytes { MixedEncoding.decodeResult($0) }
    }

    @Test func nestedCollectionsRoundTripExactly() throws {
        for value in [Self.nested, .mixedList([]), .mixedDictionary([:]), .mixedDictionary(["k": Self.nested])] {
            #expect(try decoded(encoded(value)).get() == value)
            #expect(encoded(value).withUnsafeBytes { MixedEncoding.problem($0) } == nil)
        }
        #expect(Self.nested.nestingDepth == 3)
        #expect(Self.nested.kind == .mixed)
    }

    @Test func aDictionaryHasOneEncodingWhateverItsInsertionOrder() {
        var first: [String: StoreValue] = [:]
        var second: [String: StoreValue] = [:]
        let keys = (0..<50).map { "key\($0)" }
        for key in keys { first[key] = .string(key) }
        for key in keys.reversed() { second[key] = .string(key) }
        #expect(encoded(.mixedDictionary(first)) == encoded(.mixedDictionary(second)))
    }

    @Test func plainValuesEncodeAsBeforeNestingExisted() {
        // The bytes a file written before nested collections holds for 5 and "a".
        #expect(encoded(.int(5)) == [PropertyKind.int.rawValue, 5, 0, 0, 0, 0, 0, 0, 0])
        #expect(encoded(.string("a")) == [PropertyKind.string.rawValue, 0x61])
    }

    @Test func nestingUpToTheLimitDecodesAndDeeperIsRefused() {
        func nest(_ depth: Int) -> StoreValue {
            var value = StoreValue.int(1)
            for _ in 0..<depth { value = .mixedList([value]) }
            return value
        }
        let limit = MixedEncoding.maximumNestingDepth
        #expect((try? decoded(encoded(nest(limit))).get()) == nest(limit))
        #expect(decoded(encoded(nest(limit + 1))) == .failure(.nestedTooDeep(limit: limit)))
    }

    @Test func damagedBytesGiveTypedErrors() {
        let list = MixedNestedEncoding.listTag, dictionary = MixedNestedEncoding.dictionaryTag
        let cases: [([UInt8], MixedDecodingError)] = [
            ([list], .truncated),
            ([list, 1, 0, 0, 0], .countBeyondBytes(1)),
            ([list, 0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 16), .countBeyondBytes(Int(UInt32.max))),
            ([list, 1, 0, 0, 0, 9, 0, 0, 0, MixedNestedEncoding.noneTag], .truncated),
            ([list, 1, 0, 0, 0, 2, 0, 0, 0, MixedNestedEncoding.noneTag, 0], .malformedValue(tag: MixedNestedEncoding.noneTag, length: 1)),
            ([list, 0, 0, 0, 0, 7], .trailingBytes(1)),
            ([list, 1, 0, 0, 0, 1, 0, 0, 0, 0x7F], .malformedValue(tag: 0x7F, length: 0)),
            ([list, 1, 0, 0, 0, 3, 0, 0, 0, PropertyKind.string.rawValue, 0xFF, 0xFE], .notUTF8),
            ([dictionary, 2, 0, 0, 0, 1, 0, 0, 0, 0x62, 1, 0, 0, 0, MixedNestedEncoding.noneTag,
              1, 0, 0, 0, 0x61, 1, 0, 0, 0, MixedNestedEncoding.noneTag], .keysOutOfOrder("a")),
            ([dictionary, 1, 0, 0, 0, 1, 0, 0, 0, 0xC3, 1, 0, 0, 0, MixedNestedEncoding.noneTag], .notUTF8),
        ]
        for (bytes, error) in cases {
            #expect(decoded(bytes) == .failure(error), "\(bytes)")
            bytes.withUnsafeBytes { raw in
                #expect(MixedEncoding.decode(raw) == nil)
                #expect(MixedEncoding.problem(raw) == error.description)
            }
        }
    }

    @Test func seededMutationsOfNestedBytesNeverTrap() {
        var generator = SplitMix64(seed: 0x5EED_0034)
        let original = encoded(.mixedDictionary(["list": Self.nested, "n": .int(3)]))
        var decodedCount = 0
        for _ in 0..<5_000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.removeLast(Int.random(in: 0..<min(8, bytes.count), using: &generator))
                default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator))
                }
                if bytes.isEmpty { bytes = [MixedNestedEncoding.listTag] }
            }
            if case .success = decoded(bytes) { decodedCount += 1 }
        }
        // Some mutations (inside a string's bytes, say) still decode; most do not.
        #expect(decodedCount < 5_000)
    }

    @Test func writingCollectionsNestedTooDeepIsATypedError() throws {
        var value = StoreValue.int(1)
        for _ in 0..<(MixedEncoding.maximumNestingDepth + 1) { value = .mixedList([value]) }
        #expect(throws: StoreError.self) {
            try TableAccess.checkNested(value, depth: 1, type: "T", property: "p")
        }
        #expect(throws: StoreError.self) {
            try TableAccess.checkNested(.mixedList([.link(ObjectKey(1))]), depth: 1, type: "T", property: "p")
        }
        try TableAccess.checkNested(Self.nested, depth: 1, type: "T", property: "p")
    }
}
