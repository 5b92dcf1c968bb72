import StrataSyncProtocol
import Synchronization

/// The recent history of each app, in memory, shared by the app's sessions on this server
/// instance, so that a commit costs one store read however many sessions catch up on it.
///
/// Invariants, per app:
/// - The window holds every changeset with a sequence in `(base, top]`, in order, without a
///   gap: it only grows by a page the store returned for `after: top`, and only when that page
///   continues `top` sequence by sequence (the stores number an app's changesets 1, 2, 3, …).
/// - `base ≥ compactedThrough`, the highest compacted-through sequence this instance has seen
///   (its own compactions, and the position of every page it read). Compaction trims the
///   window, and drops it when it passes `top`; a page that reports a compaction past the
///   window's `top` drops it too.
/// - `knownLatest` is the newest sequence this instance knows the store holds: its own
///   uploads, the store's commit notifications, and positions and snapshots its sessions read.
///
/// A read `after` a checkpoint is served from the window only when `base ≤ after ≤ top` and
/// `top ≥ knownLatest`, so a commit announced before a session's catch-up is always in the page
/// it gets. A checkpoint below `compactedThrough` or `base`, or above `top` with nothing newer
/// announced, reads the store directly, as without the cache — so a client behind the
/// compacted history gets the store's position and is reset exactly as before. Otherwise one
/// caller reads the store after `top` (a fill) while the others wait for that read; a caller
/// only waits again when the last fill moved `top` forward, and reads the store directly when
/// it did not, so no caller waits on a window that cannot reach what it needs.
final class HistoryCache: Sendable {
    /// The most changesets kept per app.
    let maximumCount: Int
    /// The most encoded bytes of changesets kept per app.
    let maximumBytes: Int

    private struct Window {
        /// Whether `base`/`top` describe cached history (false until a fill anchors it, and
        /// after it is dropped).
        var anchored = false
        var base: UInt64 = 0
        var top: UInt64 = 0
        var changesets: [ServerChangeset] = []
        var sizes: [Int] = []
        var bytes = 0
        var compactedThrough: UInt64 = 0
        var knownLatest: UInt64 = 0
        /// The store read in flight that will extend the window, if any.
        var fill: Task<Result<Void, any Error>, Never>?
        /// Bumped whenever the window is dropped, so a fill started before does not apply.
        var generation: UInt64 = 0
    }

    private let windows = Mutex<[String: Window]>([:])
    private let reads = Atomic<Int>(0)

    /// A cache keeping up to `maximumCount` changesets and `maximumBytes` encoded bytes per app.
    init(maximumCount: Int = 4_096, maximumBytes: Int = 16 << 20) {
        self.maximumCount = max(1, maximumCount)
        self.maximumBytes = max(1, maximumBytes)
    }

    /// How many times the cache read the store (its fills and the direct reads it fell back to).
    var storeReads: Int { reads.load(ordering: .relaxed) }

    /// Records that `app`'s store holds history up to `sequence` (a commit, a position or a
    /// snapshot read).
    func noteLatest(app: String, sequence: UInt64) {
        windows.withLock { windows in
            var window = windows.removeValue(forKey: app) ?? Window()
            window.knownLatest = max(window.knownLatest, sequence)
            windows[app] = window
        }
    }

    /// Records that `app`'s history was compacted through `sequence`: the window drops what is
    /// at or below it, and a checkpoint below it reads the store (which answers with a reset).
    func noteCompacted(app: String, through sequence: UInt64) {
        windows.withLock { windows in
            var window = windows.removeValue(forKey: app) ?? Window()
            Self.trim(&window, compactedThrough: sequence)
            windows[app] = window
        }
    }

    /// Up to `limit` changesets of `app` after `after`, in order, and the position: the same
    /// changesets as `storage.history(app:after:limit:)`, and a position whose newest sequence
    /// is at least every sequence noted before the call.
    func history(app: String, after: UInt64, limit: Int, storage: any SyncStorage) async throws -> HistoryPage {
        enum Step {
            case serve(HistoryPage)
            case wait(Task<Result<Void, any Error>, Never>, generation: UInt64, top: UInt64)
            case direct
        }
        // Waiting is only worth it while fills move the window forward; `waited` turns the
        // second wait without progress into a direct read.
        var waited: (generation: UInt64, top: UInt64)?
        while true {
            let step: Step = windows.withLock { windows in
                var window = windows.removeValue(forKey: app) ?? Window()
                defer { windows[app] = window }
                if after < window.compactedThrough { return .direct }
                if window.anchored {
                    if after < window.base { return .direct }
                    if window.top >= window.knownLatest {
                        return after <= window.top ? .serve(Self.page(of: window, after: after, limit: limit)) : .direct
                    }
                }
                if let last = waited, !(last.generation == window.generation && window.top > last.top) {
                    // The last fill did not move this window forward: nothing to wait for.
                    return .direct
                }
                if window.fill == nil {
                    let start = window.anchored ? window.top : after
                    let generation = window.generation
                    let fillLimit = max(limit, 1)
                    window.fill = Task {
                        await self.fill(app: app, after: start, limit: fillLimit, generation: generation, storage: storage)
                    }
                }
                guard let fill = window.fill else { return .direct }
                return .wait(fill, generation: window.generation, top: window.top)
            }
            switch step {
            case .serve(let page):
                return page
            case .direct:
                reads.add(1, ordering: .relaxed)
                return try await storage.history(app: app, after: after, limit: limit)
            case .wait(let fill, let generation, let top):
                try await fill.value.get()
                waited = (generation, top)
            }
        }
    }

