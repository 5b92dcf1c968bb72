// The session's protocol over an in-memory transport: hello and welcome, uploads in batches
// with acknowledgements, resending after a reconnect, downloads and snapshots into the ledger.

import Foundation
import Testing
import StrataSyncProtocol
@testable import StrataSync

@Suite("Session protocol", .timeLimit(.minutes(10)))
struct SessionProtocolTests {
    @Test func helloCarriesTheFileStateAndWelcomeConnects() async throws {
        let ledger = MemoryLedger(clientID: 77)
        try ledger.setSubscriptions(version: 3, specs: [SubscriptionSpec(name: "all", className: "Todo")])
        ledger.state.withLock { $0.checkpoint = 12 }
        let harness = SessionHarness(ledger: ledger, token: "secret")
        #expect(harness.session.connectionState == .disconnected)
        let (connection, hello) = await harness.connect(lastAcknowledged: 0, latestSequence: 20)
        let sent = try #require(hello)
        #expect(sent.appID == "app")
        #expect(sent.clientID == 77)
        #expect(sent.accessToken == "secret")
        #expect(sent.checkpoint == 12)
        #expect(sent.subscriptionVersion == 3)
        #expect(sent.subscriptions == [SubscriptionSpec(name: "all", className: "Todo")])
        #expect(sent.schema == ledger.schema)
        _ = await connection.barrier()
        #expect(harness.session.connectionState == .connected)
        #expect(harness.session.state == .active)
    }

    @Test func welcomeAcknowledgesAndUploadsTheRestOfTheOutbox() async throws {
        let ledger = MemoryLedger()
        ledger.recordLocalCommit(count: 5)
        let harness = SessionHarness(ledger: ledger)
        let (connection, _) = await harness.connect(lastAcknowledged: 2)
        let sent = await connection.barrier()
        #expect(uploadedSequences(sent) == [[3, 4, 5]])
        let acknowledged = ledger.state.withLock { $0.acknowledged }
        #expect(acknowledged == 2)
    }

    @Test func uploadsAreSplitIntoFramesOfTheBatchLimit() async throws {
        let ledger = MemoryLedger()
        ledger.recordLocalCommit(count: 25)
        let harness = SessionHarness(ledger: ledger) { $0.uploadBatchLimit = 10 }
        let (connection, _) = await harness.connect()
        let frames = uploadedSequences(await connection.barrier())
        let sizes: [Int] = frames.map(\.count), all: [UInt64] = frames.flatMap { $0 }
        #expect(sizes == [10, 10, 5])
        #expect(all == Array(1...25))
    }

    @Test func uploadsStopAtTheWindowUntilAcknowledged() async throws {
        let ledger = MemoryLedger()
        ledger.recordLocalCommit(count: 10)
        let harness = SessionHarness(ledger: ledger) {
            $0.uploadBatchLimit = 3
            $0.uploadWindow = 4
        }
        let (connection, _) = await harness.connect()
        #expect(uploadedSequences(await connection.barrier(1)) == [[1, 2, 3], [4]])
        connection.deliver(.uploadAck(clientSequence: 3))
        #expect(uploadedSequences(await connection.barrier(2)) == [[5, 6, 7]])
        let acknowledged = ledger.state.withLock { $0.acknowledged }, left = ledger.state.withLock { $0.outbox.count }
        #expect(acknowledged == 3)
        #expect(left == 7)
    }

    @Test func commitsBeyondTheFramesInFlightWaitForAnAcknowledgementAndLeaveTogether() async throws {
        let harness = SessionHarness { $0.uploadFramesInFlight = 2 }
        let (connection, _) = await harness.connect()
        _ = await connection.barrier(1)
        harness.ledger.recordLocalCommit()
        #expect(uploadedSequences(await connection.barrier(2)) == [[1]])
        harness.ledger.recordLocalCommit()
        #expect(uploadedSequences(await connection.barrier(3)) == [[2]])
        // Two frames await their acknowledgement: later commits wait in the outbox.
        harness.ledger.recordLocalCommit()
        harness.ledger.recordLocalCommit()
        #expect(uploadedSequences(await connection.barrier(4)) == [])
        connection.deliver(.uploadAck(clientSequence: 1))
        #expect(uploadedSequences(await connection.barrier(5)) == [[3, 4]])
    }

