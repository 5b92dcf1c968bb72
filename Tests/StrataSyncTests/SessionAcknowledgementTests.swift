// Upload acknowledgements that arrive together: each says the server holds every changeset up
// to its sequence, so the session acknowledges the newest of a run (one durable commit of the
// file for the run) and goes on uploading after it.

import Foundation
import StrataSyncProtocol
import Testing
@testable import StrataSync

@Suite struct SessionAcknowledgementTests {
    @Test func aRunOfAcknowledgementsLeavesTheOutboxAsTheNewestSays() async throws {
        let ledger = MemoryLedger()
        ledger.recordLocalCommit(count: 6)
        let harness = SessionHarness(ledger: ledger) { $0.uploadBatchLimit = 2 }
        let (connection, _) = await harness.connect()
        #expect(uploadedSequences(await connection.barrier(1)) == [[1, 2], [3, 4], [5, 6]])
        // Delivered back to back, in the order the server sends them.
        connection.deliver(.uploadAck(clientSequence: 2))
        connection.deliver(.uploadAck(clientSequence: 4))
        connection.deliver(.uploadAck(clientSequence: 6))
        _ = await connection.barrier(2)
        let acknowledged = ledger.state.withLock { $0.acknowledged }, left = ledger.state.withLock { $0.outbox.map(\.clientSequence) }
        #expect(acknowledged == 6)
        #expect(left == [])
    }

    @Test func commitsAfterARunOfAcknowledgementsUploadFromTheNewest() async throws {
        let ledger = MemoryLedger()
        ledger.recordLocalCommit(count: 4)
        let harness = SessionHarness(ledger: ledger) {
            $0.uploadBatchLimit = 2
            $0.uploadFramesInFlight = 2
        }
        let (connection, _) = await harness.connect()
        #expect(uploadedSequences(await connection.barrier(1)) == [[1, 2], [3, 4]])
        ledger.recordLocalCommit(count: 2)
        connection.deliver(.uploadAck(clientSequence: 2))
        connection.deliver(.uploadAck(clientSequence: 4))
        let sent = uploadedSequences(await connection.barrier(2)).flatMap { $0 }
        #expect(sent == [5, 6])
        #expect(ledger.state.withLock { $0.acknowledged } == 4)
    }
}
