// What the object layer needs to follow versions: which versions readers pin (for the limit on
// active versions and for tests), and a wait for the next commit that its owner can cut short
// without closing the engine (one watcher thread per open file drives auto-refresh).

extension StorageEngine {
    /// The distinct versions pinned by live readers in every process, sorted.
    public var pinnedVersions: [UInt64] { lockFile.pinnedVersions() }

    /// The version each live reader (in every process) pins, sorted, one entry per reader.
    public var readerPins: [UInt64] { lockFile.pins() }

    /// Blocks the calling thread until a version newer than `version` is published (by this or
    /// another process), and returns the newest version. It also returns, with the newest
    /// version even if that is not newer, when `timeout` has passed, when the engine is closing,
    /// or when `shouldStop` returns true (checked whenever the thread wakes: after a commit, or
    /// after a call to `wakeVersionWaiters()`). No polling: the thread sleeps on the lock
    /// file's commit signal.
    ///
    /// The caller must keep the engine open while it waits.
    ///
    /// With `quiet`, commits published by this engine do not wake the thread (they do not pay
    /// for a wake-up of a thread that has nothing to do): the caller hears of them through
    /// `setLocalCommitObserver(_:)` instead, and commits of other processes (or other engines
    /// of the same file) wake it as before.
    public func waitForVersion(newerThan version: UInt64, timeout: Duration? = nil, quiet: Bool = false,
                               until shouldStop: () -> Bool = { false }) -> UInt64 {
        // Nanoseconds left; -1 waits without a limit.
        var remaining: Int64 = timeout.map(Self.nanoseconds) ?? -1
        func stops() -> Bool { shouldStop() || state.withLock { $0.closing } }
        while true {
            let current = lockFile.publishedTxid
            if current > version || stops() { return current }
            if timeout != nil && remaining <= 0 { return current }
            let started = ContinuousClock.now
            _ = lockFile.waitForPublish(after: current, timeoutNanoseconds: remaining, quiet: quiet, shouldStop: stops)
            if timeout != nil { remaining -= Self.nanoseconds(ContinuousClock.now - started) }
        }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        Int64(duration.components.seconds) * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
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
