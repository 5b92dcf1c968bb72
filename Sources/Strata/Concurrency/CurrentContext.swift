// Finding the database instance of the caller's context without being told which it is, for
// `@ThreadSafe`, whose getter has no parameters: the queue a queue-confined instance was opened
// on is marked, actors that opened an instance are remembered, and the runtime says whether one
// of them is the current executor.

import Foundation
import Dispatch
import StrataStorage

enum CurrentContext {
    /// Marks a queue that a queue-confined instance was opened on with its confinement.
    private final class QueueMark: @unchecked Sendable {  // immutable after init
        weak var queue: DispatchQueue?
        let key: DispatchSpecificKey<UInt8>
        init(_ queue: DispatchQueue, _ key: DispatchSpecificKey<UInt8>) {
            self.queue = queue
            self.key = key
        }
    }
    private static let queueMark = DispatchSpecificKey<QueueMark>()

    private struct WeakActor: @unchecked Sendable {  // only compared and read under the lock
        weak var actor: (any Actor)?
    }
    private static let actors = Locked<[ObjectIdentifier: WeakActor]>([:])

    /// Remembers where an instance was opened, so that `confinement()` can find it later.
    static func register(_ confinement: Confinement) {
        switch confinement {
        case .queue(let queue, let key):
            queue.setSpecific(key: queueMark, value: QueueMark(queue, key))
        case .actor(let box):
            guard let actor = box.actor else { return }
            // The live actors seen while pruning are released after the lock: a release that
            // is an actor's last runs its deinit, which must not run inside the lock.
            let seen = actors.withLock { actors -> [any Actor] in
                var alive: [any Actor] = []
                actors = actors.filter { entry in
                    guard let actor = entry.value.actor else { return false }
                    alive.append(actor)
                    return true
                }
                actors[box.id] = WeakActor(actor: actor)
                return alive
            }
            withExtendedLifetime(seen) {}
        default:
            break
        }
    }

    /// The context the caller runs in: a marked queue, a thread with an open instance of
    /// `configuration`, an actor that opened an instance, the main thread, or (outside any
    /// task) the current thread. Nil inside a task isolated to no
    /// actor Strata knows.
    static func confinement(for configuration: Database.Configuration) -> Confinement? {
        if let mark = DispatchQueue.getSpecific(key: queueMark), let queue = mark.queue {
            return .queue(queue, mark.key)
        }
        // A thread-confined instance opened on this thread (a test's or a thread's own).
        let thread = Confinement.thread(pthread_self())
        if DatabaseCore.cached(configuration, thread) != nil { return thread }
        let known = actors.withLock { $0.values.compactMap(\.actor) }
        for actor in known where ExecutorIdentity(actor.unownedExecutor).isCurrent { return .isolated(to: actor) }
        if Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) != nil
            || ExecutorIdentity(MainActor.shared.unownedExecutor).isCurrent {
            return .mainActor
        }
        let inTask = withUnsafeCurrentTask { $0 != nil }
        return inTask ? nil : .thread(pthread_self())
    }
}
