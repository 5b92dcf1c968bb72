// Versions: each instance reads one version of the file until it moves to a newer one —
// explicitly (`refresh()`, `asyncRefresh()`), at the start of a write, or by auto-refresh on its
// executor (AutoRefresh.swift). Every move ends in `didRefresh(from:to:)`.

import StrataStore
import StrataStorage
import Foundation

extension DatabaseCore {
    /// Registers an actor-, main-actor- or queue-confined instance with its file's watcher.
    func startAutoRefresh() {
        let schedule: RefreshTarget.Schedule
        switch confinement {
        case .queue(let queue, _): schedule = .queue(queue)
        case .mainActor: schedule = .mainActor
        case .actor(let box): schedule = .actor(box)
        case .thread, .frozen: return
        }
        let target = RefreshTarget(core: self, schedule: schedule)
        refreshTarget = target
        handle.watcher.register(target, reading: session.version)
    }

    /// Called on the instance's executor after another commit was published.
    func autoRefresh() {
        let moved = autorefresh && !isInvalidated && !isFrozen && !session.isInWriteTransaction && refreshNow()
        if !autorefresh && !isInvalidated && !isFrozen { notifyRefreshRequired() }
        autoRefreshProbe?(moved)
    }

    /// Moves to the newest version; returns whether the version changed.
    @discardableResult
    func refreshNow() -> Bool {
        guard !isInvalidated, !session.isInWriteTransaction else { return false }
        // Inside an async write's block after a grouped commit that chained: commit the chain
        // first (its engine transaction is still open).
        if session.hasChainedWrites { asyncWrites.finishChain() }
        let old = session.version
        guard (try? session.refresh()) == true else { return false }
        didRefresh(from: old, to: session.version)
        return true
    }

    /// The hook after this instance moved from version `old` to the newer `new`, in the
    /// instance's own context (thread, queue or actor). It is called after `refresh()`,
    /// `asyncRefresh()`, an auto-refresh (on the instance's executor, right after the move),
    /// reopening a cached instance, and when a write transaction begins on a newer version than
    /// the instance read (then inside the just-opened write transaction). It is not called for
    /// the instance's own commits, which know their change set.
    ///
    /// Change notifications (issue 6) hang here: `session.changes(since: old)` gives what
    /// changed between the two versions. Handlers run in registration order; a handler may
    /// read the database but must not refresh it.
    func didRefresh(from old: UInt64, to new: UInt64) {
        for handler in refreshHandlers { handler(old, new) }
        // Notifications never run inside a write transaction: a move made by beginWrite is
        // reported with the transaction's own commit (the notifier diffs from what each
        // observer last saw).
        if !session.isInWriteTransaction { didAdvance(from: old, to: new) }
    }

    /// After a write transaction began: enforces the limit on pinned versions, then reports
    /// the move to the newest version.
    func didBeginWrite(from old: UInt64) throws(Database.Error) {
        if let limit = configuration.maximumNumberOfActiveVersions, limit > 0 {
            let after = activeVersionsAfterCommit()
            if after > Int(limit) {
                session.rollback()
                throw Database.Error(.tooManyActiveVersions, """
                    Committing would leave \(after) versions of \(configuration.path) pinned, more than the \
                    configuration's maximumNumberOfActiveVersions (\(limit)). Release frozen objects, results and \
                    databases you no longer need, refresh or invalidate instances that stay on old versions, or raise the limit.
                    """, path: configuration.path)
            }
        }
        let new = session.version
        if new != old { didRefresh(from: old, to: new) }
    }

    /// How many versions will be pinned once the open write commits: every reader's pin in
    /// every process, except this instance's, which moves to the new version.
    func activeVersionsAfterCommit() -> Int {
        var pins = session.store.engine.readerPins
        if let own = session.pinnedVersion, let index = pins.firstIndex(of: own) { pins.remove(at: index) }
        var versions = Set(pins)
        versions.insert(session.store.engine.latestVersion + 1)
        return versions.count
    }

