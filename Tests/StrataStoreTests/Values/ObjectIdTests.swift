import Foundation
import StrataStore
import Testing

@Suite struct ObjectIdTests {
    /// The example from MongoDB's ObjectId documentation.
    static let knownHex = "507f1f77bcf86cd799439011"
    static let knownBytes: [UInt8] = [0x50, 0x7F, 0x1F, 0x77, 0xBC, 0xF8, 0x6C, 0xD7, 0x99, 0x43, 0x90, 0x11]

    /// The counter is the last three bytes, big-endian.
    static func counter(of id: ObjectId) -> UInt32 {
        let bytes = id.byteArray
        return UInt32(bytes[9]) << 16 | UInt32(bytes[10]) << 8 | UInt32(bytes[11])
    }

    @Test func knownBSONExampleHasTheDocumentedLayout() throws {
        let id = try ObjectId(string: Self.knownHex)
        #expect(id.byteArray == Self.knownBytes)
        #expect(id.stringValue == Self.knownHex)
        #expect(id.description == Self.knownHex)
        // 0x507f1f77 = 1350508407 seconds = 2012-10-17T21:13:27Z.
        #expect(id.timestamp == ISO8601DateFormatter().date(from: "2012-10-17T21:13:27Z"))
        #expect(id.timestamp.timeIntervalSince1970 == 1_350_508_407)
        #expect(Self.counter(of: id) == 0x439011)

        let tuple = id.bytes
        let fromTuple = [
            tuple.0, tuple.1, tuple.2, tuple.3, tuple.4, tuple.5,
            tuple.6, tuple.7, tuple.8, tuple.9, tuple.10, tuple.11,
        ]
        #expect(fromTuple == Self.knownBytes)
        #expect(id.withUnsafeBytes { Array($0) } == Self.knownBytes)
    }

    @Test func parsingAcceptsEitherCaseAndPrintsLowercase() throws {
        let upper = try ObjectId(string: "507F1F77BCF86CD799439011")
        let mixed = try ObjectId(string: "507f1F77bcF86cd799439011")
        #expect(upper == mixed)
        #expect(upper.stringValue == Self.knownHex)
        let all = try ObjectId(string: "0123456789abcdefABCDEF00")
        #expect(all.byteArray == [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xAB, 0xCD, 0xEF, 0x00])
        #expect(try ObjectId(string: "000000000000000000000000").byteArray == Array(repeating: 0, count: 12))
        #expect(try ObjectId(string: "ffffffffffffffffffffffff").byteArray == Array(repeating: 0xFF, count: 12))
    }

    @Test(arguments: [
        "",
        "507f1f77bcf86cd79943901",        // 23 digits
        "507f1f77bcf86cd7994390111",      // 25 digits
        "507f1f77bcf86cd79943901g",       // not hexadecimal
        "0x507f1f77bcf86cd7994390",       // prefix
        " 507f1f77bcf86cd799439011",
        "507f1f77-bcf86cd7-99439011",
        "507f1f77bcf86cd79943901\u{0661}", // a non-ASCII digit
    ])
    func malformedStringsThrowInvalidString(_ string: String) {
        #expect(throws: ObjectIdError.invalidString(string)) { try ObjectId(string: string) }
        #expect(ObjectId(string) == nil)
        #expect(ObjectIdError.invalidString(string).description.contains("24 hexadecimal digits"))
    }

    @Test func literalInitializerIsNotOptionalAndStringInitializerIs() {
        // A literal picks the StaticString initializer: `literal` is an ObjectId, not an
        // optional (this would not compile otherwise).
        let literal = ObjectId("507f1f77bcf86cd799439011")
        #expect(literal.stringValue == Self.knownHex)
        let text = Self.knownHex
        let optional: ObjectId? = ObjectId(text)
        #expect(optional == literal)
    }

    @Test func bytesInitializerRequiresTwelveBytes() throws {
        #expect(ObjectId(bytes: Self.knownBytes) == (try ObjectId(string: Self.knownHex)))
        #expect(ObjectId(bytes: Self.knownBytes[...]) != nil)
        #expect(ObjectId(bytes: Self.knownBytes.dropLast()) == nil)
        #expect(ObjectId(bytes: Self.knownBytes + [0]) == nil)
        #expect(ObjectId(bytes: [UInt8]()) == nil)
        var generator = SplitMix64(seed: 1)
        for _ in 0..<200 {
            let bytes = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let id = try #require(ObjectId(bytes: bytes))
            #expect(id.byteArray == bytes)
            #expect(try ObjectId(string: id.stringValue) == id)
        }
    }

