import Synchronization

/// Wakes the sessions of an app when its history grows: after an upload through this server,
/// and when the store reports another instance's commit (PostgreSQL `NOTIFY`). A session
/// registers a callback that schedules its catch-up; the callback must not block.
final class CommitNotifier: Sendable {
    /// What a session learns of a commit.
    struct Notice: Sendable {
        /// The app's newest sequence after the commit.
        var sequence: UInt64
        /// The client that sent the commit's changesets and the classes they changed; nil
        /// when unknown (a commit another instance announced through the store), which
        /// concerns every session.
        var origin: Origin?
    }

    /// Who sent a commit, and what it changed.
    struct Origin: Sendable {
        var clientID: UInt64
        var classes: Set<String>
    }

    private struct Registry {
        var next: UInt64 = 0
        var callbacks: [String: [UInt64: @Sendable (Notice) -> Void]] = [:]
        /// Per app, the sequences this instance announced itself whose store announcement has
        /// not come back yet (PostgreSQL's `NOTIFY` reaches the instance that sent it too).
        var announced: [String: Set<UInt64>] = [:]
    }

    /// The most own announcements remembered per app; beyond it the older ones are forgotten
    /// (a store announcement lost with a connection, or one that arrived before the upload's
    /// own, never removes its entry). Forgetting one costs only a redundant wake-up of every
    /// session if its store announcement still comes.
    private static let announcedLimit = 4_096

    private let registry = Mutex(Registry())

    /// Registers `callback` for `app`'s commits; returns the id to unregister with.
    func register(app: String, _ callback: @escaping @Sendable (Notice) -> Void) -> UInt64 {
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

    /// Tells every session of `app` that an upload through this instance brought its history
    /// to `sequence`.
    func notify(app: String, sequence: UInt64, origin: Origin) {
        let callbacks = registry.withLock { registry in
            var announced = registry.announced[app, default: []]
            announced.insert(sequence)
            if announced.count > Self.announcedLimit {
                // Keeps the newer half of the window: at most half the limit stay, so this runs
                // once per that many uploads.
                announced = announced.filter { $0 > sequence - min(sequence, UInt64(Self.announcedLimit / 2)) }
            }
            registry.announced[app] = announced
            return Array((registry.callbacks[app] ?? [:]).values)
        }
        for callback in callbacks { callback(Notice(sequence: sequence, origin: origin)) }
    }

    /// Tells every session of `app` that the store reports its history at `sequence`, unless
    /// it is this instance's own upload coming back (already announced with its origin).
    func notifyFromStore(app: String, sequence: UInt64) {
        let callbacks = registry.withLock { registry -> [@Sendable (Notice) -> Void] in
            if registry.announced[app]?.remove(sequence) != nil { return [] }
            return Array((registry.callbacks[app] ?? [:]).values)
        }
        for callback in callbacks { callback(Notice(sequence: sequence, origin: nil)) }
    }
}
