// An auto-refreshing instance as its file's version watcher sees it: how to reach the
// instance's executor, and whether a request to refresh is already on its way there.

import Dispatch
import StrataStorage

/// One auto-refreshing instance, as the watcher sees it.
final class RefreshTarget: @unchecked Sendable {
    // @unchecked: `core` is only read in `fire()` and cleared in `detach()`, and both run in the
    // instance's own context (its queue or actor), which runs one thing at a time. `requests`
    // is behind a lock because the watcher thread and committing threads read and set it.
    private unowned(unsafe) var core: DatabaseCore?
    private let schedule: Schedule
    private struct Requests {
        /// A request is on its way to the executor.
        var pending = false
        /// The version the instance is committing itself (0: none), whose request is skipped.
        var ownCommit: UInt64 = 0
    }
    private let requests = Locked(Requests())
    /// Unique while the target is registered (the watcher holds it).
    var id: ObjectIdentifier { ObjectIdentifier(self) }

    enum Schedule {
        case queue(DispatchQueue)
        case mainActor
        /// Weak: the watcher must not keep an instance's actor (and through it the instance)
        /// alive.
        case actor(ConfinedActor)
    }

    init(core: DatabaseCore, schedule: Schedule) {
        self.core = core
        self.schedule = schedule
    }

    /// Asks the instance's executor to refresh it, unless a request is already on its way or
    /// `committed` (the version a commit of this process published; 0 when unknown) is the
    /// instance's own commit: that commit moves the instance and delivers its notifications
    /// itself, so a request would only cost a task, a thread's wake-up and a hop to the
    /// executor to find nothing newer (and, with autorefresh off, post a `.refreshRequired`
    /// for the instance's own change).
    func request(committed: UInt64 = 0) {
        let first = requests.withLock { requests -> Bool in
            if committed != 0 && requests.ownCommit == committed { return false }
            defer { requests.pending = true }
            return !requests.pending
        }
        guard first else { return }
        switch schedule {
        case .queue(let queue): queue.async { self.fire() }
        case .mainActor: Task { @MainActor in self.fire() }
        case .actor(let box):
            // The actor is looked up inside the task, not here: this runs on the watcher
            // thread, and if the reference taken here were the actor's last one, the actor's
            // deinit (closing its instance, perhaps stopping this very watcher) would run on
            // this thread. In the task it runs on the pool, holding nothing.
            Task { await Self.fire(self, box) }
        }
    }

    private static func fire(_ target: RefreshTarget, _ box: ConfinedActor) async {
        guard let actor = box.actor else { return }
        await fire(target, on: actor)
    }

    private static func fire(_ target: RefreshTarget, on actor: isolated any Actor) { target.fire() }

    /// Refreshes the instance on its executor (as a request does, but even when a request is
    /// already on its way), then calls `done` there.
    func deliver(then done: @escaping @Sendable () -> Void) {
        switch schedule {
        case .queue(let queue): queue.async { self.fire(); done() }
        case .mainActor: Task { @MainActor in self.fire(); done() }
        case .actor(let box):
            Task {
                if let actor = box.actor { await Self.fire(self, on: actor) }
                done()
            }
        }
    }

    /// Refreshes the instance now; the caller runs in the instance's context.
    func fireHere() { fire() }

    private func fire() {
        requests.withLock { $0.pending = false }
        core?.refreshIfAutoRefreshing()
    }

    /// Marks the commit of `version` as the instance's own while it runs (0 when it is over),
    /// so that its publication asks nothing of the instance's executor (see `request`).
    func committing(_ version: UInt64) {
        requests.withLock { $0.ownCommit = version }
    }

    /// Whether a request is on its way to the executor (for tests).
    var hasPendingRequest: Bool { requests.withLock { $0.pending } }

    /// Called by the instance (in its context) when it goes away or stops auto-refreshing.
    func detach() {
        core?.handle.watcher.unregister(self)
        core = nil
    }
}
