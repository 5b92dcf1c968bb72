// `List.move(from:to:)` and `swapAt` are recorded as the calls that were made: the outbox holds
// a `listMove` of the element the caller moved, even where the list after the call reads the
// same as after moving a neighbour, so "the newest move of an element wins" applies to the
// element that was moved. A write that also inserts or removes in that list is recorded by
// comparison and still gives the same list.

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Testing

@Suite struct LedgerListMoveCallTests {
    private func pair() throws -> (LedgerFolder, LedgerClient, LedgerClient, LedgerTestServer) {
        let folder = LedgerFolder()
        return (folder, try LedgerClient(name: "a", folder: folder.url, wallStart: 1_000),
                try LedgerClient(name: "b", folder: folder.url, wallStart: 1_000), LedgerTestServer())
    }

    private func outbox(_ client: LedgerClient) throws -> [ClientChangeset] {
        try client.ledger.pendingChangesets(after: 0, limit: 1_000)
    }

    /// The operations of the newest recorded changeset.
    private func lastOperations(_ client: LedgerClient) throws -> [SyncOperation] {
        try outbox(client).last?.operations ?? []
    }

    /// The element id of each step value, from the inserts in `client`'s outbox.
    private func elementIDs(_ client: LedgerClient) throws -> [String: HybridTimestamp] {
        var ids: [String: HybridTimestamp] = [:]
        for operation in try outbox(client).flatMap(\.operations) {
            if case .listInsert("steps", _, .string(let value)) = operation.change { ids[value] = operation.timestamp }
        }
        return ids
    }

    /// The elements (by step value) that the operations move, in order; nil if one is not a move.
    private func movedValues(_ operations: [SyncOperation], _ ids: [String: HybridTimestamp]) -> [String]? {
        var moved: [String] = []
        for operation in operations {
            guard case .listMove("steps", let element, _) = operation.change,
                  let value = ids.first(where: { $0.value == element })?.key else { return nil }
            moved.append(value)
        }
        return moved
    }

    private func steps(_ client: LedgerClient) -> [String] { client.task("t")?.steps.map { $0 } ?? [] }

    private func createTask(on client: LedgerClient, steps: [String]) throws {
        try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t", "steps": steps]) }
    }

    @Test func aMoveByOnePlaceIsRecordedAsTheMoveOfTheElementMoved() throws {
        let (_, a, _, _) = try pair()
        try createTask(on: a, steps: ["s1", "s2", "s3", "s4"])
        let ids = try elementIDs(a)
        // s2 one place on: the list then reads as if s3 had moved one place back.
        try a.db.write { a.task("t")?.steps.move(from: 1, to: 2) }
        #expect(movedValues(try lastOperations(a), ids) == ["s2"])
        // s2 back one place: the list reads as if s3 had moved one place on.
        try a.db.write { a.task("t")?.steps.move(from: 2, to: 1) }
        #expect(movedValues(try lastOperations(a), ids) == ["s2"])
        #expect(steps(a) == ["s1", "s2", "s3", "s4"])
    }

    @Test func aMoveIsAnchoredAfterTheMovedElementsNewPredecessor() throws {
        let (_, a, _, _) = try pair()
        try createTask(on: a, steps: ["s1", "s2", "s3", "s4"])
        let ids = try elementIDs(a)
        try a.db.write { a.task("t")?.steps.move(from: 0, to: 2) }
        let operations = try lastOperations(a)
        #expect(operations.count == 1)
        guard case .listMove(_, let element, let after)? = operations.first?.change else { Issue.record("not a move: \(operations)"); return }
        #expect(element == ids["s1"])
        // s3 never moved: its position is its insert's id.
        #expect(after == ids["s3"])
        try a.db.write { a.task("t")?.steps.move(from: 3, to: 0) }
        guard case .listMove(_, let front, let frontAnchor)? = try lastOperations(a).first?.change else { Issue.record("not a move"); return }
        #expect(front == ids["s4"] && frontAnchor == nil)
        #expect(steps(a) == ["s4", "s2", "s3", "s1"])
    }

