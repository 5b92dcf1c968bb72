// Versions: each instance reads one version of the file until it moves to a newer one —
// explicitly (`refresh()`, `asyncRefresh()`), at the start of a write, or by auto-refresh on its
// executor (DatabaseCore+AutoRefresh.swift). Every move ends in `reportAdvance(from:to:)`.
//
// The ways an instance moves, by name:
// - `advanceToLatest()`: move to the newest version now and report the move (refresh, reopen);
// - `refreshIfAutoRefreshing()`: the watcher's request, on the executor, honouring `autorefresh`;
// - `advanceToLatestBeforeWrite()`: before a write begins, when observers would otherwise see
//   the newer version's changes inside the transaction;
// - `reportAdvance(from:to:)`: what every move ends in (handlers, then notifications);
// - `notifyObservers(advancedFrom:to:)`: delivery of notifications alone, also after the
//   instance's own commits.

import StrataStore
import StrataStorage
import Foundation

extension DatabaseCore {
    /// Moves to the newest version now and reports the move; returns whether the version
    /// changed. Used by `refresh()`, `asyncRefresh()`, a reopen and auto-refresh.
    @discardableResult
    func advanceToLatest() -> Bool {
        guard !hasReleasedVersion, !session.isInWriteTransaction else { return false }
        // Inside an async write's block after a grouped commit that chained: commit the chain
        // first (its engine transaction is still open).
        if session.hasChainedWrites { asyncWrites.finishChain() }
        let old = session.version
        guard (try? session.refresh()) == true else { return false }
        reportAdvance(from: old, to: session.version)
        return true
    }

    /// Reports that this instance moved from version `old` to the newer `new`, in the
    /// instance's own context (thread, queue or actor). It is called after `refresh()`,
    /// `asyncRefresh()`, an auto-refresh (on the instance's executor, right after the move),
    /// reopening a cached instance, and when a write transaction begins on a newer version than
    /// the instance read (then inside the just-opened write transaction). It is not called for
    /// the instance's own commits, which know their change set.
    ///
    /// Change notifications hang here: `session.changes(since: old)` gives what changed
    /// between the two versions. Handlers run in registration order; a handler may read the
    /// database but must not refresh it.
    func reportAdvance(from old: UInt64, to new: UInt64) {
        for handler in refreshHandlers { handler(old, new) }
        // Notifications never run inside a write transaction: a move made by beginWrite is
        // reported with the transaction's own commit (the notifier diffs from what each
        // observer last saw).
        if !session.isInWriteTransaction { notifyObservers(advancedFrom: old, to: new) }
    }

    /// After a write transaction began: enforces the limit on pinned versions, then reports
    /// the move to the newest version.
    func didBeginWrite(from old: UInt64) throws(Database.Error) {
        if let limit = configuration.maximumNumberOfActiveVersions, limit > 0 {
            let after = activeVersionsAfterCommit()
            if after > Int(limit) {
                session.rollback()
                throw Database.Error(.tooManyActiveVersions, """
                    Committing would leave \(after) versions of \(configuration.path) pinned, more than the \
                    configuration's maximumNumberOfActiveVersions (\(limit)). Release frozen objects, results and \
                    databases you no longer need, refresh or invalidate instances that stay on old versions, or raise the limit.
                    """, path: configuration.path)
            }
        }
        let new = session.version
        if new != old { reportAdvance(from: old, to: new) }
    }

    /// How many versions will be pinned once the open write commits: every reader's pin in
    /// every process, except this instance's, which moves to the new version.
    func activeVersionsAfterCommit() -> Int {
        var pins = session.store.engine.readerPins
        if let own = session.pinnedVersion, let index = pins.firstIndex(of: own) { pins.remove(at: index) }
        var versions = Set(pins)
        versions.insert(session.store.engine.latestVersion + 1)
        return versions.count
    }
}