    /// Stops a write to a frozen instance.
    func frozenWrite(_ operation: String) -> Never {
        fatalError("""
            Cannot modify frozen data: \(operation) on a frozen database, object or collection. Frozen data never \
            changes; call thaw() to get the live version in this context, and write to that in a write transaction.
            """)
    }

    /// Runs a read of a frozen instance under its lock; a live instance's reads take no lock.
    @inline(__always)
    func withReadLock<R>(_ body: () throws -> R) rethrows -> R {
        guard let frozenLock else { return try body() }
        return try frozenLock.withLock(body)
    }

    /// The live instance for this instance's configuration in the caller's context: the
    /// current thread, or `isolation` when the caller is isolated to an actor.
    func liveCore(isolation: (any Actor)?) -> DatabaseCore {
        let confinement: Confinement
        if let isolation {
            confinement = .isolated(to: isolation)
        } else {
            confinement = .thread(pthread_self())
        }
        do {
            return try DatabaseCore.open(configuration, confinement)
        } catch {
            fatalError("thaw(): could not open \(configuration.path) in this context: \(error)")
        }
    }
}

extension Database {
    /// Whether the instance moves to each new version on its own, soon after any commit (in
    /// this process or another). On by default.
    ///
    /// Only instances with an executor to run the refresh on follow commits: those isolated to
    /// an actor or the main actor, and those confined to a serial dispatch queue. The refresh
    /// runs on that executor between other work, never inside a write transaction, and no
    /// thread polls: one watcher thread per open file sleeps until a commit wakes it. A
    /// thread-confined instance moves only when you call `refresh()` or begin a write.
    /// Setting this to true on a frozen database is a programming error.
    public var autorefresh: Bool {
        get { core.isFrozen ? false : core.autorefresh }
        nonmutating set {
            core.verify("autorefresh")
            require(!(core.isFrozen && newValue), "Auto-refresh cannot be enabled on a frozen database; frozen data never changes. Use thaw() to get a live database.")
            core.autorefresh = newValue
        }
    }

    /// Moves the instance to the newest version and returns whether its version changed
    /// (false when it was already up to date). Objects, results and lists then read the new
    /// version. Not allowed inside a write transaction or on a frozen database.
    @discardableResult
    public func refresh() -> Bool {
        core.verify("refresh()")
        require(!core.isFrozen, "Cannot refresh a frozen database: frozen data never changes. Use thaw() to get a live database, or freeze() again for a newer snapshot.")
        require(!isInWriteTransaction, "refresh() cannot be called inside a write transaction.")
        return core.refreshNow()
    }

    /// Moves an actor-isolated (or main-actor) instance to the newest version without blocking,
    /// and returns whether its version changed: false when it was already up to date, and
    /// false without refreshing when the task is cancelled.
    @discardableResult
    public func asyncRefresh(_isolation actor: isolated any Actor = #isolation) async -> Bool {
        guard let confined = core.confinement.actor else {
            if core.isFrozen {
                fatalError("Cannot refresh a frozen database: frozen data never changes. Use thaw() to get a live database, or freeze() again for a newer snapshot.")
            }
            fatalError("asyncRefresh() can only be used on databases isolated to an actor or the main actor; use refresh() on thread- and queue-confined databases.")
        }
        require(confined === actor || (actor === MainActor.shared && confined === MainActor.shared), """
            asyncRefresh() was called from \(type(of: actor)), but the database is isolated to \(core.confinement.description). \
            Call it from code isolated to that actor.
            """)
        core.verify("asyncRefresh()")
        require(!isInWriteTransaction, "asyncRefresh() cannot be called inside a write transaction.")
        if Task.isCancelled { return false }
        return core.refreshNow()
    }

    /// The number of versions of the file that snapshots currently pin: live instances (one
    /// version each), frozen snapshots, and readers in other processes. Versions shared by
    /// several snapshots count once. Each pinned version keeps the pages it can reach from
    /// reuse; see `Configuration.maximumNumberOfActiveVersions`.
    public var numberOfActiveVersions: Int { core.session.store.engine.pinnedVersions.count }
}
