import Testing
import StrataSyncProtocol

/// Every message and every kind of value survives encode → decode unchanged, and the bytes
/// start with the documented header.
@Suite struct FrameCodecRoundTripTests {
    private static let todo = ObjectRef(className: "Todo", primaryKey: .int(42))

    private static func roundTrip(_ message: SyncMessage) throws -> SyncMessage {
        try SyncFrameCodec.decode(SyncFrameCodec.encode(message))
    }

    /// One operation per change kind, with every value kind among their values.
    static let everyOperation: [SyncOperation] = {
        let time = HybridTimestamp(wallMilliseconds: 1_700_000_000_000, counter: 3, clientID: 0xDEAD_BEEF)
        let values: [String: SyncValue] = [
            "null": .null, "bool": .bool(true), "int": .int(-123_456_789), "float": .float(-1.5), "double": .double(3.25),
            "string": .string("héllo 🙂"), "data": .data([0, 255, 7]), "date": .date(1_700_000_000.5),
            "objectID": .objectID(Array(1 ... 12)), "uuid": .uuid(Array(1 ... 16)), "decimal128": .decimal128(Array(repeating: 9, count: 16)),
            "link": .link(ObjectRef(className: "Owner", primaryKey: .string("ann"))),
            "embedded": .embedded(EmbeddedValue(properties: ["street": .value(.string("Main")), "tags": .list([.int(1), .int(2)]),
                                                             "flags": .set([.bool(true)]), "extra": .map(["k": .double(1)])])),
        ]
        let changes: [SyncOperation.Change] = [
            .create(values), .set(property: "title", value: .string("")), .delete,
            .setInsert(property: "tags", value: .string("a")), .setRemove(property: "tags", value: .string("a")),
            .mapSet(property: "scores", key: "ann", value: .int(3)), .mapRemove(property: "scores", key: "ann"),
            .listInsert(property: "items", after: nil, value: .int(1)), .listInsert(property: "items", after: time, value: .int(2)),
            .listRemove(property: "items", element: time), .clear(property: "items"),
            .listMove(property: "items", element: time, after: nil), .listMove(property: "items", element: time, after: time),
        ]
        return changes.enumerated().map { index, change in
            SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: time.wallMilliseconds, counter: UInt32(index), clientID: 5),
                          object: todo, change: change)
        }
    }()

    static let everyMessage: [SyncMessage] = {
        let schema = SyncSchema(classes: [
            SyncClassSchema(name: "Todo", primaryKey: "_id", properties: [
                SyncPropertySchema(name: "_id", type: "int"),
                SyncPropertySchema(name: "owner", type: "object", isOptional: true, objectClass: "Owner"),
                SyncPropertySchema(name: "tags", type: "string", collection: .set),
            ]),
            SyncClassSchema(name: "Address", primaryKey: "", properties: [], isEmbedded: true),
        ])
        var state = SyncObjectState(object: todo)
        for operation in everyOperation { state.apply(operation) }
        let changesets = [ServerChangeset(serverSequence: 9, clientID: 5, clientSequence: 2, operations: everyOperation)]
        return [
            .hello(SyncMessage.Hello(appID: "app", clientID: .max, accessToken: "token", checkpoint: 17, subscriptionVersion: 2,
                                     completedSubscriptionVersion: 1,
                                     subscriptions: [SubscriptionSpec(name: "all", className: "Todo"), SubscriptionSpec(name: nil, className: "Owner", query: "q")],
                                     schema: schema)),
            .upload([ClientChangeset(clientSequence: 1, operations: everyOperation), ClientChangeset(clientSequence: 2, operations: [])]),
            .upload([]),
            .subscribe(version: 3, subscriptions: []),
            .ping(0), .pong(.max), .latestSequenceRequest(7), .latestSequence(request: .max, sequence: 123_456),
            .welcome(SyncMessage.Welcome(lastAcknowledged: 4, latestSequence: 1 << 40)),
            .uploadAck(clientSequence: 12),
            .download(changesets: changesets, checkpoint: Checkpoint(sequence: 9, checksum: Checkpoint.checksum(of: changesets)), remaining: 0),
            .snapshot(SyncMessage.Snapshot(objects: [state, SyncObjectState(object: ObjectRef(className: "Owner", primaryKey: .null))],
                                           checkpoint: Checkpoint(sequence: 9, checksum: 0xFFFF_FFFF), subscriptionVersion: 2, isReset: true, isLast: false)),
            .error(code: .schemaMismatch, message: "Todo.title is of type int, but the app's is string"),
        ]
    }()

    @Test(arguments: everyMessage)
    func everyMessageDecodesToItself(_ message: SyncMessage) throws {
        #expect(try Self.roundTrip(message) == message)
    }

    @Test func snapshotFromEncodedStatesIsTheSnapshotFrame() throws {
        guard case .snapshot(let snapshot) = Self.everyMessage.first(where: { if case .snapshot = $0 { true } else { false } }) else {
            Issue.record("everyMessage has no snapshot")
            return
        }
        let encoded = snapshot.objects.map { $0.encoded() }
        let frame = SyncFrameCodec.encodeSnapshot(encodedStates: encoded, totalSize: encoded.reduce(0) { $0 + $1.count },
                                                  checkpoint: snapshot.checkpoint, subscriptionVersion: snapshot.subscriptionVersion,
                                                  isReset: snapshot.isReset, isLast: snapshot.isLast)
        #expect(frame == SyncFrameCodec.encode(.snapshot(snapshot)))
        let empty = SyncFrameCodec.encodeSnapshot(encodedStates: [[UInt8]](), totalSize: 0, checkpoint: Checkpoint(sequence: 3, checksum: 1),
                                                  subscriptionVersion: 4, isReset: false, isLast: true)
        #expect(try SyncFrameCodec.decode(empty) == .snapshot(SyncMessage.Snapshot(objects: [], checkpoint: Checkpoint(sequence: 3, checksum: 1),
                                                                                   subscriptionVersion: 4, isReset: false, isLast: true)))
    }

    @Test func framesStartWithMagicVersionAndTag() {
        let frame = SyncFrameCodec.encode(.ping(5))
        #expect(frame == [0x53, 0x59, UInt8(SyncProtocol.version), 0, 4, 5])
    }

    @Test(arguments: [
        SyncValue.null, .bool(false), .bool(true), .int(0), .int(.max), .int(.min), .int(-1),
        .float(.nan), .float(Float(bitPattern: 0x7FC0_1234)), .float(-0.0), .float(.infinity),
        .double(.nan), .double(Double(bitPattern: 0xFFF8_0000_0000_00AB)), .double(-0.0), .double(.leastNonzeroMagnitude), .double(-.infinity),
        .string(""), .string("日本語 🇫🇷 e\u{301}"), .string("\u{0}"), .data([]), .data(Array(0 ... 255)),
        .date(-0.0), .date(.nan), .objectID(Array(repeating: 0, count: 12)), .uuid(Array(repeating: 0xFF, count: 16)),
        .decimal128(Array(0 ..< 16)), .link(ObjectRef(className: "", primaryKey: .uuid(Array(0 ..< 16)))),
        .embedded(EmbeddedValue(properties: [:])),
    ])
    func everyValueKindKeepsItsExactBits(_ value: SyncValue) throws {
        let operation = SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: 1, counter: 0, clientID: 1), object: Self.todo,
                                      change: .set(property: "p", value: value))
        let decoded = try Self.roundTrip(.upload([ClientChangeset(clientSequence: 1, operations: [operation])]))
        guard case .upload(let changesets) = decoded, case .set(_, let decodedValue) = changesets.first?.operations.first?.change else {
            Issue.record("decoded \(decoded)")
            return
        }
        #expect(decodedValue == value)
        // Exact bits, beyond SyncValue's own equality.
        switch (value, decodedValue) {
        case (.double(let a), .double(let b)), (.date(let a), .date(let b)): #expect(a.bitPattern == b.bitPattern)
        case (.float(let a), .float(let b)): #expect(a.bitPattern == b.bitPattern)
        case (.string(let a), .string(let b)): #expect(Array(a.utf8) == Array(b.utf8))
        default: break
        }
    }

    @Test func embeddedValuesNestedThirtyLevelsDeepRoundTrip() throws {
        var value = SyncValue.string("core")
        for level in 0 ..< 30 {
            value = .embedded(EmbeddedValue(properties: ["inner": level.isMultiple(of: 2) ? .value(value) : .list([value, .int(Int64(level))])]))
        }
        let operation = SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: 1, counter: 0, clientID: 1), object: Self.todo,
                                      change: .set(property: "deep", value: value))
        #expect(try SyncOperation(decoding: operation.encoded()) == operation)
    }

    @Test func extremeIntegersRoundTripInEveryVarintField() throws {
        for number: UInt64 in [.max, 1 << 63, (1 << 63) - 1, 1 << 56, 127, 128, 0] {
            let message = SyncMessage.welcome(SyncMessage.Welcome(lastAcknowledged: number, latestSequence: number))
            #expect(try Self.roundTrip(message) == message)
            let time = HybridTimestamp(wallMilliseconds: number, counter: .max, clientID: number)
            let operation = SyncOperation(timestamp: time, object: Self.todo, change: .listRemove(property: "l", element: time))
            #expect(try SyncOperation(decoding: operation.encoded()) == operation)
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomMessagesRoundTrip(seed: UInt64) throws {
        var random = RandomValues(seed: seed)
        for _ in 0 ..< 300 {
            let message = random.message()
            let frame = SyncFrameCodec.encode(message)
            let decoded = try SyncFrameCodec.decode(frame)
            #expect(decoded == message)
            #expect(SyncFrameCodec.encode(decoded) == frame)
        }
    }

    @Test func framesOfTheSmallestPossibleElementsDecode() throws {
        // Every element at its minimum size, so no count check refuses a frame that fits.
        let nowhere = ObjectRef(className: "", primaryKey: .null)
        let smallest = SyncOperation(timestamp: .zero, object: nowhere, change: .delete)
        let state = SyncObjectState(object: nowhere)
        let messages: [SyncMessage] = [
            .upload(Array(repeating: ClientChangeset(clientSequence: 0, operations: Array(repeating: smallest, count: 5)), count: 5)),
            .upload(Array(repeating: ClientChangeset(clientSequence: 0, operations: []), count: 5)),
            .download(changesets: Array(repeating: ServerChangeset(serverSequence: 0, clientID: 0, clientSequence: 0, operations: []), count: 5),
                      checkpoint: Checkpoint(sequence: 0, checksum: 0), remaining: 0),
            .snapshot(SyncMessage.Snapshot(objects: Array(repeating: state, count: 5), checkpoint: Checkpoint(sequence: 0, checksum: 0),
                                           subscriptionVersion: 0, isReset: false, isLast: true)),
            .subscribe(version: 0, subscriptions: Array(repeating: SubscriptionSpec(name: nil, className: ""), count: 5)),
        ]
        for message in messages {
            #expect(try Self.roundTrip(message) == message)
        }
        let schema = SyncSchema(classes: Array(repeating: SyncClassSchema(name: "", primaryKey: "", properties:
            Array(repeating: SyncPropertySchema(name: "", type: ""), count: 5)), count: 5))
        #expect(try SyncSchema(decoding: schema.encoded()) == schema)
        let embedded = SyncValue.embedded(EmbeddedValue(properties: ["": .map(["": .null])]))
        let create = SyncOperation(timestamp: .zero, object: nowhere, change: .create(["": embedded]))
        #expect(try SyncOperation(decoding: create.encoded()) == create)
    }

    @Test func decodeAcceptsAnyCollectionOfBytes() throws {
        let frame = SyncFrameCodec.encode(.uploadAck(clientSequence: 300))
        let padded = [0xAA] + frame
        #expect(try SyncFrameCodec.decode(padded[1...]) == .uploadAck(clientSequence: 300))
    }
}
