import StrataStorage

/// Keeps a change observation alive. Notifications stop when you call `invalidate()` or when
/// the token is released, so keep it (in a property, usually) for as long as you want them.
///
/// Tokens are `Sendable`: you may keep, pass and invalidate them anywhere. An observation
/// registered on another actor (`observe(on: actor)`) hands its token back to the caller.
public final class NotificationToken: Sendable {
    /// The registration, dropped on `invalidate()`. The observer it holds is used only in the
    /// observed database instance's context; here it is only kept alive or released.
    private let observer: Locked<ObserverReference?>

    init(_ observer: ChangeObserver?) {
        self.observer = Locked(observer.map(ObserverReference.init))
    }

    /// A token for an observation that never started (for example, the task was cancelled).
    /// Its `invalidate()` returns false.
    public convenience init() { self.init(nil) }

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
        return true
    }

    deinit { observer.withLock { $0?.observer.state.stop() } }

    /// The observer, for `write(withoutNotifying:)` (used in the observer's own context).
    var registeredObserver: ChangeObserver? { observer.withLock { $0?.observer } }
}

/// Holds an observer inside a token. Only the observed instance's context uses the observer;
/// other threads only retain or release it (atomic reference counting), so handing the
/// reference around is safe.
struct ObserverReference: @unchecked Sendable {
    let observer: ChangeObserver
}

/// Whether an observation is still wanted, readable from any thread.
final class ObservationState: Sendable {
    private let active = Locked(true)
    var isActive: Bool { active.withLock { $0 } }
    func stop() { active.withLock { $0 = false } }
}