    @Test func timestampMachineAndProcessGoWhereBSONPutsThem() {
        let date = Date(timeIntervalSince1970: 1_350_508_407.75)
        let id = ObjectId(timestamp: date, machineId: 0x12_3456, processId: 0x789A)
        #expect(Array(id.byteArray[0..<9]) == [0x50, 0x7F, 0x1F, 0x77, 0x12, 0x34, 0x56, 0x78, 0x9A])
        #expect(id.timestamp.timeIntervalSince1970 == 1_350_508_407)

        // Only the low 24 and 16 bits are kept.
        let truncated = ObjectId(timestamp: date, machineId: 0x7F12_3456, processId: 0xFF_789A)
        #expect(Array(truncated.byteArray[4..<9]) == [0x12, 0x34, 0x56, 0x78, 0x9A])

        // Out-of-range times clamp to what 32 bits hold.
        let early = ObjectId(timestamp: Date(timeIntervalSince1970: -5), machineId: 0, processId: 0)
        #expect(early.timestamp.timeIntervalSince1970 == 0)
        let late = ObjectId(timestamp: Date(timeIntervalSince1970: 1e11), machineId: 0, processId: 0)
        #expect(late.timestamp.timeIntervalSince1970 == Double(UInt32.max))
    }

    @Test func orderIsLexicographicByteOrder() throws {
        var generator = SplitMix64(seed: 2)
        var ids: [ObjectId] = []
        for _ in 0..<300 {
            // Few distinct byte values, so that many pairs share long prefixes.
            let bytes = (0..<12).map { _ in [0x00, 0x7F, 0x80, 0xFF][Int.random(in: 0..<4, using: &generator)] as UInt8 }
            ids.append(try #require(ObjectId(bytes: bytes)))
        }
        for (a, b) in zip(ids, ids.dropFirst()) {
            #expect((a < b) == a.byteArray.lexicographicallyPrecedes(b.byteArray))
            #expect((a == b) == (a.byteArray == b.byteArray))
        }
        let older = ObjectId(timestamp: Date(timeIntervalSince1970: 1000), machineId: 0xFF_FFFF, processId: 0xFFFF)
        let newer = ObjectId(timestamp: Date(timeIntervalSince1970: 1001), machineId: 0, processId: 0)
        #expect(older < newer)
        #expect(ids.sorted().map(\.byteArray) == ids.map(\.byteArray).sorted { $0.lexicographicallyPrecedes($1) })
    }

    @Test func equalIdsHashAlike() throws {
        let a = try ObjectId(string: Self.knownHex)
        let b = try ObjectId(string: Self.knownHex.uppercased())
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b, try ObjectId(string: "507f1f77bcf86cd799439012")]).count == 2)
    }

    @Test func codableAsHexString() throws {
        let id = try ObjectId(string: Self.knownHex)
        let json = try JSONEncoder().encode([id])
        #expect(String(decoding: json, as: UTF8.self) == "[\"\(Self.knownHex)\"]")
        #expect(try JSONDecoder().decode([ObjectId].self, from: json) == [id])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([ObjectId].self, from: Data("[\"not an id\"]".utf8))
        }
    }

    @Test func generatedIdsAreUniqueWithIncreasingCounters() {
        let before = Date().timeIntervalSince1970.rounded(.down)
        let ids = (0..<10_000).map { _ in ObjectId.generate() }
        let after = Date().timeIntervalSince1970

        #expect(Set(ids).count == ids.count)
        // The five process bytes are fixed for the life of the process.
        #expect(Set(ids.map { Array($0.byteArray[4..<9]) }).count == 1)
        #expect(ids.allSatisfy { (before...after).contains($0.timestamp.timeIntervalSince1970) })
        // Each call takes the next counter value, modulo 2^24. Tests running in parallel may
        // take values in between, so the step is at least 1 rather than exactly 1; the total
        // advance stays far below a full wrap.
        var totalAdvance: UInt32 = 0
        for (a, b) in zip(ids, ids.dropFirst()) {
            let step = (Self.counter(of: b) &- Self.counter(of: a)) & 0xFF_FFFF
            #expect(step >= 1)
            totalAdvance += step
        }
        #expect(totalAdvance < 1 << 23)
        // ObjectId() is generate().
        let plain = ObjectId()
        #expect(!ids.contains(plain))
        #expect(plain.byteArray[4..<9] == ids[0].byteArray[4..<9])
    }

    @Test func concurrentGenerationNeverRepeatsACounter() async {
        let tasks = 8
        let perTask = 2_000
        let ids = await withTaskGroup(of: [ObjectId].self) { group in
            for _ in 0..<tasks {
                group.addTask { (0..<perTask).map { _ in ObjectId.generate() } }
            }
            var all: [ObjectId] = []
            for await batch in group { all += batch }
            return all
        }
        #expect(ids.count == tasks * perTask)
        #expect(Set(ids).count == ids.count)
        // A racy counter would hand the same value to two tasks; with fewer than 2^24 ids in
        // flight every counter value is distinct, whatever the seconds are.
        #expect(Set(ids.map(Self.counter(of:))).count == ids.count)
    }
}
