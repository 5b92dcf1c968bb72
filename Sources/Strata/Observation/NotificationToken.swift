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
    /// The auto-refresh target of the instance the observer is registered with (nil when it
    /// does not refresh itself), through which a writer in another context can have this
    /// observation's change delivered before its write returns (`deliverPendingChanges`).
    private let target: RefreshTarget?
    /// For an observation handed over to another queue (`observe(on: queue)`): the queue, and
    /// the token of the registration made there, once it is made.
    private let handOver: (queue: DispatchQueue, state: Locked<HandOverState>)?

    private enum HandOverState {
        /// Registration is on its way to the queue.
        case pending
        /// Registered on the queue, with this token.
        case attached(NotificationToken)
        /// Invalidated, or the registration found nothing to observe.
        case ended
    }

    init(_ observer: ChangeObserver?, core: DatabaseCore?) {
        self.observer = Locked(observer.map(ObserverReference.init))
        self.home = core.map { ReleaseContext($0.confinement) } ?? .here
        self.target = core?.refreshTarget
        self.handOver = nil
    }

    /// A token for an observation whose registration was sent to `queue` (see `attach`).
    init(handingOverTo queue: DispatchQueue) {
        self.observer = Locked(nil)
        self.home = .here
        self.target = nil
        self.handOver = (queue, Locked(.pending))
    }

    /// A token for an observation that never started (for example, the task was cancelled).
    /// Its `invalidate()` returns false.
    public convenience init() { self.init(nil, core: nil) }

    /// Stops the notifications. Returns whether the token was still active. A callback already
    /// running finishes; no later one starts.
    @discardableResult
    public func invalidate() -> Bool {
        if let handOver {
            let previous = handOver.state.withLock { state -> HandOverState in
                defer { state = .ended }
                return state
            }
            switch previous {
            case .pending: return true  // the registration, when it reaches the queue, is dropped
            case .attached(let registered): return registered.invalidate()
            case .ended: return false
            }
        }
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
    var registeredObserver: ChangeObserver? {
        if let handOver {
            guard case .attached(let registered) = handOver.state.withLock({ $0 }) else { return nil }
            return registered.registeredObserver
        }
        return observer.withLock { $0?.observer }
    }

    /// Whether a handed-over registration has not reached its queue yet and is still wanted.
    var isHandOverPending: Bool {
        guard let handOver, case .pending = handOver.state.withLock({ $0 }) else { return false }
        return true
    }

    /// Completes a handed-over registration with the token made on its queue; if this token was
    /// invalidated meanwhile, that registration is invalidated at once.
    func attach(_ registered: NotificationToken?) {
        guard let handOver else { return }
        let kept = handOver.state.withLock { state -> Bool in
            guard case .pending = state else { return false }
            state = registered.map { .attached($0) } ?? .ended
            return true
        }
        if !kept { registered?.invalidate() }
    }

    /// Whether the observation is registered with (or handed over to) another instance than
    /// the one `own` is the auto-refresh target of.
    func isElsewhere(than own: RefreshTarget?) -> Bool {
        if handOver != nil { return true }
        guard let target else { return false }
        return target !== own
    }

    /// Has the instance this observation is registered with move to the newest version and
    /// deliver, in its own context, then calls `done` (at once when there is nothing to ask).
    func deliverPendingChanges(then done: @escaping @Sendable () -> Void) {
        if let handOver {
            // Behind the registration on the queue (which was sent first), refresh the
            // instance it registered with, here in that instance's context.
            let state = handOver.state
            handOver.queue.async {
                if case .attached(let registered) = state.withLock({ $0 }) { registered.target?.fireHere() }
                done()
            }
            return
        }
        guard let target, observer.withLock({ $0?.observer.state.isActive == true }) else { return done() }
        target.deliver(then: done)
    }
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