    @Test func localCommitsUploadWhileConnected() async throws {
        let harness = SessionHarness()
        let (connection, _) = await harness.connect()
        #expect(uploadedSequences(await connection.barrier(1)) == [])
        harness.ledger.recordLocalCommit()
        harness.ledger.recordLocalCommit()
        let frames = uploadedSequences(await connection.barrier(2))
        let all: [UInt64] = frames.flatMap { $0 }
        #expect(all == [1, 2])
    }

    @Test func reconnectResendsFromTheServersAcknowledgement() async throws {
        let ledger = MemoryLedger()
        ledger.recordLocalCommit(count: 5)
        let harness = SessionHarness(ledger: ledger)
        let (first, _) = await harness.connect()
        #expect(uploadedSequences(await first.barrier()) == [[1, 2, 3, 4, 5]])
        first.deliver(.uploadAck(clientSequence: 2))
        first.breakConnection()
        _ = await harness.timer.requested.take()
        #expect(harness.session.connectionState == .disconnected)
        harness.timer.fire()
        // The server stored 1…3 (its ack of 3 was lost with the connection).
        let (second, _) = await harness.connect(lastAcknowledged: 3, resume: false)
        #expect(uploadedSequences(await second.barrier()) == [[4, 5]])
        let acknowledged = ledger.state.withLock { $0.acknowledged }
        #expect(acknowledged == 3)
    }

    @Test func downloadsAreAppliedInOrderAndMoveTheCheckpoint() async throws {
        let harness = SessionHarness()
        let (connection, _) = await harness.connect(latestSequence: 4)
        let change = ServerChangeset(serverSequence: 3, clientID: 5, clientSequence: 1, operations: [])
        connection.deliver(.download(changesets: [change], checkpoint: Checkpoint(sequence: 3, checksum: 0), remaining: 1))
        connection.deliver(.download(changesets: [], checkpoint: Checkpoint(sequence: 4, checksum: 0), remaining: 0))
        _ = await connection.barrier()
        // Downloads that queue up while the session is busy are applied together.
        let downloads = harness.ledger.state.withLock { $0.downloads }
        #expect(downloads.flatMap { $0 } == [change])
        #expect(try harness.ledger.checkpoint() == 4)
    }

    @Test func aLastSnapshotOfTheCurrentVersionCompletesTheSubscriptions() async throws {
        let ledger = MemoryLedger()
        try ledger.setSubscriptions(version: 2, specs: [SubscriptionSpec(name: nil, className: "Todo")])
        let harness = SessionHarness(ledger: ledger)
        let (connection, _) = await harness.connect()
        func snapshot(version: UInt64, isLast: Bool) -> SyncMessage {
            .snapshot(SyncMessage.Snapshot(objects: [], checkpoint: Checkpoint(sequence: 9, checksum: 0), subscriptionVersion: version,
                                           isReset: false, isLast: isLast))
        }
        connection.deliver(snapshot(version: 1, isLast: true))
        connection.deliver(snapshot(version: 2, isLast: false))
        _ = await connection.barrier(1)
        #expect(try ledger.subscriptions().completedVersion == 0)
        #expect(harness.session.subscriptions.state == .pending)
        connection.deliver(snapshot(version: 2, isLast: true))
        _ = await connection.barrier(2)
        #expect(try ledger.subscriptions().completedVersion == 2)
        let snapshots = ledger.state.withLock { $0.snapshots.count }
        #expect(snapshots == 3)
        #expect(harness.session.subscriptions.state == .complete)
    }

    @Test func aDownloadTheFileRefusesReconnectsWithoutMovingTheCheckpoint() async throws {
        let harness = SessionHarness()
        let errors = Mailbox<SyncError>()
        harness.session.errorHandler = { errors.put($0) }
        let (connection, _) = await harness.connect(latestSequence: 5)
        harness.ledger.state.withLock { $0.failNextDownload = true }
        connection.deliver(.download(changesets: [], checkpoint: Checkpoint(sequence: 5, checksum: 1), remaining: 0))
        #expect(await errors.take().code == .localFileError)
        _ = await harness.timer.requested.take()
        #expect(try harness.ledger.checkpoint() == 0)
    }

    @Test func aMessageOutOfPlaceIsRefusedAndTheSessionStartsOver() async throws {
        let harness = SessionHarness()
        harness.session.resume()
        let connection = await harness.transport.connections.take()
        _ = await connection.next()  // hello
        connection.deliver(.uploadAck(clientSequence: 1))  // before welcome
        #expect(await connection.next() == .error(code: .malformedFrame, message: "the client did not expect uploadAck here"))
        _ = await harness.timer.requested.take()
        #expect(harness.session.lastError?.code == .malformedFrame)
    }
}