    @Test func swapAtIsRecordedAsMovesOfTheTwoElementsSwapped() throws {
        let (_, a, _, _) = try pair()
        try createTask(on: a, steps: ["s1", "s2", "s3", "s4", "s5"])
        let ids = try elementIDs(a)
        try a.db.write { a.task("t")?.steps.swapAt(3, 0) }
        #expect(movedValues(try lastOperations(a), ids) == ["s4", "s1"])
        #expect(steps(a) == ["s4", "s2", "s3", "s1", "s5"])
        // Neighbours: moving the later one before the earlier is the whole swap.
        try a.db.write { a.task("t")?.steps.swapAt(1, 2) }
        #expect(movedValues(try lastOperations(a), ids) == ["s3"])
        #expect(steps(a) == ["s4", "s3", "s2", "s1", "s5"])
        // A swap of an element with itself records nothing.
        let count = try outbox(a).count
        try a.db.write { a.task("t")?.steps.swapAt(2, 2) }
        #expect(try outbox(a).count == count)
    }

    @Test func severalMovesInOneWriteAreEachRecordedAsTheirElementsMove() throws {
        let (_, a, _, _) = try pair()
        try createTask(on: a, steps: ["s1", "s2", "s3", "s4"])
        let ids = try elementIDs(a)
        try a.db.write {
            let steps = a.task("t")?.steps
            steps?.move(from: 1, to: 2)  // s1 s3 s2 s4
            steps?.move(from: 3, to: 2)  // s1 s3 s4 s2
            steps?.swapAt(0, 1)          // s3 s1 s4 s2: neighbours, s3 moves
        }
        #expect(movedValues(try lastOperations(a), ids) == ["s2", "s4", "s3"])
        #expect(steps(a) == ["s3", "s1", "s4", "s2"])
    }

    @Test func aWriteThatAlsoInsertsIsRecordedByComparisonAndGivesTheSameList() throws {
        let (_, a, b, server) = try pair()
        try createTask(on: a, steps: ["s1", "s2", "s3"])
        try server.exchange([a, b])
        try a.db.write {
            let steps = a.task("t")?.steps
            steps?.move(from: 0, to: 2)
            steps?.append("s4")
            steps?.move(from: 3, to: 0)
        }
        #expect(steps(a) == ["s4", "s2", "s3", "s1"])
        try server.exchange([a, b])
        #expect(steps(b) == ["s4", "s2", "s3", "s1"])
        #expect(a.dump() == b.dump())
    }

    @Test func concurrentMovesOfTheSameElementByOnePlaceConvergeWithTheNewestMoveOfThatElement() throws {
        let (_, a, b, server) = try pair()
        try createTask(on: a, steps: ["s1", "s2", "s3", "s4"])
        try server.exchange([a, b])
        // b moves s2 to the end; a, later, moves s2 one place on. a's is the newest move of
        // s2, so s2 ends after s3 on both. (Recorded as s3 moving back instead, b's move of
        // s2 would win and leave s2 at the end.)
        try b.db.write { b.task("t")?.steps.move(from: 1, to: 3) }
        a.clock.set(2_000)
        try a.db.write { a.task("t")?.steps.move(from: 1, to: 2) }
        try server.exchange([a, b])
        try server.exchange([a, b])
        #expect(steps(a) == ["s1", "s3", "s2", "s4"])
        #expect(steps(b) == ["s1", "s3", "s2", "s4"])
        #expect(a.dump() == b.dump())
    }

    @Test func concurrentSwapsSharingAnElementConvergeWithEachElementOnce() throws {
        let (_, a, b, server) = try pair()
        try createTask(on: a, steps: ["s1", "s2", "s3", "s4"])
        try server.exchange([a, b])
        try a.db.write { a.task("t")?.steps.swapAt(0, 1) }
        b.clock.set(2_000)
        try b.db.write { b.task("t")?.steps.swapAt(0, 3) }
        try server.exchange([a, b])
        try server.exchange([a, b])
        // a moved s2 to the front; b, later, s4 to the front (so before s2) and s1 after s3.
        #expect(steps(a) == ["s4", "s2", "s3", "s1"])
        #expect(a.dump() == b.dump())
    }
}
