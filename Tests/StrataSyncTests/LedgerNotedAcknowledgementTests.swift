// Acknowledgements noted without a commit of their own (`noteAcknowledged(through:)`): the
// next recorded local commit applies them in its transaction, never removing what that commit
// records; a durable `acknowledge(through:)` applies a newer note with its own. Losing a note
// with the process is covered end to end by EndToEndClientKillTests (the killed client's
// notes are lost; the restarted one uploads nothing twice and loses nothing).

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Testing

@Suite struct LedgerNotedAcknowledgementTests {
    @Test func aNotedAcknowledgementLeavesTheOutboxUntilTheNextRecordedCommit() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        for index in 0..<3 { try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t\(index)"]) } }
        client.ledger.noteAcknowledged(through: 2)
        #expect(try client.ledger.status().pendingUploads == 3)
        #expect(try client.ledger.status().lastAcknowledged == 0)

        try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t3"]) }
        #expect(try client.ledger.pendingChangesets(after: 0, limit: 10).map(\.clientSequence) == [3, 4])
        let status = try client.ledger.status()
        #expect(status.pendingUploads == 2)
        #expect(status.lastAcknowledged == 2)
    }

    @Test func theCommitApplyingANoteKeepsItsOwnChangeset() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        for index in 0..<3 { try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t\(index)"]) } }
        client.ledger.noteAcknowledged(through: 3)
        try client.db.write { client.task("t0")?.title = "changed" }
        let pending = try client.ledger.pendingChangesets(after: 0, limit: 10)
        #expect(pending.map(\.clientSequence) == [4])
        #expect(pending.first?.operations.map(\.change) == [.set(property: "title", value: .string("changed"))])
        #expect(try client.ledger.status().lastAcknowledged == 3)
    }

    @Test func aCommitRecordingNothingLeavesTheNoteForLater() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        for index in 0..<2 { try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t\(index)"]) } }
        client.ledger.noteAcknowledged(through: 2)
        // Setting a property to the value it has records no operation.
        try client.db.write { client.task("t0")?.title = client.task("t0")?.title ?? "" }
        #expect(try client.ledger.status().pendingUploads == 2)
        try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t2"]) }
        #expect(try client.ledger.pendingChangesets(after: 0, limit: 10).map(\.clientSequence) == [3])
    }

    @Test func aDurableAcknowledgementAppliesANewerNote() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        for index in 0..<4 { try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t\(index)"]) } }
        client.ledger.noteAcknowledged(through: 3)
        try client.ledger.acknowledge(through: 1)
        #expect(try client.ledger.pendingChangesets(after: 0, limit: 10).map(\.clientSequence) == [4])
        #expect(try client.ledger.status().lastAcknowledged == 3)
    }

    @Test func acknowledgingAFewOfAManyChangesetOutboxRemovesExactlyThose() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        // Many entries, removed in two steps.
        for index in 0..<150 { try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t\(index)"]) } }
        try client.ledger.acknowledge(through: 130)
        #expect(try client.ledger.pendingChangesets(after: 0, limit: 1_000).map(\.clientSequence) == Array(131...150))
        try client.ledger.acknowledge(through: 150)
        #expect(try client.ledger.status().pendingUploads == 0)
    }
}
