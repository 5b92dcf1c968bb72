// The thread that follows one file's commits for the file's auto-refreshing instances (see
// DatabaseCore+AutoRefresh.swift for the whole mechanism).
//
// It sleeps in the engine's wait for a new version, which a committing process wakes through
// the lock file's futex; this process's own commits reach the instances from the committing
// thread instead (the engine's local-commit observer), so the wait is quiet for them. It starts
// with the first auto-refreshing instance of the file and stops when the last instance of the
// file closes, before the file itself is closed; its thread then parks for the next watcher to
// reuse (WatcherThreads.swift).

import Dispatch
import StrataStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
            // thread switch per commit, a noticeable part of a small durable commit).
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
