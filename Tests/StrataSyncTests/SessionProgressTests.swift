// Waiting for uploads and downloads, and progress notifications: each completes exactly when
// the acknowledgements or downloads reach the target.

import Foundation
import Synchronization
import Testing
import StrataSyncProtocol
@testable import StrataSync

@Suite("Session progress", .timeLimit(.minutes(10)))
struct SessionProgressTests {
    @Test func waitForUploadReturnsWhenTheLastCommitIsAcknowledged() async throws {
        let harness = SessionHarness()
        harness.ledger.recordLocalCommit(count: 3)
        let (connection, _) = await harness.connect()
        _ = await connection.barrier(1)
        let waiting = Task { try await harness.session.wait(for: .upload) }
        while harness.waiterCount == 0 { await Task.yield() }
        connection.deliver(.uploadAck(clientSequence: 2))
        _ = await connection.barrier(2)
        #expect(harness.waiterCount == 1)
        connection.deliver(.uploadAck(clientSequence: 3))
        try await waiting.value
        #expect(harness.waiterCount == 0)
    }

    @Test func waitForUploadWithNothingPendingReturnsAtOnce() async throws {
        let harness = SessionHarness()
        try await harness.session.wait(for: .upload)
    }

    @Test func waitForDownloadTargetsTheWelcomesLatestSequence() async throws {
        let harness = SessionHarness()
        let waiting = Task { try await harness.session.wait(for: .download) }
        while harness.waiterCount == 0 { await Task.yield() }
        let (connection, _) = await harness.connect(latestSequence: 7)
        connection.deliver(.download(changesets: [], checkpoint: Checkpoint(sequence: 5, checksum: 0), remaining: 2))
        _ = await connection.barrier(1)
        #expect(harness.waiterCount == 1)
        connection.deliver(.download(changesets: [], checkpoint: Checkpoint(sequence: 7, checksum: 0), remaining: 0))
        try await waiting.value
    }

    @Test func waitForDownloadWhileConnectedWaitsForWhatTheServerHasNowNotWhatItLastSaid() async throws {
        let harness = SessionHarness()
        let (connection, _) = await harness.connect(latestSequence: 0)
        _ = await connection.barrier(1)
        // The welcome said 0, but another device has uploaded since: the wait must ask.
        let waiting = Task { try await harness.session.wait(for: .download) }
        while harness.waiterCount == 0 { await Task.yield() }
        let sent = await connection.next()
        guard case .latestSequenceRequest(let request) = sent else {
            Issue.record("expected a latest-sequence request, the session sent \(sent)")
            return
        }
        _ = await connection.barrier(2)
        #expect(harness.waiterCount == 1)
        connection.deliver(.latestSequence(request: request, sequence: 4))
        _ = await connection.barrier(3)
        #expect(harness.waiterCount == 1)
        connection.deliver(.download(changesets: [], checkpoint: Checkpoint(sequence: 4, checksum: 0), remaining: 0))
        try await waiting.value
        #expect(harness.waiterCount == 0)
    }

    @Test func anAnswerToAnEarlierRequestDoesNotSettleALaterWait() async throws {
        let harness = SessionHarness()
        let (connection, _) = await harness.connect(latestSequence: 0)
        _ = await connection.barrier(1)
        let first = Task { try await harness.session.wait(for: .download) }
        while harness.waiterCount == 0 { await Task.yield() }
        guard case .latestSequenceRequest(let earlier) = await connection.next() else {
            Issue.record("expected a latest-sequence request")
            return
        }
        let second = Task { try await harness.session.wait(for: .download) }
        while harness.waiterCount < 2 { await Task.yield() }
        guard case .latestSequenceRequest(let later) = await connection.next() else {
            Issue.record("expected a second latest-sequence request")
            return
        }
        #expect(later > earlier)
        connection.deliver(.latestSequence(request: earlier, sequence: 0))
        try await first.value
        _ = await connection.barrier(2)
        #expect(harness.waiterCount == 1)
        connection.deliver(.latestSequence(request: later, sequence: 3))
        connection.deliver(.download(changesets: [], checkpoint: Checkpoint(sequence: 3, checksum: 0), remaining: 0))
        try await second.value
    }

