@testable import StrataSyncServer
import Synchronization
import Testing

/// Which commits reach a session's callback, and with what origin.
@Suite("Server commit notifier")
struct ServerCommitNotifierTests {
    /// Records the notices a callback receives: each sequence and the origin's client (nil: unknown).
    private final class Received: Sendable {
        private let notices = Mutex<[String]>([])
        func record(_ notice: CommitNotifier.Notice) {
            notices.withLock { $0.append("\(notice.sequence) from \(notice.origin.map { "\($0.clientID)" } ?? "?")") }
        }
        var all: [String] { notices.withLock { $0 } }
    }

    private static let origin = CommitNotifier.Origin(clientID: 7, classes: ["Todo"])

    @Test func anInstancesOwnUploadComingBackThroughTheStoreIsAnnouncedOnceInEitherOrder() {
        let notifier = CommitNotifier()
        let received = Received()
        let id = notifier.register(app: "a") { received.record($0) }
        _ = notifier.register(app: "b") { _ in Issue.record("another app's session was woken") }
        // The store's echo after the upload returned.
        let first = notifier.beginUpload(app: "a")
        notifier.endUpload(app: "a", id: first, announcing: (5, Self.origin))
        notifier.notifyFromStore(app: "a", sequence: 5)
        // The echo before the upload returned waits for it.
        let second = notifier.beginUpload(app: "a")
        notifier.notifyFromStore(app: "a", sequence: 6)
        #expect(received.all == ["5 from 7"])
        notifier.endUpload(app: "a", id: second, announcing: (6, Self.origin))
        #expect(received.all == ["5 from 7", "6 from 7"])
        // Another instance's commit waits only for the uploads under way when it arrived.
        let third = notifier.beginUpload(app: "a")
        notifier.notifyFromStore(app: "a", sequence: 8)
        let fourth = notifier.beginUpload(app: "a")
        notifier.endUpload(app: "a", id: third, announcing: (9, Self.origin))
        #expect(received.all == ["5 from 7", "6 from 7", "9 from 7", "8 from ?"])
        // An upload that stored nothing or failed releases what waited for it.
        notifier.notifyFromStore(app: "a", sequence: 10)
        notifier.endUpload(app: "a", id: fourth, announcing: nil)
        notifier.notifyFromStore(app: "a", sequence: 11)
        #expect(received.all == ["5 from 7", "6 from 7", "9 from 7", "8 from ?", "10 from ?", "11 from ?"])
        notifier.unregister(app: "a", id: id)
        notifier.notifyFromStore(app: "a", sequence: 12)
        #expect(received.all.count == 6)
    }

    @Test func ownAnnouncementsWhoseEchoNeverCameAreForgottenBeyondTheLimit() {
        let notifier = CommitNotifier()
        let received = Received()
        _ = notifier.register(app: "a") { received.record($0) }
        for sequence in UInt64(1)...10_000 {
            notifier.endUpload(app: "a", id: notifier.beginUpload(app: "a"), announcing: (sequence, Self.origin))
        }
        // The newest are still remembered; the oldest were forgotten and wake the sessions again.
        notifier.notifyFromStore(app: "a", sequence: 10_000)
        notifier.notifyFromStore(app: "a", sequence: 1)
        #expect(received.all.count == 10_001)
        #expect(received.all.last == "1 from ?")
    }
}
