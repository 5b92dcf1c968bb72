import Testing
import StrataSyncProtocol

/// `ListDiff` turns a local list change into operations that, applied, give the new list.
@Suite struct ListDiffTests {
    /// A replica's list, and the clock of the client editing it.
    private struct Replica {
        var state = SyncObjectState(object: Ops.todo)
        var clock = HybridClock(clientID: 7)
        var wall: UInt64 = 100

        mutating func edit(to new: [SyncValue]) -> [SyncOperation] {
            let changes = ListDiff.changes(property: "items", from: state.listEntries(of: "items"), to: new) {
                wall += 1
                return clock.tick(wallMilliseconds: wall)
            }
            let operations = changes.map { SyncOperation(timestamp: $0.timestamp, object: Ops.todo, change: $0.change) }
            for operation in operations { state.apply(operation) }
            return operations
        }
    }

    @Test func equalListsNeedNoOperations() {
        var replica = Replica()
        _ = replica.edit(to: [.int(1), .int(2)])
        #expect(replica.edit(to: [.int(1), .int(2)]).isEmpty)
    }

    @Test func onlyTheChangedMiddleIsRemovedAndInserted() {
        var replica = Replica()
        _ = replica.edit(to: [.int(1), .int(2), .int(3), .int(4)])
        let before = replica.state.listElements(of: "items")
        let operations = replica.edit(to: [.int(1), .int(9), .int(8), .int(4)])
        #expect(operations.map(\.change) == [
            .listRemove(property: "items", element: before[1].id),
            .listRemove(property: "items", element: before[2].id),
            .listInsert(property: "items", after: before[0].id, value: .int(9)),
            .listInsert(property: "items", after: operations[2].timestamp, value: .int(8)),
        ])
        #expect(replica.state.listValues(of: "items") == [.int(1), .int(9), .int(8), .int(4)])
        // The kept elements keep their ids.
        let after = replica.state.listElements(of: "items")
        #expect(after[0].id == before[0].id && after[3].id == before[3].id)
    }

    @Test func movingOneElementRecordsOneMoveThatKeepsItsIdentity() {
        var replica = Replica()
        _ = replica.edit(to: [.int(1), .int(2), .int(3), .int(4), .int(5)])
        let before = replica.state.listElements(of: "items")
        let operations = replica.edit(to: [.int(1), .int(4), .int(2), .int(3), .int(5)])
        #expect(operations.map(\.change) == [.listMove(property: "items", element: before[3].id, after: before[0].id)])
        #expect(replica.state.listValues(of: "items") == [.int(1), .int(4), .int(2), .int(3), .int(5)])
        // Every element keeps its identity; only 4's position is new.
        let after = replica.state.listEntries(of: "items")
        #expect(after.map(\.element) == [before[0].id, before[3].id, before[1].id, before[2].id, before[4].id])
        #expect(after[1].position == operations[0].timestamp)
    }

    @Test func swappingTwoElementsRecordsTwoMovesAndNoRemoveOrInsert() {
        var replica = Replica()
        _ = replica.edit(to: [.int(1), .int(2), .int(3), .int(4)])
        let before = replica.state.listElements(of: "items")
        let operations = replica.edit(to: [.int(4), .int(2), .int(3), .int(1)])
        #expect(operations.count == 2)
        #expect(operations.allSatisfy { if case .listMove = $0.change { true } else { false } })
        #expect(replica.state.listValues(of: "items") == [.int(4), .int(2), .int(3), .int(1)])
        #expect(Set(replica.state.listElements(of: "items").map(\.id)) == Set(before.map(\.id)))
    }

    @Test func anInsertAfterAMovedElementAnchorsOnItsNewPosition() {
        var replica = Replica()
        _ = replica.edit(to: [.int(1), .int(2), .int(3)])
        let move = replica.edit(to: [.int(3), .int(1), .int(2)])
        let operations = replica.edit(to: [.int(3), .int(9), .int(1), .int(2)])
        #expect(operations.map(\.change) == [.listInsert(property: "items", after: move[0].timestamp, value: .int(9))])
        #expect(replica.state.listValues(of: "items") == [.int(3), .int(9), .int(1), .int(2)])
    }

    @Test func placementsKeepALongestRunInOrderAndPairRepeatedValuesInOrder() {
        let values: [SyncValue] = [.int(1), .int(2), .int(3), .int(1)]
        // 1 2 3 1 -> 3 1 1 9 2: the k-th 1 pairs with the k-th; a longest run already in order
        // (the first 1, then 2) stays, the other pairs move.
        #expect(ListDiff.placements(from: values, to: [.int(3), .int(1), .int(1), .int(9), .int(2)])
            == [.moved(2), .kept(0), .moved(3), .inserted, .kept(1)])
        #expect(ListDiff.placements(from: values, to: values) == [.kept(0), .kept(1), .kept(2), .kept(3)])
        #expect(ListDiff.placements(from: [], to: [.int(1)]) == [.inserted])
    }

    @Test func insertingAtTheFrontAnchorsOnNothing() {
        var replica = Replica()
        _ = replica.edit(to: [.int(2)])
        let operations = replica.edit(to: [.int(1), .int(2)])
        #expect(operations.map(\.change) == [.listInsert(property: "items", after: nil, value: .int(1))])
        #expect(replica.state.listValues(of: "items") == [.int(1), .int(2)])
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func randomEditsGiveTheNewListHereAndOnAReplicaThatAppliesThemInAnyOrder(seed: UInt64) {
        var random = RandomValues(seed: seed)
        var replica = Replica()
        var allOperations: [SyncOperation] = []
        for _ in 0 ..< 200 {
            var list = replica.state.listValues(of: "items")
            for _ in 0 ..< random.int(0 ... 4) {
                switch random.int(0 ... 4) {
                case 0: list.insert(random.smallValue(), at: random.int(0 ... list.count))
                case 1 where !list.isEmpty: list.remove(at: random.int(0 ... list.count - 1))
                case 2 where !list.isEmpty:
                    let moved = list.remove(at: random.int(0 ... list.count - 1))
                    list.insert(moved, at: random.int(0 ... list.count))
                case 3 where list.count > 1: list.swapAt(random.int(0 ... list.count - 1), random.int(0 ... list.count - 1))
                default: if !list.isEmpty { list[random.int(0 ... list.count - 1)] = random.smallValue() }
                }
            }
            if random.int(0 ... 9) == 0 { list = [] }
            allOperations += replica.edit(to: list)
            #expect(replica.state.listValues(of: "items") == list)
        }
        let other = Ops.state(allOperations.shuffled(using: &random.generator))
        #expect(other.listValues(of: "items") == replica.state.listValues(of: "items"))
        // The edits were recorded with moves among them.
        #expect(allOperations.contains { if case .listMove = $0.change { true } else { false } })
    }
}
