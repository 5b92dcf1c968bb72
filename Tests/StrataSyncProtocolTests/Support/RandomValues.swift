import StrataSyncProtocol

/// Random protocol values for the round-trip and convergence tests, drawn from a seeded
/// generator. Small alphabets make collisions (same property, key, member) frequent, which is
/// where the merge rules matter.
struct RandomValues {
    var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }
    mutating func bool() -> Bool { Bool.random(using: &generator) }
    mutating func pick<T>(_ choices: [T]) -> T { choices[int(0 ... choices.count - 1)] }
    mutating func bytes(_ count: Int) -> [UInt8] { (0 ..< count).map { _ in UInt8.random(in: 0 ... 255, using: &generator) } }

    /// Strings over ASCII, accents (both spellings of é), CJK, emoji and the empty string.
    mutating func string() -> String {
        let pieces = ["", "a", "b", "é", "e\u{301}", "日本", "🙂", "\u{0}", "zz"]
        return (0 ..< int(0 ... 3)).map { _ in pick(pieces) }.joined()
    }

    mutating func double() -> Double {
        pick([0.0, -0.0, 1.5, -2.25, .infinity, -.infinity, .nan, Double(bitPattern: 0x7FF0_0000_0000_0001),
              .leastNonzeroMagnitude, .greatestFiniteMagnitude, Double(int(-1000 ... 1000)) / 8])
    }

    mutating func float() -> Float {
        pick([0.0, -0.0, 1.5, .infinity, .nan, Float(bitPattern: 0xFFC0_0001), .leastNonzeroMagnitude, Float(int(-100 ... 100)) / 4])
    }

    mutating func int64() -> Int64 { pick([0, 1, -1, .max, .min, Int64(int(-300 ... 300)), Int64(bitPattern: generator.next())]) }

    /// Any value; embedded values nest up to `depth` more levels.
    mutating func value(depth: Int = 2) -> SyncValue {
        switch int(0 ... (depth > 0 ? 12 : 10)) {
        case 0: return .null
        case 1: return .bool(bool())
        case 2: return .int(int64())
        case 3: return .float(float())
        case 4: return .double(double())
        case 5: return .string(string())
        case 6: return .data(bytes(int(0 ... 4)))
        case 7: return .date(double())
        case 8: return .objectID(bytes(12))
        case 9: return .uuid(bytes(16))
        case 10: return .decimal128(bytes(16))
        case 11: return .link(ObjectRef(className: pick(["Todo", "Owner"]), primaryKey: value(depth: 0)))
        default: return .embedded(embedded(depth: depth - 1))
        }
    }

    mutating func embedded(depth: Int) -> EmbeddedValue {
        var properties: [String: EmbeddedField] = [:]
        for _ in 0 ..< int(0 ... 3) {
            let field: EmbeddedField = switch int(0 ... 3) {
            case 0: .value(value(depth: depth))
            case 1: .list((0 ..< int(0 ... 3)).map { _ in value(depth: depth) })
            case 2: .set((0 ..< int(0 ... 3)).map { _ in value(depth: depth) })
            default: .map(Dictionary((0 ..< int(0 ... 3)).map { _ in (string(), value(depth: depth)) }, uniquingKeysWith: { a, _ in a }))
            }
            properties[pick(["street", "city", "tags", "notes", "geo"])] = field
        }
        return EmbeddedValue(properties: properties)
    }

    /// A small value, so that set members and list values often repeat.
    mutating func smallValue() -> SyncValue {
        pick([.int(1), .int(2), .string("x"), .string("y"), .double(-0.0), .double(0.0), .double(.nan), .null, .bool(true)])
    }

    mutating func timestamp() -> HybridTimestamp {
        HybridTimestamp(wallMilliseconds: pick([0, 1, UInt64(int(0 ... 1_000_000)), .max]),
                        counter: pick([0, 1, .max, UInt32(int(0 ... 100))]), clientID: pick([0, 1, .max, generator.next()]))
    }

    mutating func objectRef() -> ObjectRef {
        ObjectRef(className: pick(["Todo", "Owner", "Ünïcode"]), primaryKey: pick([.int(int64()), .string(string()), .objectID(bytes(12)), .uuid(bytes(16)), .null]))
    }

    mutating func change() -> SyncOperation.Change {
        switch int(0 ... 10) {
        case 0: .create(Dictionary((0 ..< int(0 ... 3)).map { _ in (string(), value()) }, uniquingKeysWith: { a, _ in a }))
        case 1: .set(property: string(), value: value())
        case 2: .delete
        case 3: .setInsert(property: string(), value: value())
        case 4: .setRemove(property: string(), value: value())
        case 5: .mapSet(property: string(), key: string(), value: value())
        case 6: .mapRemove(property: string(), key: string())
        case 7: .listInsert(property: string(), after: bool() ? timestamp() : nil, value: value())
        case 8: .listRemove(property: string(), element: timestamp())
        case 9: .listMove(property: string(), element: timestamp(), after: bool() ? timestamp() : nil)
        default: .clear(property: string())
        }
    }

    mutating func operation() -> SyncOperation {
        SyncOperation(timestamp: timestamp(), object: objectRef(), change: change())
    }

    mutating func clientChangeset() -> ClientChangeset {
        ClientChangeset(clientSequence: UInt64(int(1 ... 1000)), operations: (0 ..< int(0 ... 4)).map { _ in operation() })
    }

    mutating func serverChangeset() -> ServerChangeset {
        ServerChangeset(serverSequence: generator.next(), clientID: generator.next(), clientSequence: UInt64(int(0 ... 5)),
                        operations: (0 ..< int(0 ... 4)).map { _ in operation() })
    }

    mutating func schema() -> SyncSchema {
        SyncSchema(classes: (0 ..< int(0 ... 3)).map { index in
            SyncClassSchema(name: "Class\(index)", primaryKey: "_id", properties: (0 ..< int(0 ... 4)).map { property in
                SyncPropertySchema(name: "p\(property)", type: pick(["int", "string", "object", "mixed"]),
                                   collection: pick([.single, .list, .set, .map]), isOptional: bool(),
                                   objectClass: bool() ? "Class0" : nil)
            }, isEmbedded: bool())
        })
    }

    mutating func subscription() -> SubscriptionSpec {
        SubscriptionSpec(name: bool() ? string() : nil, className: string(), query: bool() ? string() : nil)
    }

    /// A state built by applying random operations on one object.
    mutating func objectState() -> SyncObjectState {
        let object = objectRef()
        var state = SyncObjectState(object: object)
        for _ in 0 ..< int(0 ... 12) { state.apply(SyncOperation(timestamp: timestamp(), object: object, change: change())) }
        return state
    }

    mutating func message() -> SyncMessage {
        switch int(0 ... 9) {
        case 0:
            return .hello(SyncMessage.Hello(protocolVersion: UInt16(int(0 ... 3)), appID: string(), clientID: generator.next(),
                                            accessToken: string(), checkpoint: generator.next(), subscriptionVersion: UInt64(int(0 ... 9)),
                                            completedSubscriptionVersion: UInt64(int(0 ... 9)),
                                            subscriptions: (0 ..< int(0 ... 3)).map { _ in subscription() }, schema: schema()))
        case 1: return .upload((0 ..< int(0 ... 3)).map { _ in clientChangeset() })
        case 2: return .subscribe(version: generator.next(), subscriptions: (0 ..< int(0 ... 3)).map { _ in subscription() })
        case 3: return .ping(generator.next())
        case 4: return .welcome(SyncMessage.Welcome(lastAcknowledged: generator.next(), latestSequence: generator.next()))
        case 5: return .uploadAck(clientSequence: generator.next())
        case 6:
            let changesets = (0 ..< int(0 ... 3)).map { _ in serverChangeset() }
            return .download(changesets: changesets, checkpoint: Checkpoint(sequence: generator.next(), checksum: Checkpoint.checksum(of: changesets)),
                             remaining: UInt64(int(0 ... 100)))
        case 7:
            return .snapshot(SyncMessage.Snapshot(objects: (0 ..< int(0 ... 3)).map { _ in objectState() },
                                                  checkpoint: Checkpoint(sequence: generator.next(), checksum: UInt32.random(in: 0 ... .max, using: &generator)),
                                                  subscriptionVersion: UInt64(int(0 ... 9)), isReset: bool(), isLast: bool()))
        case 8: return .pong(generator.next())
        default: return .error(code: pick([.malformedFrame, .schemaMismatch, .invalidValue, .serverError]), message: string())
        }
    }
}
