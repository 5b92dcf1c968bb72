// Upload acknowledgements remove exactly the changesets the server holds from the outbox, in
// a durable commit each, and the stored last acknowledged sequence never moves back.

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Testing

@Suite struct LedgerAcknowledgementTests {
    private func client(commits: Int) throws -> (LedgerFolder, LedgerClient) {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        for index in 0..<commits { try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t\(index)"]) } }
        return (folder, client)
    }

    @Test func acknowledgingAFewOfAManyChangesetOutboxRemovesExactlyThose() throws {
        let (_, client) = try client(commits: 150)
        try client.ledger.acknowledge(through: 130)
        #expect(try client.ledger.pendingChangesets(after: 0, limit: 1_000).map(\.clientSequence) == Array(131...150))
        #expect(try client.ledger.status().lastAcknowledged == 130)
        try client.ledger.acknowledge(through: 150)
        #expect(try client.ledger.status().pendingUploads == 0)
        #expect(try client.ledger.status().lastAcknowledged == 150)
    }

    @Test func anOlderAcknowledgementRemovesNothingAndLeavesTheNewerOne() throws {
        let (_, client) = try client(commits: 6)
        try client.ledger.acknowledge(through: 4)
        try client.ledger.acknowledge(through: 2)
        #expect(try client.ledger.pendingChangesets(after: 0, limit: 10).map(\.clientSequence) == [5, 6])
        #expect(try client.ledger.status().lastAcknowledged == 4)
    }

    @Test func aCommitAfterAnAcknowledgementKeepsItsChangesetInTheOutbox() throws {
        let (_, client) = try client(commits: 3)
        try client.ledger.acknowledge(through: 3)
        try client.db.write { client.task("t0")?.title = "changed" }
        let pending = try client.ledger.pendingChangesets(after: 0, limit: 10)
        #expect(pending.map(\.clientSequence) == [4])
        #expect(pending.first?.operations.map(\.change) == [.set(property: "title", value: .string("changed"))])
    }
}
