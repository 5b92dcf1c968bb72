import Synchronization

/// Wakes the sessions of an app when its history grows: after an upload through this server,
/// and when the store reports another instance's commit (PostgreSQL `NOTIFY`). A session
/// registers a callback that schedules its catch-up; the callback must not block.
final class CommitNotifier: Sendable {
    private struct Registry {
        var next: UInt64 = 0
        var callbacks: [String: [UInt64: @Sendable (UInt64) -> Void]] = [:]
    }

    private let registry = Mutex(Registry())

    /// Registers `callback` for `app`'s commits; returns the id to unregister with.
    func register(app: String, _ callback: @escaping @Sendable (UInt64) -> Void) -> UInt64 {
        registry.withLock { registry in
            registry.next += 1
            registry.callbacks[app, default: [:]][registry.next] = callback
            return registry.next
        }
    }

    /// Stops calling the callback registered as `id`.
    func unregister(app: String, id: UInt64) {
        registry.withLock { registry in
            registry.callbacks[app]?[id] = nil
            if registry.callbacks[app]?.isEmpty == true { registry.callbacks[app] = nil }
        }
    }

    /// Tells every session of `app` that its history reaches `sequence`.
    func notify(app: String, sequence: UInt64) {
        let callbacks = registry.withLock { Array(($0.callbacks[app] ?? [:]).values) }
        for callback in callbacks { callback(sequence) }
    }
}
