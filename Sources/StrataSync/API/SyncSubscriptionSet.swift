public import Strata
import StrataSyncProtocol
import Synchronization

/// The subscriptions of a synced file: the classes whose objects the server sends it. Stored in
/// the file, sent to the server when they change and on every connection; the server then
/// bootstraps what is new. Always shows the newest set.
///
/// Change it inside ``update(_:)``, which waits for the server to bootstrap the change:
///
/// ```swift
/// let subscriptions = db.subscriptions
/// try await subscriptions.update {
///     subscriptions.append(QuerySubscription<Todo>(name: "all_todos"))
///     subscriptions.remove(named: "old")
/// }
/// ```
///
/// `append`, `remove` and `removeAll` outside an update block are programming errors and stop
/// the process with a message saying so. Updates are serialised: a second `update` waits for
/// the first's block to finish (not for its download).
public final class SyncSubscriptionSet: Sendable, Sequence {
    /// Where a subscription set is on its way to the server.
    public enum State: Sendable, Equatable {
        /// Changed locally; the server has not yet bootstrapped this version.
        case pending
        /// The server bootstrapped this version: its objects are in the file.
        case complete
        /// The session stopped before the version completed.
        case error(SyncError)
        /// Kept for RealmSwift's `switch` statements: this set always shows the newest version,
        /// so it is never superseded.
        case superseded
    }

    private let engine: SessionEngine
    /// The set being built by the running update block; nil outside one.
    private let draft = Mutex<[SubscriptionSpec]?>(nil)
    /// Held for the whole of an update block, so that blocks do not interleave.
    private let updateLock = Mutex<Void>(())

    init(engine: SessionEngine) { self.engine = engine }

    private var stored: [SubscriptionSpec] { (try? engine.ledger.subscriptions().specs) ?? [] }

    /// The subscriptions now (the update block's draft while one runs).
    private var current: [SubscriptionSpec] { draft.withLock { $0 } ?? stored }

    /// How many subscriptions there are.
    public var count: Int { current.count }

    /// The subscription named `name`, if any.
    public func first(named name: String) -> SyncSubscription? {
        current.first { $0.name == name }.map(SyncSubscription.init)
    }

    /// The subscriptions, in the order they were added.
    public func makeIterator() -> IndexingIterator<[SyncSubscription]> {
        current.map(SyncSubscription.init).makeIterator()
    }

    /// Where the newest version is: complete once the server bootstrapped it.
    public var state: State {
        engine.status.read { status in
            if status.completedSubscriptionVersion >= status.subscriptionVersion { return .complete }
            if let error = status.stopError { return .error(error) }
            return .pending
        }
    }

    // MARK: Changing

    /// Adds subscriptions (inside an update block). One with the name of an existing
    /// subscription replaces it; an unnamed one equal to an existing unnamed one is not added
    /// twice.
    public func append<T: Object>(_ subscriptions: QuerySubscription<T>...) {
        changeDraft("append") { draft in
            for subscription in subscriptions {
                let spec = subscription.spec
                if let name = spec.name, let index = draft.firstIndex(where: { $0.name == name }) {
                    draft[index] = spec
                } else if !draft.contains(spec) {
                    draft.append(spec)
                }
            }
        }
    }

    /// Removes the subscription named `name` (inside an update block), if there is one.
    public func remove(named name: String) {
        changeDraft("remove(named:)") { $0.removeAll { $0.name == name } }
    }

    /// Removes every subscription to `type` (inside an update block).
    public func removeAll<T: Object>(ofType type: T.Type) {
        changeDraft("removeAll(ofType:)") { $0.removeAll { $0.className == type.className() } }
    }

    /// Removes every subscription (inside an update block).
    public func removeAll() {
        changeDraft("removeAll()") { $0.removeAll() }
    }

    private func changeDraft(_ name: String, _ change: (inout [SubscriptionSpec]) -> Void) {
        let inUpdate = draft.withLock { draft -> Bool in
            guard draft != nil else { return false }
            change(&draft!)
            return true
        }
        precondition(inUpdate, "SyncSubscriptionSet.\(name) was called outside an update block: call it inside subscriptions.update { }")
    }

    /// Runs `block`, in which `append`/`remove`/`removeAll` change a draft of the set, then
    /// stores the draft as the next version and sends it to the server. Returns once the
    /// server bootstrapped that version (or a later one); a block that changes nothing returns
    /// at once. Throws ``SyncError`` when the file cannot store the set or the session stops
    /// first.
    public func update(_ block: () -> Void) async throws {
        guard let specs = runDraft(block) else { return }
        let version = try await withCheckedThrowingContinuation { continuation in
            engine.post(.updateSubscriptions(specs, continuation))
        }
        try await engine.await(.subscriptions(version: version))
    }

    /// RealmSwift's callback form of ``update(_:)``: `onComplete` gets nil once the server
    /// bootstrapped the change, or the error; it runs on the session's task.
    public func update(_ block: () -> Void, onComplete: (@Sendable ((any Error)?) -> Void)? = nil) {
        guard let specs = runDraft(block) else {
            onComplete?(nil)
            return
        }
        let engine = self.engine
        Task {
            do {
                let version = try await withCheckedThrowingContinuation { continuation in
                    engine.post(.updateSubscriptions(specs, continuation))
                }
                try await engine.await(.subscriptions(version: version))
                onComplete?(nil)
            } catch {
                onComplete?(error)
            }
        }
    }

    /// Runs `block` against a draft; returns the draft if it differs from the stored set.
    private func runDraft(_ block: () -> Void) -> [SubscriptionSpec]? {
        updateLock.withLock { _ in
            let before = stored
            draft.withLock { $0 = before }
            block()
            let after = draft.withLock { $0.take() } ?? before
            return after == before ? nil : after
        }
    }

    /// Runs the configuration's initial-subscriptions block and stores its result as the next
    /// version without waiting for the server (opening a file does not wait on the network).
    func applyInitial(_ block: (SyncSubscriptionSet) -> Void, to ledger: any SessionLedger) throws {
        guard let specs = runDraft({ block(self) }) else { return }
        let version = try ledger.subscriptions().version + 1
        try ledger.setSubscriptions(version: version, specs: specs)
        engine.status.update { $0.subscriptionVersion = version }
    }
}
