// The session's life: fatal and retryable errors, reconnecting with backoff, suspend and
// resume, and the reconnect delays themselves.

import Foundation
import Testing
import StrataSyncProtocol
@testable import StrataSync

@Suite("Session lifecycle", .timeLimit(.minutes(10)))
struct SessionLifecycleTests {
    @Test(arguments: [SyncErrorCode.invalidToken, .schemaMismatch, .unknownApp, .unsupportedProtocolVersion])
    func aFatalServerErrorStopsTheSessionAndFailsWaiters(code: SyncErrorCode) async throws {
        let harness = SessionHarness()
        let (connection, _) = await harness.connect()
        harness.ledger.recordLocalCommit()
        _ = await connection.barrier()
        connection.deliver(.error(code: code, message: "refused"))
        let error = await #expect(throws: SyncError.self) { try await harness.session.wait(for: .upload) }
        let expected = SyncError.Code(code)
        #expect(error?.code == expected)
        #expect(harness.session.state == .inactive)
        #expect(harness.session.connectionState == .disconnected)
        #expect(harness.transport.attemptCount == 1)
        #expect(harness.timer.requested.pending.isEmpty)
        let token = harness.session.addProgressNotification(for: .upload, mode: .reportIndefinitely) { _ in }
        #expect(token == nil)
    }

    @Test func aRetryableServerErrorReconnectsAfterTheBackoff() async throws {
        let harness = SessionHarness()
        let errors = Mailbox<SyncError>()
        harness.session.errorHandler = { errors.put($0) }
        let (connection, _) = await harness.connect()
        connection.deliver(.error(code: .serverError, message: "database down"))
        #expect(await errors.take() == SyncError(.serverError, "database down"))
        let delay = await harness.timer.requested.take()
        let shortest: Duration = .milliseconds(250), longest: Duration = .milliseconds(500)
        #expect(delay >= shortest)
        #expect(delay <= longest)
        _ = await connection.closed.take()
        harness.timer.fire()
        let (second, hello) = await harness.connect(resume: false)
        #expect(hello != nil)
        _ = await second.barrier()
        #expect(harness.session.connectionState == .connected)
        #expect(harness.transport.attemptCount == 2)
    }

    @Test func failedConnectsBackOffLongerEachTimeAndReport() async throws {
        let harness = SessionHarness()
        harness.transport.failNextConnects([SyncError(.connectionFailed, "refused"), SyncError(.connectionFailed, "refused")])
        harness.session.resume()
        let first = await harness.timer.requested.take()
        harness.timer.fire()
        let second = await harness.timer.requested.take()
        let half: Duration = .milliseconds(500), whole: Duration = .seconds(1)
        #expect(first <= half)
        #expect(second >= half)
        #expect(second <= whole)
        #expect(harness.session.lastError?.code == .connectionFailed)
        harness.timer.fire()
        let (connection, _) = await harness.connect(resume: false)
        _ = await connection.barrier()
        #expect(harness.session.connectionState == .connected)
    }

    @Test func aServerThatNeverWelcomesIsGivenUpOnAndTriedAgain() async throws {
        let timeouts = ManualTimer()
        let harness = SessionHarness { settings in
            settings.timeoutTimer = timeouts
            settings.handshakeTimeout = .seconds(20)
        }
        harness.session.resume()
        let silent = await harness.transport.connections.take()
        guard case .hello = await silent.next() else { Issue.record("hello"); return }
        #expect(await timeouts.requested.take() == .seconds(20))
        // The server accepted the connection and says nothing: the timeout abandons it.
        timeouts.fire()
        _ = await silent.closed.take()
        _ = await harness.timer.requested.take()
        #expect(harness.session.lastError?.code == .connectionFailed)
        #expect(harness.session.connectionState == .disconnected)
        harness.timer.fire()
        let (second, hello) = await harness.connect(resume: false)
        #expect(hello != nil)
        _ = await second.barrier()
        #expect(harness.session.connectionState == .connected)
        // Once welcomed, the connection's timeout no longer matters.
        _ = await timeouts.requested.take()
        timeouts.fire()
        _ = await second.barrier(2)
        #expect(harness.session.connectionState == .connected)
        #expect(harness.transport.attemptCount == 2)
    }

    @Test func suspendDisconnectsAndResumeReconnects() async throws {
        let harness = SessionHarness()
        let (connection, _) = await harness.connect()
        _ = await connection.barrier()
        harness.session.suspend()
        _ = await connection.closed.take()
        harness.ledger.recordLocalCommit()
        let (second, _) = await harness.connect()
        // The commit made while suspended uploads after resume.
        #expect(uploadedSequences(await second.barrier()) == [[1]])
        #expect(harness.transport.attemptCount == 2)
    }

    @Test func suspendedSessionsAreInactiveAndDisconnected() async throws {
        let harness = SessionHarness()
        let states = harness.session.connectionStates
        var iterator = states.makeAsyncIterator()
        #expect(await iterator.next() == .disconnected)
        let (connection, _) = await harness.connect()
        #expect(await iterator.next() == .connecting)
        #expect(await iterator.next() == .connected)
        harness.session.suspend()
        _ = await connection.closed.take()
        #expect(await iterator.next() == .disconnected)
        #expect(harness.session.state == .inactive)
    }

    @Test func aSuspendDuringTheBackoffCancelsTheReconnect() async throws {
        let harness = SessionHarness()
        harness.transport.failNextConnects([SyncError(.connectionFailed, "refused")])
        harness.session.resume()
        _ = await harness.timer.requested.take()
        harness.session.suspend()
        harness.session.resume()
        // The resume connects at once; the old timer's firing is stale.
        let connection = await harness.transport.connections.take()
        harness.timer.fire()
        _ = await connection.next()
        connection.deliver(.welcome(SyncMessage.Welcome(lastAcknowledged: 0, latestSequence: 0)))
        _ = await connection.barrier()
        #expect(harness.transport.attemptCount == 2)
    }

    @Test func reconnectDelaysAreSeededGrowAndStayUnderTheCeiling() {
        var a = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(8), seed: 3)
        var b = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(8), seed: 3)
        let delays: [Duration] = (0..<6).map { _ in a.nextDelay() }
        let again: [Duration] = (0..<6).map { _ in b.nextDelay() }
        #expect(delays == again)
        let ceilings: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)]
        for (delay, ceiling) in zip(delays, ceilings) {
            #expect(delay >= ceiling / 2)
            #expect(delay <= ceiling)
        }
        a.reset()
        let afterReset: Duration = a.nextDelay(), initial: Duration = .seconds(1)
        #expect(afterReset <= initial)
        var other = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(8), seed: 4)
        let otherDelays: [Duration] = (0..<6).map { _ in other.nextDelay() }
        #expect(otherDelays != delays)
    }

    @Test func uploadFramesKeepToTheByteBudgetAndTheOrder() {
        let changesets = (1...5).map { ClientChangeset(clientSequence: UInt64($0), operations: []) }
        let size = SyncFrameCodec.encode(.upload([changesets[0]])).count
        let frames = UploadBatcher.frames(of: changesets, byteBudget: size * 2)
        let sequences: [[UInt64]] = frames.map { $0.map(\.clientSequence) }
        #expect(sequences == [[1, 2], [3, 4], [5]])
        #expect(UploadBatcher.frames(of: changesets, byteBudget: 1).count == 5)
    }
}
