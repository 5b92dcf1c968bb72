// The deadline on store calls: a call that never returns ends the session's wait with
// `storageUnavailable` instead of holding it forever; one that returns gives its value or error.

import Testing
@testable import StrataSyncServer

@Suite("Server store deadline", .timeLimit(.minutes(10)))
struct ServerDeadlineTests {
    private struct Refused: Error, Equatable {}

    @Test func aCallThatFinishesGivesItsValueOrItsError() async throws {
        #expect(try await withDeadline(.seconds(60), "an answer") { 42 } == 42)
        await #expect(throws: Refused.self) { try await withDeadline(.seconds(60), "a refusal") { throw Refused() } }
    }

    @Test func aCallThatNeverReturnsIsGivenUpOnWithStorageUnavailable() async throws {
        let error = await #expect(throws: SyncServerError.self) {
            // A wait no one ever ends, as a query on a connection PostgreSQL dropped can be.
            try await withDeadline(.milliseconds(20), "a stuck query") {
                let (never, continuation) = AsyncStream<Int>.makeStream()
                defer { continuation.finish() }
                for await value in never { return value }
                throw CancellationError()
            }
        }
        guard case .storageUnavailable(let message)? = error else { Issue.record("storageUnavailable"); return }
        #expect(message.contains("a stuck query"))
    }

    @Test func cancellingTheCallerCancelsTheCall() async throws {
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let call = Task {
            try await withDeadline(.seconds(60), "a long call") {
                startedContinuation.yield()
                try await Task.sleep(for: .seconds(3_600))
                return 1
            }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
    }
}
