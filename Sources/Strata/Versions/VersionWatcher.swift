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
// After an instance moves, `DatabaseCore.didRefresh(from:to:)` runs on its executor: the point
// where change notifications are delivered.
//
// The watcher starts with the first auto-refreshing instance of the file and stops (its `run()`
// returned) when the last instance of the file closes, before the file itself is closed. Its
// thread then parks for the next watcher to reuse (WatcherThreads.swift).

import Dispatch
import StrataStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    private func fire() {
        requests.withLock { $0.pending = false }
        core?.autoRefresh()
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

/// The thread that follows one file's commits for its auto-refreshing instances.
final class VersionWatcher: @unchecked Sendable {
    // @unchecked: the mutable state is in `state`, behind a lock; `engine` is thread-safe.
    private let engine: StorageEngine
    private struct State {
        var targets: [ObjectIdentifier: RefreshTarget] = [:] {
            didSet { list = Array(targets.values) }
        }
        /// `targets`' values, kept so that each commit's request makes no array.
        var list: [RefreshTarget] = []
        /// Whether the thread was started (WatcherThreads.swift); set before it is, so that a
        /// `stop()` racing the start still waits for `finished`.
        var started = false
        var stopping = false
        /// The version the first instance read when it registered: the thread's first wait is
        /// for anything newer, so a commit published since that instance opened still wakes
        /// it at once, and an open with nothing new asks no executor to refresh.
        var firstSeen: UInt64 = 0
        /// The newest version the local commit observer announced (`requestAll`).
        var announced: UInt64 = 0
    }
    private let state = Locked(State())
    /// Signalled once `run()` has returned and the thread has let go of the watcher.
    let finished = DispatchSemaphore(value: 0)

    init(engine: StorageEngine) { self.engine = engine }

    /// Adds an instance, which reads `version`; starts the thread on the first.
    func register(_ target: RefreshTarget, reading version: UInt64) {
        let start = state.withLock { state -> Bool in
            state.targets[target.id] = target
            guard !state.started, !state.stopping else { return false }
            state.started = true
            state.firstSeen = version
            return true
        }
        if start {
            // This process's own commits reach the targets from the committing thread: the
            // thread below waits quietly, so they do not pay for waking it (a futex wake and a
            // thread switch per commit, ~8 µs of a one-object durable commit here).
            engine.setLocalCommitObserver { [weak self] version in self?.requestAll(committed: version) }
            startThread()
        }
    }

    /// Asks every registered instance to refresh (each at most once until it has), but the
    /// one that committed `committed` itself.
    private func requestAll(committed: UInt64) {
        let targets = state.withLock { state -> [RefreshTarget]? in
            state.announced = max(state.announced, committed)
            return state.stopping ? nil : state.list
        }
        guard let targets else { return }
        for target in targets { target.request(committed: committed) }
    }

    func unregister(_ target: RefreshTarget) {
        state.withLock { _ = $0.targets.removeValue(forKey: target.id) }
    }

    private func startThread() {
        // Without a thread, instances still move on refresh() and at each write; `stop()`
        // then has nothing to wait for.
        if !WatcherThreads.start(self) { finished.signal() }
    }

    func run() {
        var seen = state.withLock { $0.firstSeen }
        while true {
            let newest = engine.waitForVersion(newerThan: seen, quiet: true, until: { self.state.withLock { $0.stopping } })
            let targets = state.withLock { state -> [RefreshTarget]? in
                state.stopping ? nil : state.list
            }
            guard let targets else { return }
            // Versions up to the last one the local commit observer announced need nothing
            // more: it asked every instance but the committing one to move to at least that
            // version, and the committing one moved itself. The wait is quiet for this
            // process's commits, but its first round (the thread may start after the first
            // of them) or a spurious wake-up can still return one.
            let announced = state.withLock { $0.announced }
            seen = newest
            if newest > announced { for target in targets { target.request() } }
        }
    }

    /// Stops the thread and waits for it to end. Called when the file's last instance closes,
    /// before the engine is closed.
    func stop() {
        let started = state.withLock { state -> Bool in
            state.stopping = true
            return state.started
        }
        guard started else { return }
        engine.setLocalCommitObserver(nil)
        engine.wakeVersionWaiters()
        finished.wait()
    }
}
