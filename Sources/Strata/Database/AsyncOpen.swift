// Opening in the background with a callback, as RealmSwift's `Realm.asyncOpen` does: the
// file's own work (creating it, replaying its commit log, migrating, compacting) runs on a
// background thread, and the callback gets an instance confined to its queue.

public import Dispatch
import Foundation

/// A background open started by ``Database/asyncOpen(configuration:callbackQueue:callback:)``.
/// `cancel()` keeps the callback from running, if it has not run yet.
public struct AsyncOpenTask: Sendable {
    private let cancelled = CancelFlag()

    /// Keeps the callback from running (when it has not started yet). The file may still be
    /// opened (and migrated) in the background.
    public func cancel() { cancelled.set() }

    var isCancelled: Bool { cancelled.isSet }
}

/// A flag set once, read from any thread.
private final class CancelFlag: @unchecked Sendable {
    // @unchecked: `value` is only read and written under `lock`.
    private let lock = NSLock()
    private var value = false

    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

extension Database {
    /// Opens the database in the background, then calls `callback` on `callbackQueue` with an
    /// instance confined to that queue (or with the error that kept it from opening). Creating
    /// the file, replaying its commit log, migrating and compacting happen on a background
    /// thread, so a slow migration does not hold up `callbackQueue`. RealmSwift's
    /// `Realm.asyncOpen`; there is nothing to download, so `OpenBehavior` has no counterpart.
    ///
    /// `callbackQueue` must be serial. The default, the main queue, only runs its work where
    /// the main thread services it (an app's run loop, or `dispatchMain()` in a tool). The
    /// callback is `@Sendable` because it runs on `callbackQueue`, which Swift 6 cannot know is
    /// the caller's context. Code on actors opens with `try await Database(configuration:actor:)`
    /// instead, which is not confined to a queue.
    @discardableResult
    public static func asyncOpen(configuration: Configuration = .defaultConfiguration, callbackQueue: DispatchQueue = .main,
                                 callback: @escaping @Sendable (Result<Database, any Swift.Error>) -> Void) -> AsyncOpenTask {
        asyncOpen(configuration: configuration, callbackQueue: callbackQueue, background: .global(), callback: callback)
    }

    /// `asyncOpen` with the background work on `background` (tests pass a serial queue they can
    /// wait for).
    @discardableResult
    static func asyncOpen(configuration: Configuration, callbackQueue: DispatchQueue, background: DispatchQueue,
                          callback: @escaping @Sendable (Result<Database, any Swift.Error>) -> Void) -> AsyncOpenTask {
        let task = AsyncOpenTask()
        background.async {
            // An instance opened and dropped here does the file's work; the callback's own open
            // then finds the file ready.
            let failure: (any Swift.Error)?
            do {
                _ = try Database(configuration: configuration)
                failure = nil
            } catch {
                failure = error
            }
            callbackQueue.async {
                guard !task.isCancelled else { return }
                if let failure {
                    callback(.failure(failure))
                    return
                }
                callback(Result { try Database(configuration: configuration, queue: callbackQueue) })
            }
        }
        return task
    }
}
