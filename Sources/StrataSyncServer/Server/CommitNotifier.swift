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
        var nextUpload: UInt64 = 0
        /// Per app, this instance's uploads under way (between ``beginUpload(app:)`` and
        /// ``endUpload(app:id:announcing:)``).
        var uploads: [String: Set<UInt64>] = [:]
        /// Per app, store announcements that arrived while uploads of this instance were under
        /// way, each waiting for those uploads to end: it may be one of them coming back before
        /// the upload returned.
        var held: [String: [Held]] = [:]
    }

    private struct Held {
        var sequence: UInt64
        var waitingFor: Set<UInt64>
    }

    /// The most own announcements remembered per app; beyond it the older ones are forgotten
    /// (a store announcement lost with a connection never removes its entry). Forgetting one
    /// costs only a redundant wake-up of every session if its store announcement still comes.
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

    /// Notes that an upload of `app` through this instance is under way; returns its id for
    /// ``endUpload(app:id:announcing:)``, which must follow whatever happens.
    func beginUpload(app: String) -> UInt64 {
        registry.withLock { registry in
            registry.nextUpload += 1
            registry.uploads[app, default: []].insert(registry.nextUpload)
            return registry.nextUpload
        }
    }

    /// Ends upload `id`; when it stored something, `announcing` is the app's newest sequence
    /// after it and its origin, and every session of `app` is told. Store announcements that
    /// waited for this upload are then dropped (this upload coming back) or passed on.
    func endUpload(app: String, id: UInt64, announcing: (sequence: UInt64, origin: Origin)?) {
        let (callbacks, released) = registry.withLock { registry -> ([@Sendable (Notice) -> Void], [UInt64]) in
            registry.uploads[app]?.remove(id)
            if registry.uploads[app]?.isEmpty == true { registry.uploads[app] = nil }
            var echoed = false
            var released: [UInt64] = []
            var stillHeld: [Held] = []
            for var entry in registry.held[app] ?? [] {
                if let announcing, entry.sequence == announcing.sequence {
                    echoed = true
                    continue
                }
                entry.waitingFor.remove(id)
                if entry.waitingFor.isEmpty { released.append(entry.sequence) } else { stillHeld.append(entry) }
            }
            registry.held[app] = stillHeld.isEmpty ? nil : stillHeld
            if let announcing, !echoed {
                var announced = registry.announced[app, default: []]
                announced.insert(announcing.sequence)
                if announced.count > Self.announcedLimit {
                    // Keeps the newer half of the window: at most half the limit stay, so this
                    // runs once per that many uploads.
                    let sequence = announcing.sequence
                    announced = announced.filter { $0 > sequence - min(sequence, UInt64(Self.announcedLimit / 2)) }
                }
                registry.announced[app] = announced
            }
            return (Array((registry.callbacks[app] ?? [:]).values), released)
        }
        if let announcing {
            for callback in callbacks { callback(Notice(sequence: announcing.sequence, origin: announcing.origin)) }
        }
        for sequence in released {
            for callback in callbacks { callback(Notice(sequence: sequence, origin: nil)) }
        }
    }

    /// Tells every session of `app` that the store reports its history at `sequence`, unless
    /// it is this instance's own upload coming back: one already announced with its origin is
    /// dropped, and while uploads are under way it waits for them to end.
    func notifyFromStore(app: String, sequence: UInt64) {
        let callbacks = registry.withLock { registry -> [@Sendable (Notice) -> Void] in
            if registry.announced[app]?.remove(sequence) != nil { return [] }
            if let uploads = registry.uploads[app], !uploads.isEmpty {
                registry.held[app, default: []].append(Held(sequence: sequence, waitingFor: uploads))
                return []
            }
            return Array((registry.callbacks[app] ?? [:]).values)
        }
        for callback in callbacks { callback(Notice(sequence: sequence, origin: nil)) }
    }
}
