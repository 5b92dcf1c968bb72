// Grouped commits: several commits made durable by one sync.
//
// A grouped commit writes its pages and its meta like a one-sync commit (a chain record, or an
// anchor that lists its pages) but does not sync; it is visible at once, and the write lock
// passes on. `synchronize(through:)` then makes it durable: one sync covers every commit
// written before it started, so commits that wait together share it. Callers report a commit
// as done only after that (Strata's `commitAsyncWrite(allowGrouping: true)` does).
//
// Crash safety, the engine's promise kept: after a power loss the file opens at some committed
// version, and every commit that `synchronize(through:)` returned for is there.
// - Grouped commits carry `MetaPage.flagGrouped`, and every durable-mode meta carries
//   `syncedThrough`: the newest commit synced before it was written. Recovery accepts a state
//   only if its listed pages, and those of the grouped commits before it that were not synced
//   when it was written, hold what they listed; otherwise it falls back, possibly past several
//   grouped commits, to a synced one. A failing commit that is neither grouped nor the newest
//   is still damage.
// - So that those checks find intact pages, the versions from the `syncedThrough` of the
//   newest synced meta up to the newest commit are kept from reuse (as if pinned by readers).
//   Pages a group freed are reused one sync later than pages ordinary commits free.
// - An anchor is written to the slot the current chain does not hang from, where the way back
//   to older states lies; before writing one, the engine syncs any unsynced grouped commits,
//   so the chain it replaces is no longer needed. Groups therefore live within one chain of
//   records (up to `MetaPage.groupChainLimit` commits per sync).
// - A writer in another process (or a new engine) that starts from a grouped commit it did
//   not write, and may not be synced, syncs once before writing anything.

/// This engine's view of which commits are durable, and which versions' pages recovery may
/// still need.
struct GroupState {
    /// The newest commit known to be synced.
    var durable: UInt64
    /// The `syncedThrough` of the newest synced meta: recovery may fall back to any state from
    /// here on, and check the grouped commits after it, so their pages stay unused.
    var floor: UInt64
    /// The newest commit this engine made.
    var newest: UInt64
    /// The `syncedThrough` the newest commit carries.
    var newestCarried: UInt64
    /// The newest grouped commit this engine made (0: none).
    var newestGrouped: UInt64 = 0

    init(openedAt txid: UInt64) {
        durable = txid
        floor = txid
        newest = txid
        newestCarried = txid
    }

    /// Whether commits this engine made are not yet synced.
    var hasUnsynced: Bool { newest > durable }

    /// Records a durable-mode commit: a `grouped` one is not synced yet; any other synced
    /// itself and everything before it.
    mutating func committed(_ txid: UInt64, carrying syncedThrough: UInt64, grouped: Bool) {
        newest = txid
        newestCarried = syncedThrough
        if grouped { newestGrouped = txid }
        if !grouped {
            durable = txid
            floor = max(floor, syncedThrough)
        }
    }

    /// A sync that started when `target` (carrying `carried`) was the newest written commit has
    /// finished.
    mutating func synced(through target: UInt64, carrying carried: UInt64) {
        guard target > durable else { return }
        durable = target
        floor = max(floor, carried)
    }

    /// The versions whose pages must not be reused yet. None once every grouped commit is at
    /// or before the floor: then no state recovery may reach checks a grouped commit's pages,
    /// and ordinary commits need no more than the readers' pins.
    var pins: [UInt64] {
        guard newestGrouped > floor, newest > floor else { return [] }
        return Array(floor...newest)
    }
}

extension StorageEngine {
    /// Waits until commit `txid` (made with `commit(grouped: true)`) is durable, syncing the
    /// file unless a sync that covers it already finished. Concurrent callers share syncs: while
    /// one syncs, the others wait, and most then find their commit covered.
    public func synchronize(through txid: UInt64) throws {
        guard options.durability == .full else { return }
        try syncGate.withLock { syncs in
            let (durable, target, carried) = state.withLock { ($0.group.durable, $0.latestMeta.txid, $0.latestMeta.syncedThrough) }
            if durable >= txid { return }
            try file.synchronize()
            syncs += 1
            state.withLock { $0.group.synced(through: target, carrying: carried) }
        }
    }

    /// The newest commit known durable in this engine.
    public var durableVersion: UInt64 { state.withLock { $0.group.durable } }

    /// The versions a write from `base` must not reuse pages of, sorted and without repeats:
    /// readers' pins (in every process), the versions an unsynced group keeps, and the base
    /// of the log generation the write continues (CommitLog.swift). `foreign` tells whether a
    /// reader slot of another process pins one. One array per commit, reserved for a few pins.
    func writePins(base: MetaPage) -> (pins: [UInt64], foreign: Bool) {
        var pins: [UInt64] = []
        pins.reserveCapacity(8)
        let foreign = lockFile.appendPinnedVersions(to: &pins)
        state.withLock { state in pins.append(contentsOf: state.group.pins) }
        if base.isLogged { pins.append(base.syncedThrough) }
        LockFile.sortDroppingRepeats(&pins)
        return (pins, foreign)
    }

    /// Before a write starts from `base`: if it is a grouped commit this engine is not tracking
    /// (another process wrote it, or it predates this engine), sync it first.
    func settleForeignGroup(base: MetaPage) throws {
        guard options.durability == .full, base.isGrouped else { return }
        // Our own grouped commits are tracked (and their pages kept); another's are not.
        let foreign = state.withLock { base.txid > $0.group.newest && base.txid > $0.group.durable }
        if foreign { try synchronize(through: base.txid) }
    }

    /// Before writing an anchor: make unsynced grouped commits durable.
    func synchronizeBeforeAnchor() throws {
        let newest = state.withLock { $0.group.hasUnsynced ? $0.group.newest : nil }
        if let newest { try synchronize(through: newest) }
    }
}
