@testable import StrataSyncProtocol
import Testing

/// The standalone encodings the client and server store: round trips, determinism, refusal of
/// damaged bytes, and the checkpoint checksum.
@Suite struct StandaloneEncodingTests {
    @Test(arguments: [31, 32, 33] as [UInt64])
    func changesetsStatesSchemasAndOperationsRoundTrip(seed: UInt64) throws {
        var random = RandomValues(seed: seed)
        for _ in 0 ..< 100 {
            let client = random.clientChangeset()
            #expect(try ClientChangeset(decoding: client.encoded()) == client)
            let server = random.serverChangeset()
            #expect(try ServerChangeset(decoding: server.encoded()) == server)
            let state = random.objectState()
            let decodedState = try SyncObjectState(decoding: state.encoded())
            #expect(decodedState == state)
            #expect(decodedState.encoded() == state.encoded())
            let schema = random.schema()
            #expect(try SyncSchema(decoding: schema.encoded()) == schema)
            let operation = random.operation()
            #expect(try SyncOperation(decoding: operation.encoded()) == operation)
        }
    }

    @Test func dictionaryOrderDoesNotChangeTheBytes() {
        var forward: [String: SyncValue] = [:]
        var backward: [String: SyncValue] = [:]
        let keys = (0 ..< 64).map { "key\($0)" }
        for key in keys { forward[key] = .string(key) }
        for key in keys.reversed() { backward[key] = .string(key) }
        let time = HybridTimestamp(wallMilliseconds: 1, counter: 0, clientID: 1)
        let a = SyncOperation(timestamp: time, object: Ops.todo, change: .create(forward))
        let b = SyncOperation(timestamp: time, object: Ops.todo, change: .create(backward))
        #expect(a.encoded() == b.encoded())
    }

    @Test func damagedStoredBytesAreRefusedWithATypedError() throws {
        var random = RandomValues(seed: 41)
        var state = random.objectState()
        state.apply(SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: .max, counter: 0, clientID: 1), object: state.object,
                                  change: .listMove(property: "moved", element: HybridTimestamp(wallMilliseconds: 1, counter: 0, clientID: 1), after: nil)))
        let bytes = state.encoded()
        // Bytes that end right after the clears are a state stored before list moves existed:
        // they read as the state without its moves. Every other cut is refused.
        let plain = SyncObjectState(object: state.object, created: state.created, deleted: state.deleted, registers: state.registers,
                                    sets: state.sets, maps: state.maps,
                                    lists: state.lists.mapValues { SyncObjectState.ListState(nodes: $0.nodes, removed: $0.removed) },
                                    cleared: state.cleared)
        let legacyLength = plain.encoded().count - 1
        for length in 0 ..< bytes.count where length != legacyLength {
            #expect(throws: SyncProtocolError.self) { try SyncObjectState(decoding: bytes[..<length]) }
        }
        #expect(try SyncObjectState(decoding: bytes[..<legacyLength]) == plain)
        #expect(throws: SyncProtocolError.self) { try SyncObjectState(decoding: bytes + [0]) }
        #expect(throws: SyncProtocolError.self) { try ClientChangeset(decoding: [0xFF]) }
        #expect(throws: SyncProtocolError.self) { try SyncSchema(decoding: [1, 1, 0x41, 1, 0x42, 0, 1, 1, 0x70, 1, 0x69, 4, 0, 0]) }
    }

    @Test func aStoredStateKeepingAValuePastItsDeleteIsRefused() {
        let time = { (wall: UInt64) in HybridTimestamp(wallMilliseconds: wall, counter: 0, clientID: 1) }
        let register = SyncObjectState.Register(value: .int(1), timestamp: time(1))
        let stale = SyncObjectState(object: Ops.todo, created: time(1), deleted: time(2), registers: ["p": register],
                                    sets: [:], maps: [:], lists: [:], cleared: [:])
        #expect(throws: SyncProtocolError.self) { try SyncObjectState(decoding: stale.encoded()) }
        let staleMember = SyncObjectState(object: Ops.todo, created: time(1), deleted: nil, registers: [:],
                                          sets: ["s": [.int(1): SyncObjectState.ElementState(isPresent: true, timestamp: time(1))]],
                                          maps: [:], lists: [:], cleared: ["s": time(1)])
        #expect(throws: SyncProtocolError.self) { try SyncObjectState(decoding: staleMember.encoded()) }
    }

    @Test func crc32cMatchesItsCheckValue() {
        var crc = CRC32C()
        crc.update(Array("123456789".utf8))
        #expect(crc.value == 0xE306_9283)
    }

    @Test func checkpointChecksumCoversEveryChangesetInOrder() {
        var random = RandomValues(seed: 51)
        let changesets = (0 ..< 4).map { _ in random.serverChangeset() }
        let checksum = Checkpoint.checksum(of: changesets)
        var crc = CRC32C()
        for changeset in changesets { crc.update(changeset.encoded()) }
        #expect(checksum == crc.value)
        #expect(Checkpoint.checksum(of: changesets.reversed()) != checksum)
        var damaged = changesets
        damaged[2].clientSequence &+= 1
        #expect(Checkpoint.checksum(of: damaged) != checksum)
        #expect(Checkpoint.checksum(of: []) == 0)
    }

    @Test func zigZagVarintsKeepSmallNegativesShort() throws {
        var writer = BinaryWriter()
        writer.writeSignedVarint(-1)
        writer.writeSignedVarint(.min)
        writer.writeSignedVarint(.max)
        #expect(writer.bytes.first == 1)
        var reader = BinaryReader(writer.bytes)
        #expect(try reader.readSignedVarint() == -1)
        #expect(try reader.readSignedVarint() == .min)
        #expect(try reader.readSignedVarint() == .max)
        try reader.expectEnd()
    }
}
