import Testing
import StrataSyncProtocol

/// Bytes that are not a frame of this version give a typed error, never a crash, a hang or a
/// large allocation.
@Suite struct MalformedFrameTests {
    private static func code(of bytes: [UInt8]) -> SyncErrorCode? {
        do {
            _ = try SyncFrameCodec.decode(bytes)
            return nil
        } catch {
            return error.code
        }
    }

    private static let header: [UInt8] = [0x53, 0x59, UInt8(SyncProtocol.version), 0]

    @Test func everyTruncationOfEveryMessageIsMalformed() {
        for message in FrameCodecRoundTripTests.everyMessage {
            let frame = SyncFrameCodec.encode(message)
            for length in 0 ..< frame.count {
                #expect(Self.code(of: Array(frame[..<length])) == .malformedFrame, "\(message) cut at \(length) of \(frame.count)")
            }
        }
    }

    @Test func trailingBytesAreMalformed() {
        var frame = SyncFrameCodec.encode(.ping(1))
        frame.append(0)
        #expect(Self.code(of: frame) == .malformedFrame)
    }

    @Test func wrongMagicIsMalformed() {
        var frame = SyncFrameCodec.encode(.ping(1))
        frame[1] = 0x5A
        #expect(Self.code(of: frame) == .malformedFrame)
    }

    @Test func anotherProtocolVersionIsUnsupported() {
        var frame = SyncFrameCodec.encode(.ping(1))
        frame[2] &+= 1
        #expect(Self.code(of: frame) == .unsupportedProtocolVersion)
    }

    @Test(arguments: [0, 13, 200, 255] as [UInt8])
    func unknownMessageTagsAreMalformed(tag: UInt8) {
        #expect(Self.code(of: Self.header + [tag, 0]) == .malformedFrame)
    }

    @Test func frameOverTheLimitIsTooLargeBeforeAnyDecoding() {
        let frame = [UInt8](repeating: 0, count: SyncProtocol.maximumFrameSize + 1)
        #expect(Self.code(of: frame) == .frameTooLarge)
    }

    @Test func hugeCountsAndLengthsAreRefusedWithoutAllocating() {
        let tenByteMax: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        // upload with 2^64-1 changesets; subscribe with a huge list; error with a huge string.
        #expect(Self.code(of: Self.header + [2] + tenByteMax) == .malformedFrame)
        #expect(Self.code(of: Self.header + [3, 1] + tenByteMax) == .malformedFrame)
        #expect(Self.code(of: Self.header + [10, 1] + tenByteMax + [0x41]) == .malformedFrame)
        // A count just over what the bytes left could hold.
        #expect(Self.code(of: Self.header + [2, 3, 1, 0, 2, 0]) == .malformedFrame)
    }

    @Test func overlongAndOverflowingVarintsAreMalformed() {
        let elevenBytes: [UInt8] = Array(repeating: 0x80, count: 10) + [0x00]
        #expect(Self.code(of: Self.header + [4] + elevenBytes) == .malformedFrame)
        let overflow: [UInt8] = Array(repeating: 0xFF, count: 9) + [0x02]
        #expect(Self.code(of: Self.header + [4] + overflow) == .malformedFrame)
    }

    /// An upload frame of one `set` operation whose value is `valueBytes`.
    private static func uploadSetting(_ valueBytes: [UInt8]) -> [UInt8] {
        // sequence 1, 1 operation: timestamp (1, 0, 1), object "T"[null], tag set, property "p".
        header + [2, 1, 1, 1, 1, 0, 1, 1, 0x54, 0, 1, 1, 0x70] + valueBytes
    }

