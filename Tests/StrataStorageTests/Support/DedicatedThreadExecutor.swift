import Foundation
import Synchronization

/// A task executor that runs every job it is given on one thread of its own, in order, until
/// ``stop()``; a job given after that runs on a new thread, so no job is ever dropped.
///
/// A task that prefers it (`withTaskExecutorPreference`) runs its nonisolated code on that
/// thread, across suspensions: blocking calls there (a child process's exit, a semaphore, a
/// pipe read) hold no thread of the concurrency pool, and objects confined to the thread that
/// made them (a thread-confined `Database`) stay on it. The task keeps its task-locals, so
/// Swift Testing attributes `#expect` failures to the running test as usual.
final class DedicatedThreadExecutor: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var stopped = false
    }
    /// Jobs waiting to run; `wake` is signalled, under its lock, whenever it changes.
    private let queue = Mutex(Queue())
    private let wake = NSCondition()

    /// The key of the thread-dictionary entry that marks the threads of these executors.
    private static let marker = "DedicatedThreadExecutor"

    /// Whether the calling code runs on the thread of one of these executors.
    static var isCurrent: Bool { Thread.current.threadDictionary[marker] != nil }

    /// Starts the thread.
    init() {
        Thread { [self] in
            Thread.current.threadDictionary[Self.marker] = true
            runJobs()
        }.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        wake.lock()
        let queued = queue.withLock { queue -> Bool in
            guard !queue.stopped else { return false }
            queue.jobs.append(job)
            return true
        }
        wake.signal()
        wake.unlock()
        if !queued {
            Thread { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }.start()
        }
    }

    /// Ends the thread once the jobs already given have run.
    func stop() {
        wake.lock()
        queue.withLock { $0.stopped = true }
        wake.signal()
        wake.unlock()
    }

    private func runJobs() {
        while let job = nextJob() {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// The next job, waiting for one; nil once stopped with none left.
    private func nextJob() -> UnownedJob? {
        wake.lock()
        defer { wake.unlock() }
        while true {
            let (job, stopped) = queue.withLock { queue -> (UnownedJob?, Bool) in
                queue.jobs.isEmpty ? (nil, queue.stopped) : (queue.jobs.removeFirst(), false)
            }
            if job != nil || stopped { return job }
            wake.wait()
        }
    }
}
