// Where a database instance may be used: the thread that opened it, a serial dispatch queue,
// or an actor. Checked where work enters the API, with a message that says what to do.

import Foundation
import Dispatch

enum Confinement {
    case thread(pthread_t)
    case queue(DispatchQueue, DispatchSpecificKey<UInt8>)
    case mainActor
    /// Held weakly (see `ConfinedActor`): an actor may store its own instance.
    case actor(ConfinedActor)
    /// A frozen snapshot: usable from any thread, queue or actor.
    case frozen

    /// Identifies the context for the instance cache.
    var cacheKey: String {
        switch self {
        case .thread(let thread): "thread:\(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(bitPattern: UInt(thread)))))"
        case .queue(let queue, _): "queue:\(ObjectIdentifier(queue).hashValue)"
        case .mainActor: "main"
        case .actor(let box): "actor:\(box.id.hashValue)"
        case .frozen: "frozen"
        }
    }

    /// The confinement of an instance opened synchronously on the calling thread: the main
    /// actor on the main thread or the main queue (the main actor's executor; RealmSwift
    /// binds a main-thread instance to the main run loop), else the thread itself, which has
    /// no way to be handed work.
    static var callingThread: Confinement {
        isOnMainQueue ? .mainActor : .thread(pthread_self())
    }

    /// Whether the caller runs on the main thread or on the main queue. On Linux, once
    /// `dispatchMain()` runs (as it does under an async `@main`), the main queue, and with it the
    /// main actor, is drained by a worker thread rather than the main thread.
    static var isOnMainQueue: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) != nil
    }

    /// The confinement of an instance opened on `queue` (the caller runs on it): the main
    /// queue is the main actor's, so it gets `.mainActor` and shares the main thread's instance.
    static func opened(on queue: DispatchQueue) -> Confinement {
        if queue.isMainQueue { return .mainActor }
        let key = DispatchSpecificKey<UInt8>()
        queue.setSpecific(key: key, value: 1)
        return .queue(queue, key)
    }

    /// An actor confinement for `actor` (the main actor gets `.mainActor`).
    static func isolated(to actor: any Actor) -> Confinement {
        actor === MainActor.shared ? .mainActor : .actor(ConfinedActor(actor))
    }

    /// Whether an instance with this confinement serves a caller in `other`: the same thread,
    /// queue or actor. An actor's identity alone is not enough once it may have been
    /// deallocated and its address reused, so the live actor is compared.
    func isSame(as other: Confinement) -> Bool {
        switch (self, other) {
        case (.actor(let mine), .actor(let theirs)):
            guard let actor = mine.actor, let requested = theirs.actor else { return false }
            return actor === requested
        default:
            return cacheKey == other.cacheKey
        }
    }

    /// The actor the instance is isolated to, if it is isolated to one that still exists.
    var actor: (any Actor)? {
        switch self {
        case .mainActor: MainActor.shared
        case .actor(let box): box.actor
        default: nil
        }
    }

    var description: String {
        switch self {
        case .thread: "the thread that opened it"
        case .queue(let queue, _): "the dispatch queue '\(queue.label)'"
        case .mainActor: "the main actor"
        case .actor(let box): "the actor \(box.typeName)"
        case .frozen: "a frozen snapshot"
        }
    }

    /// Whether the caller is running in this context (for MainActor and actors only as far as
    /// can be told without trapping; `verify` finishes the job).
    func verify(_ operation: @autoclosure () -> String, isolation: (any Actor)? = nil) {
        switch self {
        case .thread(let thread):
            if pthread_equal(thread, pthread_self()) == 0 { fail(operation()) }
        case .queue(_, let key):
            if DispatchQueue.getSpecific(key: key) == nil { fail(operation()) }
        case .mainActor:
            if DispatchQueue.getSpecific(key: mainQueueKey) == nil && !Thread.isMainThread { fail(operation()) }
        case .actor(let box):
            if let isolation {
                if box.isSame(as: isolation) { return }
                fail(operation())
            }
            box.verifyIsolated("Database accessed from outside the actor it is confined to (\(box.typeName))")
        case .frozen:
            return
        }
    }

    private func fail(_ operation: String) -> Never {
        fatalError("""
            Database accessed from the wrong context: \(operation) outside \(description), \
            which the database instance is confined to. Open a separate Database in each thread, queue or actor \
            (the same configuration shares the file), and pass primary keys (or other Sendable values) across to look the objects up again there.
            """)
    }
}

/// Marks the main queue so that main-actor confinement can be checked without trapping.
let mainQueueKey: DispatchSpecificKey<UInt8> = {
    let key = DispatchSpecificKey<UInt8>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    return key
}()

extension DispatchQueue {
    /// Whether this is the main queue, told by its mark: on Linux each use of
    /// `DispatchQueue.main` makes another wrapper of it, so identity does not tell.
    var isMainQueue: Bool { getSpecific(key: mainQueueKey) != nil }
}