    @Test func theHandBuiltUploadDecodesWithAGoodValue() throws {
        let decoded = try SyncFrameCodec.decode(Self.uploadSetting([2, 4]))
        let object = ObjectRef(className: "T", primaryKey: .null)
        let operation = SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: 1, counter: 0, clientID: 1), object: object,
                                      change: .set(property: "p", value: .int(2)))
        #expect(decoded == .upload([ClientChangeset(clientSequence: 1, operations: [operation])]))
    }

    @Test func invalidUTF8IsMalformed() {
        #expect(Self.code(of: Self.uploadSetting([5, 2, 0xC3, 0x28])) == .malformedFrame)
        #expect(Self.code(of: Self.uploadSetting([5, 1, 0xFF])) == .malformedFrame)
    }

    @Test func wrongSizedIdentifiersAreMalformed() {
        #expect(Self.code(of: Self.uploadSetting([8, 11] + Array(repeating: 0, count: 11))) == .malformedFrame)
        #expect(Self.code(of: Self.uploadSetting([9, 15] + Array(repeating: 0, count: 15))) == .malformedFrame)
        #expect(Self.code(of: Self.uploadSetting([10, 17] + Array(repeating: 0, count: 17))) == .malformedFrame)
        #expect(Self.code(of: Self.uploadSetting([8, 12] + Array(repeating: 0, count: 12))) == nil)
    }

    @Test func unknownValueFieldAndChangeTagsAreMalformed() {
        #expect(Self.code(of: Self.uploadSetting([15])) == .malformedFrame)
        // An embedded object with one property "a" whose field tag is 4.
        #expect(Self.code(of: Self.uploadSetting([12, 1, 1, 0x61, 4])) == .malformedFrame)
        // A change tag of 10.
        #expect(Self.code(of: Self.header + [2, 1, 1, 1, 1, 0, 1, 1, 0x54, 0, 10]) == .malformedFrame)
        // A bool that is neither 0 nor 1.
        #expect(Self.code(of: Self.uploadSetting([1, 2])) == .malformedFrame)
    }

    @Test func duplicateKeysAreMalformedNotSilentlyMerged() {
        // An embedded object naming property "a" twice.
        #expect(Self.code(of: Self.uploadSetting([12, 2, 1, 0x61, 0, 0, 1, 0x61, 0, 0])) == .malformedFrame)
        #expect(Self.code(of: Self.uploadSetting([12, 2, 1, 0x61, 0, 0, 1, 0x62, 0, 0])) == nil)
    }

    @Test func nestingBeyondTheLimitIsMalformedAndWithinItDecodes() {
        func nested(_ levels: Int) -> [UInt8] {
            // Each level: embedded, 1 property "a", a value field; innermost: null.
            Array(repeating: [12, 1, 1, 0x61, 0] as [UInt8], count: levels).flatMap { $0 } + [0]
        }
        #expect(Self.code(of: Self.uploadSetting(nested(BinaryReader.maximumDepth))) == nil)
        #expect(Self.code(of: Self.uploadSetting(nested(BinaryReader.maximumDepth + 1))) == .malformedFrame)
        #expect(Self.code(of: Self.uploadSetting(nested(100_000))) == .malformedFrame)
    }

    @Test func errorMessagesSayWhatAndWhere() {
        do {
            _ = try SyncFrameCodec.decode(Self.uploadSetting([8, 3, 1, 2, 3]))
            Issue.record("decoded a 3-byte ObjectId")
        } catch {
            #expect(error.description.contains("ObjectId"))
            #expect(error.description.contains("offset"))
            #expect(error.message.hasPrefix("upload"))
        }
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func randomMutationsEitherThrowOrDecodeToSomethingThatReencodes(seed: UInt64) throws {
        var random = RandomValues(seed: seed)
        var decodedCount = 0
        for _ in 0 ..< 1500 {
            var frame = SyncFrameCodec.encode(random.message())
            for _ in 0 ..< random.int(1 ... 4) {
                switch random.int(0 ... 3) {
                case 0 where !frame.isEmpty: frame[random.int(0 ... frame.count - 1)] = UInt8(random.int(0 ... 255))
                case 1 where !frame.isEmpty: frame.remove(at: random.int(0 ... frame.count - 1))
                case 2: frame.insert(UInt8(random.int(0 ... 255)), at: random.int(0 ... frame.count))
                default: if !frame.isEmpty { frame[random.int(0 ... frame.count - 1)] ^= 0x80 }
                }
            }
            let message: SyncMessage
            do {
                message = try SyncFrameCodec.decode(frame)
            } catch {
                #expect([.malformedFrame, .unsupportedProtocolVersion].contains(error.code))
                continue
            }
            decodedCount += 1
            // Whatever decodes is a well-formed message: it re-encodes and decodes to itself.
            #expect(try SyncFrameCodec.decode(SyncFrameCodec.encode(message)) == message)
        }
        // Some mutations (a changed payload byte) still decode; the test exercises both paths.
        #expect(decodedCount > 0)
    }

    @Test func randomBytesAfterAValidHeaderNeverCrash() throws {
        var random = RandomValues(seed: 99)
        for _ in 0 ..< 3000 {
            let frame = Self.header + [UInt8(random.int(1 ... 10))] + random.bytes(random.int(0 ... 40))
            if let message = try? SyncFrameCodec.decode(frame) {
                #expect(try SyncFrameCodec.decode(SyncFrameCodec.encode(message)) == message)
            }
        }
    }
}
