import StrataSyncProtocol
import Synchronization

/// One client's upload waiting in a group commit.
struct UploadRequest: Sendable {
    let clientID: UInt64
    let changesets: [ClientChangeset]
}

/// Group commit: uploads of one app that arrive while a commit of that app is under way wait,
/// and the next commit stores all of them in one store transaction (one durable commit, one set
/// of round trips) instead of one each.
///
/// No extra task runs: the first caller to find the app idle leads, storing its own upload with
/// whatever else is waiting; when it is done it hands the lead to the oldest upload that arrived
/// meanwhile, whose caller then stores everything waiting. Each caller returns only after the
/// transaction holding its upload committed, so an acknowledgement still means durable. The
/// store applies a group's uploads in arrival order, each with the exactly-once and gap rules
/// of ``UploadPlan`` on its own: one refused upload (out of order) fails only its caller. When
/// the transaction fails, every upload in it fails with that error and none is stored.
final class UploadGroupCommit: Sendable {
    /// Commits `requests` of `app` in one transaction; one outcome per request, in order.
    typealias Commit = @Sendable (_ app: String, _ requests: [UploadRequest]) async throws -> [Result<UploadResult, SyncServerError>]

    /// The most changesets a group takes (at least one whole upload): bounds a transaction's
    /// statements and memory; the rest wait for the next group.
    let maximumChangesets: Int

    private enum Turn: Sendable {
        /// The upload was stored (or refused) by another caller's group.
        case done(Result<UploadResult, any Error>)
        /// This caller leads the next group.
        case lead
    }

    private struct Waiter {
        let request: UploadRequest
        let continuation: CheckedContinuation<Turn, Never>
    }

    private struct AppQueue {
        /// Whether a caller leads (is committing or about to).
        var led = false
        var waiting: [Waiter] = []
    }

    private let queues = Mutex<[String: AppQueue]>([:])

    init(maximumChangesets: Int = 10_000) {
        self.maximumChangesets = maximumChangesets
    }

    /// Stores the upload in the next group commit of `app` (made by `commit` if this caller
    /// leads it); returns after that commit.
    func upload(app: String, clientID: UInt64, changesets: [ClientChangeset], commit: @escaping Commit) async throws -> UploadResult {
        let request = UploadRequest(clientID: clientID, changesets: changesets)
        let leads = queues.withLock { queues in
            if queues[app, default: AppQueue()].led { return false }
            queues[app, default: AppQueue()].led = true
            return true
        }
        if !leads {
            let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
                // The queue's leader may have finished between the check above and here: then
                // no one would hand this caller the lead, so it takes it now.
                let leadsNow = queues.withLock { queues in
                    if queues[app, default: AppQueue()].led {
                        queues[app, default: AppQueue()].waiting.append(Waiter(request: request, continuation: continuation))
                        return false
                    }
                    queues[app, default: AppQueue()].led = true
                    return true
                }
                if leadsNow { continuation.resume(returning: .lead) }
            }
            if case .done(let result) = turn { return try result.get() }
        }
        return try await lead(app: app, own: request, commit: commit)
    }

    /// How many uploads of `app` wait for the next group (for tests).
    func waitingCount(app: String) -> Int {
        queues.withLock { $0[app]?.waiting.count ?? 0 }
    }

    /// Commits a group holding `own` and what waits, hands the lead on, and returns `own`'s outcome.
    private func lead(app: String, own: UploadRequest, commit: @escaping Commit) async throws -> UploadResult {
        // The leader's own upload is never among the waiting (a caller handed the lead was
        // removed from them); it goes first, then the waiting ones, oldest first, up to the bound.
        let others: [Waiter] = queues.withLock { queues in
            var queue = queues[app, default: AppQueue()]
            var count = 0, changesets = own.changesets.count
            for waiter in queue.waiting {
                let size = waiter.request.changesets.count
                if changesets + size > maximumChangesets { break }
                changesets += size
                count += 1
            }
            let taken = Array(queue.waiting.prefix(count))
            queue.waiting.removeFirst(count)
            queues[app] = queue
            return taken
        }
        let requests = [own] + others.map(\.request)
        let outcomes: [Result<UploadResult, any Error>]
        do {
            // In a task of its own: the leader's cancellation (its client went away) must not
            // fail the other clients' uploads in the group.
            let results = try await Task { try await commit(app, requests) }.value
            guard results.count == requests.count else {
                throw SyncServerError.storageUnavailable("a group commit returned \(results.count) outcomes for \(requests.count) uploads")
            }
            outcomes = results.map { $0.mapError { $0 as any Error } }
        } catch {
            outcomes = Array(repeating: .failure(error), count: requests.count)
        }
        // Hands the lead to the oldest upload that arrived meanwhile, or frees the queue.
        let next: Waiter? = queues.withLock { queues in
            guard var queue = queues[app] else { return nil }
            if queue.waiting.isEmpty {
                queues[app] = nil
                return nil
            }
            let next = queue.waiting.removeFirst()
            queues[app] = queue
            return next
        }
        next?.continuation.resume(returning: .lead)
        for (waiter, outcome) in zip(others, outcomes.dropFirst()) {
            waiter.continuation.resume(returning: .done(outcome))
        }
        return try outcomes[0].get()
    }
}
