@testable import StrataSyncServer
import Synchronization
import Testing

/// Which commits reach a session's callback, and with what origin.
@Suite("Server commit notifier")
struct ServerCommitNotifierTests {
    /// Records the notices a callback receives.
    private final class Received: Sendable {
        let notices = Mutex<[(sequence: UInt64, clientID: UInt64?)]>([])
        func record(_ notice: CommitNotifier.Notice) { notices.withLock { $0.append((notice.sequence, notice.origin?.clientID)) } }
        var all: [(sequence: UInt64, clientID: UInt64?)] { notices.withLock { $0 } }
    }

    @Test func anInstancesOwnUploadComingBackThroughTheStoreIsAnnouncedOnce() {
        let notifier = CommitNotifier()
        let received = Received()
        let id = notifier.register(app: "a") { received.record($0) }
        _ = notifier.register(app: "b") { _ in Issue.record("another app's session was woken") }
        notifier.notify(app: "a", sequence: 5, origin: .init(clientID: 7, classes: ["Todo"]))
        notifier.notifyFromStore(app: "a", sequence: 5)
        notifier.notifyFromStore(app: "a", sequence: 6)
        notifier.notifyFromStore(app: "a", sequence: 6)
        #expect(received.all.map(\.sequence) == [5, 6, 6], "only the own upload's echo is dropped")
        #expect(received.all.map(\.clientID) == [7, nil, nil])
        notifier.unregister(app: "a", id: id)
        notifier.notifyFromStore(app: "a", sequence: 7)
        #expect(received.all.count == 3)
    }

    @Test func ownAnnouncementsWhoseEchoNeverCameAreForgottenBeyondTheLimit() {
        let notifier = CommitNotifier()
        let received = Received()
        _ = notifier.register(app: "a") { received.record($0) }
        for sequence in UInt64(1)...10_000 { notifier.notify(app: "a", sequence: sequence, origin: .init(clientID: 1, classes: [])) }
        // The newest are still remembered; the oldest were forgotten and wake the session again.
        notifier.notifyFromStore(app: "a", sequence: 10_000)
        notifier.notifyFromStore(app: "a", sequence: 1)
        #expect(received.all.count == 10_001)
        #expect(received.all.last?.sequence == 1 && received.all.last?.clientID == nil)
    }
}
