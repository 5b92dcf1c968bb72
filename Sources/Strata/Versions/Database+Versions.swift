// The public face of versions: auto-refresh, explicit refreshes and the count of pinned
// versions (DatabaseCore+Versions.swift moves the instance).

import StrataStore

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
        return core.advanceToLatest()
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
        return core.advanceToLatest()
    }

    /// The number of versions of the file that snapshots currently pin: live instances (one
    /// version each), frozen snapshots, and readers in other processes. Versions shared by
    /// several snapshots count once. Each pinned version keeps the pages it can reach from
    /// reuse; see `Configuration.maximumNumberOfActiveVersions`.
    public var numberOfActiveVersions: Int { core.session.store.engine.pinnedVersions.count }
}
