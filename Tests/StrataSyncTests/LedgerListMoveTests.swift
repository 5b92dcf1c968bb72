// List moves through the ledger: `List.move(from:to:)` and `swapAt` on a synced object record
// identity-keeping moves, and two files that move (or move and remove) one element
// concurrently converge with the element at most once.

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Testing

@Suite struct LedgerListMoveTests {
    private func pair() throws -> (LedgerFolder, LedgerClient, LedgerClient, LedgerTestServer) {
        let folder = LedgerFolder()
        return (folder, try LedgerClient(name: "a", folder: folder.url, wallStart: 1_000),
                try LedgerClient(name: "b", folder: folder.url, wallStart: 1_000), LedgerTestServer())
    }

    /// The changes of the newest recorded changeset.
    private func lastChanges(_ client: LedgerClient) throws -> [SyncOperation.Change] {
        try client.ledger.pendingChangesets(after: 0, limit: 1_000).last?.operations.map(\.change) ?? []
    }

    private func steps(_ client: LedgerClient) -> [String] { client.task("t")?.steps.map { $0 } ?? [] }

    @Test func moveAndSwapAtRecordMovesOnly() throws {
        let (_, a, _, _) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t", "steps": ["s1", "s2", "s3", "s4"]]) }
        try a.db.write { a.task("t")?.steps.move(from: 3, to: 0) }
        let moved = try lastChanges(a)
        #expect(moved.count == 1)
        guard case .listMove(let property, _, let after)? = moved.first else { Issue.record("not a move: \(moved)"); return }
        #expect(property == "steps" && after == nil)
        try a.db.write { a.task("t")?.steps.swapAt(0, 3) }
        let swapped = try lastChanges(a)
        #expect(swapped.count == 2)
        #expect(swapped.allSatisfy { if case .listMove = $0 { true } else { false } })
        #expect(steps(a) == ["s3", "s1", "s2", "s4"])
    }

    @Test func concurrentMovesOfOneElementLeaveItOnceOnBothFiles() throws {
        let (_, a, b, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t", "steps": ["s1", "s2", "s3", "s4"]]) }
        try server.exchange([a, b])
        // Offline from each other: a moves s1 to the end, b moves s1 after s3; b's is newer.
        // (Moves by one place: LedgerListMoveCallTests.)
        try a.db.write { a.task("t")?.steps.move(from: 0, to: 3) }
        b.clock.set(2_000)
        try b.db.write { b.task("t")?.steps.move(from: 0, to: 2) }
        try server.exchange([a, b])
        try server.exchange([a, b])
        #expect(steps(a) == ["s2", "s3", "s1", "s4"])
        #expect(a.dump() == b.dump())
    }

    @Test func aRemoveConcurrentWithAMoveWinsOnBothFiles() throws {
        let (_, a, b, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t", "steps": ["s1", "s2", "s3"]]) }
        try server.exchange([a, b])
        b.clock.set(2_000)
        try a.db.write { a.task("t")?.steps.remove(at: 1) }
        // b's move is the newer operation, and still does not bring s2 back.
        try b.db.write { b.task("t")?.steps.move(from: 1, to: 2) }
        try server.exchange([a, b])
        try server.exchange([a, b])
        #expect(steps(a) == ["s1", "s3"])
        #expect(a.dump() == b.dump())
    }
}
