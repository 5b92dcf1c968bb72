import Dispatch
import StrataStorage
import Synchronization

/// Keeps a change observation alive. Notifications stop when you call `invalidate()` or when
/// the token is released, so keep it (in a property, usually) for as long as you want them.
///
/// Tokens are `Sendable`: you may keep, pass and invalidate them anywhere. An observation
/// registered on another actor (`observe(on: actor)`) hands its token back to the caller.
public final class NotificationToken: Sendable {
    /// The registration, dropped on `invalidate()`. The observer it holds is used only in the
    /// observed database instance's context; here it is only kept alive or released.
    private let observer: Locked<ObserverReference?>
    /// Where the observer is released: in its instance's context, which the observer may be
    /// the last to keep alive (an instance is opened and closed in its own context only).
    private let home: ReleaseContext

    init(_ observer: ChangeObserver?, core: DatabaseCore?) {
        self.observer = Locked(observer.map(ObserverReference.init))
        self.home = core.map { ReleaseContext($0.confinement) } ?? .here
    }

    /// A token for an observation that never started (for example, the task was cancelled).
    /// Its `invalidate()` returns false.
    public convenience init() { self.init(nil, core: nil) }

    /// Stops the notifications. Returns whether the token was still active. A callback already
    /// running finishes; no later one starts.
    @discardableResult
    public func invalidate() -> Bool {
        let dropped = observer.withLock { reference -> ObserverReference? in
            defer { reference = nil }
            return reference
        }
        guard let dropped else { return false }
        dropped.observer.state.stop()
        home.release(dropped)
        return true
    }

    deinit { invalidate() }

    /// The observer, for `write(withoutNotifying:)` (used in the observer's own context).
    var registeredObserver: ChangeObserver? { observer.withLock { $0?.observer } }
}

/// Holds an observer inside a token. Only the observed instance's context uses the observer;
/// other threads only retain or release it (atomic reference counting), so handing the
/// reference around is safe.
struct ObserverReference: @unchecked Sendable {
    let observer: ChangeObserver
}

/// Where a dropped observer is released.
enum ReleaseContext: Sendable {
    case here
    case queue(DispatchQueue)
    /// Weak, like the instance's own reference: an actor may keep its tokens.
    case actor(ConfinedActor)

    init(_ confinement: Confinement) {
        switch confinement {
        // A thread has no way to be handed work; the observer goes where the token goes.
        case .thread, .frozen: self = .here
        case .queue(let queue, _): self = .queue(queue)
        case .mainActor: self = .actor(ConfinedActor(MainActor.shared))
        case .actor(let box): self = .actor(box)
        }
    }

    func release(_ reference: ObserverReference) {
        switch self {
        case .here:
            return
        case .queue(let queue):
            let box = ReleaseBox(reference)
            queue.async { box.empty() }
        case .actor(let confined):
            let box = ReleaseBox(reference)
            // Looked up in the task so that, if this is the actor's last reference, its deinit
            // runs on the pool rather than wherever the token went away. An actor that is gone
            // can no longer use the observer: it is released in the task then.
            Task {
                guard let actor = confined.actor else { return box.empty() }
                await ReleaseBox.empty(box, on: actor)
            }
        }
    }
}

/// Carries an observer to its context to be released there.
final class ReleaseBox: @unchecked Sendable {  // emptied once, in the observer's context
    private var reference: ObserverReference?
    init(_ reference: ObserverReference) { self.reference = reference }
    func empty() { reference = nil }
    static func empty(_ box: ReleaseBox, on actor: isolated any Actor) { box.empty() }
}