    @Test func waitForDownloadAlsoWaitsForTheSubscriptionsBootstrap() async throws {
        let ledger = MemoryLedger()
        try ledger.setSubscriptions(version: 1, specs: [SubscriptionSpec(name: "all", className: "Todo")])
        let harness = SessionHarness(ledger: ledger)
        let (connection, _) = await harness.connect(latestSequence: 0)
        _ = await connection.barrier(1)
        let waiting = Task { try await harness.session.wait(for: .download) }
        while harness.waiterCount == 0 { await Task.yield() }
        let sent = await connection.barrier(2)
        guard case .latestSequenceRequest(let request) = sent.first else {
            Issue.record("expected a latest-sequence request, the session sent \(sent)")
            return
        }
        connection.deliver(.latestSequence(request: request, sequence: 0))
        _ = await connection.barrier(3)
        #expect(harness.waiterCount == 1)
        connection.deliver(.snapshot(SyncMessage.Snapshot(objects: [], checkpoint: Checkpoint(sequence: 0, checksum: 0),
                                                          subscriptionVersion: 1, isReset: false, isLast: true)))
        try await waiting.value
    }

    @Test func aCancelledWaitThrowsCancellation() async throws {
        let harness = SessionHarness()
        harness.ledger.recordLocalCommit()
        let waiting = Task { try await harness.session.wait(for: .upload) }
        while harness.waiterCount == 0 { await Task.yield() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(harness.waiterCount == 0)
    }

    @Test func outstandingUploadProgressReportsUntilCompleteThenStops() async throws {
        let harness = SessionHarness()
        harness.ledger.recordLocalCommit(count: 4)
        let (connection, _) = await harness.connect(lastAcknowledged: 1)
        _ = await connection.barrier(1)
        let reports = Mailbox<SyncSession.Progress>()
        let token = harness.session.addProgressNotification(for: .upload, mode: .forCurrentlyOutstandingWork) { reports.put($0) }
        #expect(token != nil)
        #expect(await reports.take() == SyncSession.Progress(transferred: 0, transferrable: 3))
        harness.ledger.recordLocalCommit()  // not part of the outstanding work
        connection.deliver(.uploadAck(clientSequence: 3))
        let partial = await reports.take()
        #expect(partial == SyncSession.Progress(transferred: 2, transferrable: 3))
        let twoThirds: Double = 2.0 / 3.0
        #expect(partial.fractionTransferred == twoThirds)
        connection.deliver(.uploadAck(clientSequence: 5))
        let done = await reports.take()
        #expect(done.isTransferComplete)
        #expect(done.transferrable == 3)
        _ = await connection.barrier(2)
        let observersLeft = harness.session.engine.status.read { $0.progressObservers.count }
        #expect(observersLeft == 0)
        #expect(reports.pending.isEmpty)
    }

    @Test func indefiniteDownloadProgressFollowsTheCheckpoint() async throws {
        let harness = SessionHarness()
        let reports = Mailbox<SyncSession.Progress>()
        let token = harness.session.addProgressNotification(for: .download, mode: .reportIndefinitely) { reports.put($0) }
        #expect(await reports.take() == SyncSession.Progress(transferred: 0, transferrable: 0))
        let (connection, _) = await harness.connect(latestSequence: 10)
        #expect(await reports.take() == SyncSession.Progress(transferred: 0, transferrable: 10))
        connection.deliver(.download(changesets: [], checkpoint: Checkpoint(sequence: 6, checksum: 0), remaining: 6))
        #expect(await reports.take() == SyncSession.Progress(transferred: 6, transferrable: 12))
        token?.invalidate()
        connection.deliver(.download(changesets: [], checkpoint: Checkpoint(sequence: 12, checksum: 0), remaining: 0))
        _ = await connection.barrier()
        #expect(reports.pending.isEmpty)
    }

    @Test func progressUnitsAndFractions() {
        let none = SyncSession.Progress(transferred: 0, transferrable: 0)
        #expect(none.isTransferComplete)
        #expect(none.fractionTransferred == Double(1))
        let half = SyncSession.Progress(transferred: 5, transferrable: 10)
        #expect(!half.isTransferComplete)
        #expect(half.fractionTransferred == Double(0.5))
        #expect(half.transferredBytes == 5)
        #expect(half.transferrableBytes == 10)
        let clamped = SyncSession.Progress(transferred: 12, transferrable: 10)
        #expect(clamped.transferred == 10)
    }
}
