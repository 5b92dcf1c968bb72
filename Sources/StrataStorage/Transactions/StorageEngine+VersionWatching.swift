// What the object layer needs to follow versions: which versions readers pin (for the limit on
// active versions and for tests), and a wait for the next commit that its owner can cut short
// without closing the engine (one watcher thread per open file drives auto-refresh).

extension StorageEngine {
    /// The distinct versions pinned by live readers in every process, sorted.
    public var pinnedVersions: [UInt64] { lockFile.pinnedVersions() }

    /// The version each live reader (in every process) pins, sorted, one entry per reader.
    public var readerPins: [UInt64] { lockFile.pins() }

    /// Blocks until a version newer than `version` is published (by this or another process)
    /// or `shouldStop` returns true after a call to `wakeVersionWaiters()`; returns the newest
    /// version. No polling: the thread sleeps on the lock file's commit signal.
    ///
    /// The caller must keep the engine open while it waits.
    ///
    /// With `quiet`, commits published by this engine do not wake the thread (they do not pay
    /// for a wake-up of a thread that has nothing to do): the caller hears of them through
    /// `setLocalCommitObserver(_:)` instead, and commits of other processes (or other engines
    /// of the same file) wake it as before.
    public func waitForVersion(newerThan version: UInt64, quiet: Bool = false, until shouldStop: () -> Bool) -> UInt64 {
        while true {
            let current = lockFile.publishedTxid
            if current > version || shouldStop() { return current }
            _ = lockFile.waitForPublish(after: current, timeoutNanoseconds: -1, quiet: quiet, shouldStop: shouldStop)
        }
    }

    /// Sets (or, with nil, removes) the function called with the new version after each commit
    /// this engine publishes, on the committing thread, once the commit is visible. It must
    /// return quickly and must not call into the engine's write path.
    public func setLocalCommitObserver(_ observer: (@Sendable (UInt64) -> Void)?) {
        let box = observer.map(LocalCommitObserver.init)
        localCommitObserver.withLock { $0 = box }
    }

    /// Wakes every thread waiting for a version (in every process; the others go back to
    /// sleep), so that a waiter whose `shouldStop` now returns true can return.
    public func wakeVersionWaiters() { lockFile.wakeWaiters() }
}

/// The function `StorageEngine.setLocalCommitObserver(_:)` installs.
final class LocalCommitObserver: Sendable {
    let call: @Sendable (UInt64) -> Void
    init(_ call: @escaping @Sendable (UInt64) -> Void) { self.call = call }
}
