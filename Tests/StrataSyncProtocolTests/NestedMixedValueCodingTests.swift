import Testing
import StrataSyncProtocol

/// Lists and dictionaries nested in mixed values travel as whole values (protocol version 2):
/// they round-trip exactly through the frame codec at any allowed depth, encode the same
/// whatever a dictionary's insertion order, merge by last writer like any value, and a frame
/// from a version-1 peer is refused with a clear error before any value is read.
@Suite struct NestedMixedValueCodingTests {
    private static let todo = ObjectRef(className: "Todo", primaryKey: .int(1))
    private static let nested: SyncValue = .mixedList([
        .int(1), .null, .string("two"), .link(ObjectRef(className: "Owner", primaryKey: .string("ann"))),
        .mixedDictionary(["a": .bool(true), "é": .mixedList([]), "": .mixedDictionary([:])]),
        .mixedList([.double(2.5), .data([1, 2])]),
    ])

    private static func set(_ value: SyncValue, at wall: UInt64 = 1) -> SyncOperation {
        SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: wall, counter: 0, clientID: 1), object: todo,
                      change: .set(property: "value", value: value))
    }

    @Test func nestedCollectionsRoundTripThroughAnUploadFrame() throws {
        for value in [Self.nested, .mixedList([]), .mixedDictionary([:]), .mixedDictionary(["k": Self.nested])] {
            let message = SyncMessage.upload([ClientChangeset(clientSequence: 1, operations: [Self.set(value)])])
            let decoded = try SyncFrameCodec.decode(SyncFrameCodec.encode(message))
            #expect(decoded == message)
        }
    }

    @Test func aDictionaryEncodesTheSameWhateverItsInsertionOrder() {
        var first: [String: SyncValue] = [:], second: [String: SyncValue] = [:]
        for index in 0 ..< 40 { first["k\(index)"] = .int(Int64(index)) }
        for index in (0 ..< 40).reversed() { second["k\(index)"] = .int(Int64(index)) }
        var left = BinaryWriter(), right = BinaryWriter()
        left.write(SyncValue.mixedDictionary(first))
        right.write(SyncValue.mixedDictionary(second))
        #expect(left.bytes == right.bytes)
        #expect(SyncValue.mixedDictionary(first) == .mixedDictionary(second))
        #expect(SyncValue.mixedDictionary(first).hashValue == SyncValue.mixedDictionary(second).hashValue)
    }

    @Test func nestedCollectionsOrderAfterEveryOtherKindAndConsistently() {
        let values: [SyncValue] = [.mixedDictionary(["a": .int(1)]), .mixedList([.int(2)]), .mixedList([.int(1)]), .embedded(EmbeddedValue(properties: [:])), .int(3)]
        let sorted = values.sorted()
        #expect(sorted.first == .int(3))
        #expect(sorted.suffix(3) == [.mixedList([.int(1)]), .mixedList([.int(2)]), .mixedDictionary(["a": .int(1)])])
        for a in values { for b in values { #expect([a < b, a == b, b < a].filter { $0 }.count == 1) } }
    }

    @Test func nestingBeyondTheReadersDepthIsMalformedNotACrash() {
        var value = SyncValue.int(1)
        for _ in 0 ..< (BinaryReader.maximumDepth + 1) { value = .mixedList([value]) }
        let frame = SyncFrameCodec.encode(.upload([ClientChangeset(clientSequence: 1, operations: [Self.set(value)])]))
        #expect(throws: SyncProtocolError.self) { try SyncFrameCodec.decode(frame) }
    }

    @Test func aDuplicateKeyInANestedDictionaryIsMalformed() {
        var writer = BinaryWriter()
        writer.write(SyncValue.mixedDictionary(["a": .int(1), "b": .int(2)]))
        var bytes = writer.bytes
        // Rename "b" to "a": the encoding then names one key twice.
        let index = bytes.lastIndex(of: 0x62)!
        bytes[index] = 0x61
        var reader = BinaryReader(bytes)
        #expect(throws: SyncProtocolError.self) { try reader.readValue() }
    }

    @Test func theLastWriterOfANestedCollectionWins() {
        var state = SyncObjectState(object: Self.todo)
        let older = Self.set(.mixedList([.int(1)]), at: 1)
        let newer = Self.set(.mixedDictionary(["x": .string("y")]), at: 2)
        state.apply(newer)
        state.apply(older)
        #expect(state.registers["value"]?.value == .mixedDictionary(["x": .string("y")]))
    }

    /// Version 1 had no nested collections, version 2 no list moves: frames of either are refused.
    @Test(arguments: [1, 2] as [UInt8])
    func aFrameOfAnEarlierProtocolVersionIsRefusedAsUnsupported(version: UInt8) {
        #expect(SyncProtocol.version == 3)
        var frame = SyncFrameCodec.encode(.upload([ClientChangeset(clientSequence: 1, operations: [Self.set(Self.nested)])]))
        frame[2] = version
        frame[3] = 0
        do {
            _ = try SyncFrameCodec.decode(frame)
            Issue.record("a version-\(version) frame decoded")
        } catch {
            #expect(error.code == .unsupportedProtocolVersion)
            #expect(error.message.contains("version \(version)"))
        }
    }
}
