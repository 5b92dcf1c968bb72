// Auto-refresh: actor-, main-actor- and queue-confined instances move to each new version on
// their own executor soon after any commit, in this process or another, without polling.
//
// One watcher thread per open file (per `StoreHandle`) sleeps in the engine's wait for a new
// version, which a committing process wakes through the lock file's futex. The wait is quiet
// for this process's own commits: those call the engine's local-commit observer on the
// committing thread instead, which does what the watcher does on waking, without the wake-up
// of a thread. When it wakes (or the observer runs), it asks every registered instance's
// executor to refresh: `DispatchQueue.async` for a queue, a
// main-actor task for the main actor, a task isolated to the actor for an actor. The refresh
// itself runs there, in the instance's context, so it never races the instance's own use;
// it is skipped while the instance is in a write transaction (a write always starts from the
// newest version anyway, and its commit moves the instance on). Thread-confined instances have
// no executor to call back on: they move when `refresh()` is called or a write begins.
//
// After an instance moves, `DatabaseCore.reportAdvance(from:to:)` runs on its executor: the point
// where change notifications are delivered.
//
// The watcher starts with the first auto-refreshing instance of the file and stops (its `run()`
// returned) when the last instance of the file closes, before the file itself is closed. Its
// thread then parks for the next watcher to reuse (WatcherThreads.swift).

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

    /// The watcher's request, on the instance's executor after another commit was published:
    /// moves the instance when `autorefresh` is on, else tells its database observers that a
    /// refresh is required.
    func refreshIfAutoRefreshing() {
        let moved = autorefresh && !hasReleasedVersion && !isFrozen && !session.isInWriteTransaction && advanceToLatest()
        if !autorefresh && !hasReleasedVersion && !isFrozen { notifyRefreshRequired() }
        autoRefreshProbe?(moved)
    }
}
