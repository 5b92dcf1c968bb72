// UploadGroupCommit on its own, with a stand-in store whose first commit waits for the test, so
// which uploads wait together is decided by the test, not by timing.

import StrataSyncProtocol
@testable import StrataSyncServer
import Synchronization
import Testing

@Suite("Upload group commit")
struct UploadGroupCommitTests {
    /// A stand-in store: records each group's clients, holds the first group until `release()`,
    /// and acknowledges each upload through its last client sequence.
    private final class StandInStore: Sendable {
        private let groups = Mutex<[[UInt64]]>([])
        private let gate = AsyncStream<Void>.makeStream()
        let failing: Set<UInt64>

        init(failing: Set<UInt64> = []) { self.failing = failing }

        var recorded: [[UInt64]] { groups.withLock { $0 } }

        func release() { gate.continuation.finish() }

        func commit(_ requests: [UploadRequest]) async throws -> [Result<UploadResult, SyncServerError>] {
            let first = groups.withLock { groups in
                groups.append(requests.map(\.clientID))
                return groups.count == 1
            }
            if first { for await _ in gate.stream {} }
            if requests.contains(where: { failing.contains($0.clientID) }) {
                throw SyncServerError.storageUnavailable("the stand-in store fails this group")
            }
            return requests.map { request in
                .success(UploadResult(lastAcknowledged: request.changesets.last?.clientSequence ?? 0,
                                      position: HistoryPosition(latestSequence: 0, compactedThrough: 0), appendedCount: request.changesets.count))
            }
        }
    }

    private static func changesets(_ count: Int) -> [ClientChangeset] {
        (1...count).map { ClientChangeset(clientSequence: UInt64($0), operations: []) }
    }

    /// Waits (yielding) until `condition` holds.
    private static func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    @Test func uploadsArrivingDuringACommitShareTheNextOneInArrivalOrder() async throws {
        let store = StandInStore()
        let group = UploadGroupCommit()
        let first = Task { try await group.upload(app: "a", clientID: 1, changesets: Self.changesets(1)) { _, r in try await store.commit(r) } }
        await Self.until { !store.recorded.isEmpty }
        var waiting: [Task<UploadResult, any Error>] = []
        for client in UInt64(2)...6 {
            waiting.append(Task { try await group.upload(app: "a", clientID: client, changesets: Self.changesets(Int(client))) { _, r in
                try await store.commit(r)
            } })
            await Self.until { group.waitingCount(app: "a") == Int(client) - 1 }
        }
        store.release()
        #expect(try await first.value.lastAcknowledged == 1)
        for (index, task) in waiting.enumerated() {
            #expect(try await task.value.lastAcknowledged == UInt64(index + 2), "each caller gets its own outcome")
        }
        #expect(store.recorded == [[1], [2, 3, 4, 5, 6]])
        #expect(group.waitingCount(app: "a") == 0)
    }

    @Test func aGroupTakesNoMoreChangesetsThanItsBound() async throws {
        let store = StandInStore()
        let group = UploadGroupCommit(maximumChangesets: 3)
        let first = Task { try await group.upload(app: "a", clientID: 1, changesets: Self.changesets(1)) { _, r in try await store.commit(r) } }
        await Self.until { !store.recorded.isEmpty }
        var waiting: [Task<UploadResult, any Error>] = []
        for client in UInt64(2)...6 {
            waiting.append(Task { try await group.upload(app: "a", clientID: client, changesets: Self.changesets(1)) { _, r in
                try await store.commit(r)
            } })
            await Self.until { group.waitingCount(app: "a") == Int(client) - 1 }
        }
        store.release()
        _ = try await first.value
        for task in waiting { _ = try await task.value }
        #expect(store.recorded == [[1], [2, 3, 4], [5, 6]])
    }

    @Test func aFailedGroupFailsEachOfItsUploadsAndTheNextGroupStillRuns() async throws {
        let store = StandInStore(failing: [3])
        let group = UploadGroupCommit()
        let first = Task { try await group.upload(app: "a", clientID: 1, changesets: Self.changesets(1)) { _, r in try await store.commit(r) } }
        await Self.until { !store.recorded.isEmpty }
        var waiting: [Task<UploadResult, any Error>] = []
        for client in UInt64(2)...3 {
            waiting.append(Task { try await group.upload(app: "a", clientID: client, changesets: Self.changesets(1)) { _, r in
                try await store.commit(r)
            } })
            await Self.until { group.waitingCount(app: "a") == Int(client) - 1 }
        }
        store.release()
        #expect(try await first.value.lastAcknowledged == 1)
        for task in waiting {
            await #expect(throws: SyncServerError.storageUnavailable("the stand-in store fails this group")) { try await task.value }
        }
        let later = try await group.upload(app: "a", clientID: 4, changesets: Self.changesets(2)) { _, r in try await store.commit(r) }
        #expect(later.lastAcknowledged == 2)
        #expect(store.recorded == [[1], [2, 3], [4]])
    }
}
