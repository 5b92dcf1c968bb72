import Testing
import StrataSyncProtocol

/// Strong eventual consistency, property-based: random operations of every kind on one object,
/// applied in random orders with repeats, give identical states and identical encodings.
@Suite struct ConvergenceTests {
    /// A random operation on `Ops.todo`, over few properties, keys, members and times so that
    /// they collide; list operations name the timestamps of earlier inserts and moves (or
    /// anything, sometimes).
    private static func operation(_ random: inout RandomValues, insertedSoFar: [HybridTimestamp]) -> SyncOperation {
        let time = HybridTimestamp(wallMilliseconds: UInt64(random.int(1 ... 30)), counter: UInt32(random.int(0 ... 1)),
                                   clientID: UInt64(random.int(1 ... 3)))
        let anyTime = { (random: inout RandomValues) -> HybridTimestamp in
            random.bool() && !insertedSoFar.isEmpty ? random.pick(insertedSoFar)
                : HybridTimestamp(wallMilliseconds: UInt64(random.int(1 ... 30)), counter: 0, clientID: UInt64(random.int(1 ... 3)))
        }
        let property = random.pick(["p", "q"])
        let change: SyncOperation.Change = switch random.int(0 ... 13) {
        case 0: .create(["p": random.smallValue(), "q": random.smallValue()])
        case 1, 2: .set(property: property, value: random.smallValue())
        case 3: .delete
        case 4: .setInsert(property: "s", value: random.smallValue())
        case 5: .setRemove(property: "s", value: random.smallValue())
        case 6: .mapSet(property: "m", key: random.pick(["a", "b", "é", "e\u{301}"]), value: random.smallValue())
        case 7: .mapRemove(property: "m", key: random.pick(["a", "b", "é", "e\u{301}"]))
        case 8, 9: .listInsert(property: "l", after: random.int(0 ... 4) == 0 ? nil : anyTime(&random), value: random.smallValue())
        case 10: .listRemove(property: "l", element: anyTime(&random))
        case 11, 12: .listMove(property: "l", element: anyTime(&random), after: random.int(0 ... 4) == 0 ? nil : anyTime(&random))
        default: .clear(property: random.pick(["s", "m", "l"]))
        }
        return SyncOperation(timestamp: time, object: Ops.todo, change: change)
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomOperationsInAnyOrderWithRepeatsGiveOneState(seed: UInt64) throws {
        var random = RandomValues(seed: seed)
        for _ in 0 ..< 40 {
            var operations: [SyncOperation] = []
            for _ in 0 ..< random.int(1 ... 40) {
                let inserted = operations.compactMap { operation -> HybridTimestamp? in
                    switch operation.change {
                    case .listInsert, .listMove: operation.timestamp
                    default: nil
                    }
                }
                operations.append(Self.operation(&random, insertedSoFar: inserted))
            }
            let reference = Ops.state(operations)
            let referenceBytes = reference.encoded()
            for _ in 0 ..< 8 {
                var order = operations + (0 ..< random.int(0 ... 5)).map { _ in random.pick(operations) }
                order.shuffle(using: &random.generator)
                let state = Ops.state(order)
                #expect(state == reference)
                #expect(state.encoded() == referenceBytes)
                #expect(state.listValues(of: "l") == reference.listValues(of: "l"))
                #expect(state.setMembers(of: "s") == reference.setMembers(of: "s"))
            }
            // The encoding is the state: it decodes to an equal state that reads the same.
            let decoded = try SyncObjectState(decoding: referenceBytes)
            #expect(decoded == reference)
            #expect(decoded.listValues(of: "l") == reference.listValues(of: "l"))
        }
    }

    @Test(arguments: [21, 22, 23] as [UInt64])
    func mergingTwoReplicasStatesViaTheirOperationsCommutes(seed: UInt64) {
        // Two replicas each apply half the operations, then the other half: same state.
        var random = RandomValues(seed: seed)
        for _ in 0 ..< 60 {
            let operations = (0 ..< random.int(2 ... 30)).map { _ in Self.operation(&random, insertedSoFar: []) }
            let split = random.int(0 ... operations.count)
            let left = Ops.state(Array(operations[..<split]) + operations[split...])
            let right = Ops.state(Array(operations[split...]) + operations[..<split])
            #expect(left == right)
        }
    }
}
