// Helpers for tests whose callbacks run in another context (a queue, an actor, the main
// actor): an inbox the callbacks post to and the test waits on, and a marker that tells
// whether code runs on a given queue.

import Dispatch
import Foundation

/// What callbacks in other contexts reported, in order; `next()` waits for the next report
/// without sleeping (a continuation resumed by `post`).
final class Inbox: @unchecked Sendable {
    // @unchecked: every stored property is touched only while `lock` is held.
    private let lock = NSLock()
    private var items: [String] = []
    private var waiter: CheckedContinuation<String, Never>?

    func post(_ item: String) {
        lock.lock()
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume(returning: item)
            return
        }
        items.append(item)
        lock.unlock()
    }

    /// The next report, waiting for it if there is none yet.
    func next() async -> String {
        await withCheckedContinuation { continuation in
            lock.lock()
            if !items.isEmpty {
                let item = items.removeFirst()
                lock.unlock()
                continuation.resume(returning: item)
                return
            }
            waiter = continuation
            lock.unlock()
        }
    }

    /// The reports not taken yet (without waiting).
    var unread: [String] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}

/// Tells whether the caller runs on one queue.
final class QueueMarker: @unchecked Sendable {
    // @unchecked: immutable after init (the key is only read).
    private let key = DispatchSpecificKey<UInt8>()
    init(_ queue: DispatchQueue) { queue.setSpecific(key: key, value: 1) }
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) != nil }
}
