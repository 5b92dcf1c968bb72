// The threads version watchers (VersionWatcher.swift) run on. A thread whose watcher has
// stopped parks here for a while, and the next watcher to start takes it over, so that a
// program that opens and closes a database repeatedly does not create a thread (clone, stack
// mapping, the new thread's first faults) on every open, a large part of opening a file and
// reading one object.
//
// What a watcher promises holds all the same: a watcher's `run()` starts when its first
// instance registers and has returned (and the thread has dropped its reference to the watcher) before
// `stop()` returns, so the file is never touched after it is closed. A parked thread refers to
// no watcher and no file; it ends after `idleLifetime` without work, or at once when more than
// `maximumParked` threads are parked already.

import Dispatch
import StrataStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process-wide set of parked threads for version watchers.
enum WatcherThreads {
    /// How long a parked thread waits for a new watcher before it ends.
    static let idleLifetime: DispatchTimeInterval = .seconds(10)
    /// How many threads may be parked at once.
    static let maximumParked = 4

    /// One parked thread: the watcher it is handed (set before `wake` is signalled).
    private final class Parked: @unchecked Sendable {
        // @unchecked: `job` is written once by the thread that takes this entry out of `parked`
        // (under its lock) and read by the parked thread after `wake`, which orders the two.
        var job: Unmanaged<VersionWatcher>?
        let wake = DispatchSemaphore(value: 0)
    }

    private static let parked = Locked<[Parked]>([])

    /// Runs `watcher.run()` on a parked thread, or on a new one; then signals
    /// `watcher.finished`. Returns false when no thread could be created.
    static func start(_ watcher: VersionWatcher) -> Bool {
        if let thread = parked.withLock({ $0.popLast() }) {
            thread.job = Unmanaged.passRetained(watcher)
            thread.wake.signal()
            return true
        }
        let box = Unmanaged.passRetained(watcher).toOpaque()
        #if canImport(Glibc)
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            WatcherThreads.serve(Unmanaged<VersionWatcher>.fromOpaque(context!))
            return nil
        }, box)
        #else
        var created: pthread_t?
        let result = pthread_create(&created, nil, { context in
            WatcherThreads.serve(Unmanaged<VersionWatcher>.fromOpaque(context))
            return nil
        }, box)
        guard let thread = created else { Unmanaged<VersionWatcher>.fromOpaque(box).release(); return false }
        #endif
        guard result == 0 else {
            Unmanaged<VersionWatcher>.fromOpaque(box).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// A watcher thread's body: runs watchers one after another, parking in between.
    /// Each watcher comes retained (an unmanaged reference, so that exactly when the thread
    /// lets go of it is explicit).
    private static func serve(_ first: Unmanaged<VersionWatcher>) {
        var next: Unmanaged<VersionWatcher>? = first
        while let watcher = next {
            let finished = watcher.takeUnretainedValue().finished
            watcher.takeUnretainedValue().run()
            // The thread's reference goes before `stop()` may return, so the watcher (and the
            // store behind it) never outlives its closing because of a parked thread.
            watcher.release()
            finished.signal()
            next = park()
        }
    }

    /// Waits for a new watcher; nil when the thread should end.
    private static func park() -> Unmanaged<VersionWatcher>? {
        let entry = Parked()
        let accepted = parked.withLock { list -> Bool in
            guard list.count < maximumParked else { return false }
            list.append(entry)
            return true
        }
        guard accepted else { return nil }
        while entry.wake.wait(timeout: .now() + idleLifetime) == .timedOut {
            // Leave unless a watcher took this entry meanwhile (then its signal is coming).
            let left = parked.withLock { list -> Bool in
                guard let index = list.firstIndex(where: { $0 === entry }) else { return false }
                list.remove(at: index)
                return true
            }
            if left { return nil }
        }
        let job = entry.job
        entry.job = nil
        return job
    }
}