    /// Reads the store after `after` and anchors the window there, or extends it when `after`
    /// is still its top.
    private func fill(app: String, after: UInt64, limit: Int, generation: UInt64, storage: any SyncStorage) async -> Result<Void, any Error> {
        reads.add(1, ordering: .relaxed)
        let page: HistoryPage
        do {
            page = try await storage.history(app: app, after: after, limit: limit)
        } catch {
            windows.withLock { windows in
                if windows[app]?.generation == generation { windows[app]?.fill = nil }
            }
            return .failure(error)
        }
        let sizes = page.changesets.map { $0.encoded().count }
        windows.withLock { windows in
            var window = windows.removeValue(forKey: app) ?? Window()
            defer { windows[app] = window }
            guard window.generation == generation else { return }
            window.fill = nil
            window.knownLatest = max(window.knownLatest, page.position.latestSequence)
            window.compactedThrough = max(window.compactedThrough, page.position.compactedThrough)
            if !window.anchored {
                // A read from below the compacted history holds nothing to anchor on.
                guard after >= window.compactedThrough else { return }
                window.anchored = true
                window.base = after
                window.top = after
            }
            guard after == window.top else { return }
            var previous = window.top
            for (changeset, size) in zip(page.changesets, sizes) {
                guard changeset.serverSequence == previous + 1 else {
                    // Not a continuation of the window: keep nothing rather than a gap.
                    Self.drop(&window)
                    return
                }
                previous = changeset.serverSequence
                window.changesets.append(changeset)
                window.sizes.append(size)
                window.bytes += size
            }
            window.top = previous
            Self.trim(&window, compactedThrough: window.compactedThrough)
            Self.bound(&window, count: maximumCount, bytes: maximumBytes)
        }
        return .success(())
    }

    private static func page(of window: Window, after: UInt64, limit: Int) -> HistoryPage {
        // The window is gapless from `base + 1`, so the changeset after `after` is at this index.
        let start = Int(after - window.base)
        let end = min(window.changesets.count, start + max(0, limit))
        return HistoryPage(changesets: Array(window.changesets[start..<end]),
                           position: HistoryPosition(latestSequence: window.top, compactedThrough: window.compactedThrough))
    }

    /// Raises the compacted-through sequence and keeps the window above it.
    private static func trim(_ window: inout Window, compactedThrough: UInt64) {
        window.compactedThrough = max(window.compactedThrough, compactedThrough)
        guard window.anchored, window.base < window.compactedThrough else { return }
        guard window.top >= window.compactedThrough else { return drop(&window) }
        removeOldest(Int(window.compactedThrough - window.base), from: &window)
    }

    /// Drops the oldest changesets until the window is within `count` changesets and `bytes`.
    private static func bound(_ window: inout Window, count: Int, bytes: Int) {
        var dropCount = 0
        var kept = window.bytes
        while dropCount < window.changesets.count, window.changesets.count - dropCount > count || kept > bytes {
            kept -= window.sizes[dropCount]
            dropCount += 1
        }
        removeOldest(dropCount, from: &window)
    }

    private static func removeOldest(_ count: Int, from window: inout Window) {
        guard count > 0 else { return }
        window.bytes -= window.sizes.prefix(count).reduce(0, +)
        window.changesets.removeFirst(count)
        window.sizes.removeFirst(count)
        window.base += UInt64(count)
    }

    /// Forgets the window (keeping what is known of the store); the next read anchors a new one.
    private static func drop(_ window: inout Window) {
        window.anchored = false
        window.base = 0
        window.top = 0
        window.changesets = []
        window.sizes = []
        window.bytes = 0
        window.fill = nil
        window.generation += 1
    }
}
