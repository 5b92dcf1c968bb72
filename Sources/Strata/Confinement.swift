// Where a database instance may be used: the thread that opened it, a serial dispatch queue,
// or an actor. Checked where work enters the API, with a message that says what to do.

import Foundation
import Dispatch

enum Confinement {
    case thread(pthread_t)
    case queue(DispatchQueue, DispatchSpecificKey<UInt8>)
    case mainActor
    case actor(any Actor)
    /// A frozen snapshot: usable from any thread, queue or actor.
    case frozen

    /// Identifies the context for the instance cache.
    var cacheKey: String {
        switch self {
        case .thread(let thread): "thread:\(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(bitPattern: UInt(thread)))))"
        case .queue(let queue, _): "queue:\(ObjectIdentifier(queue).hashValue)"
        case .mainActor: "main"
        case .actor(let actor): "actor:\(ObjectIdentifier(actor).hashValue)"
        case .frozen: "frozen"
        }
    }

    var actor: (any Actor)? {
        switch self {
        case .mainActor: MainActor.shared
        case .actor(let actor): actor
        default: nil
        }
    }

    var description: String {
        switch self {
        case .thread: "the thread that opened it"
        case .queue(let queue, _): "the dispatch queue '\(queue.label)'"
        case .mainActor: "the main actor"
        case .actor(let actor): "the actor \(type(of: actor))"
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
        case .actor(let actor):
            if let isolation {
                if isolation === actor { return }
                fail(operation())
            }
            actor.preconditionIsolated("Database accessed from outside the actor it is confined to (\(type(of: actor)))")
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

/// Stops with `message` when `condition` is false. Unlike `precondition`, the message is printed
/// in optimized builds too: misuse must say what happened and what to do in a release app.
@inline(__always)
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fatalError(message(), file: file, line: line) }
}
