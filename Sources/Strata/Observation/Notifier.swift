// Delivery of change notifications for one database instance. Everything hangs off one
// function, `DatabaseCore.didAdvance(from:to:)`, called whenever the instance moves to a newer
// version: by `refresh()`, before a write transaction starts on a newer version, and after
// the instance's own commits. (Autorefresh calls it too, from the instance's own context.)
//
// A pass first computes every observer's change against the version the observer last saw
// (from the change log), and only then calls the callbacks, so that no callback sees a
// version its change was not computed for. If a callback moves the instance (it commits or
// refreshes), the rest of the pass is computed again for the new version.

import StrataStore

/// One registered observation: an object, a collection or the whole database. Subclasses say
/// what changed between `version` and the instance's current version.
class ChangeObserver {
    let state = ObservationState()
    /// The version the observer's callback last reported (or registration's version).
    var version: UInt64

    init(version: UInt64) { self.version = version }

    /// What to report for the change from `version` to the instance's version. `changes` is nil
    /// when the change log no longer reaches back to `version`; observers then compare what
    /// they can and report conservatively. Returns nil when there is nothing to report (the
    /// observer then just moves to the new version).
    func prepare(_ changes: ChangeSet?, in pass: NotificationPass) -> Delivery? { nil }
}

/// A computed notification: `update` moves the observer's remembered state to the new
/// version; `notify` calls the callback.
struct Delivery {
    let update: () -> Void
    let notify: () -> Void
}

/// The state shared by the observers of one delivery pass: the instance, its version, and
/// work that several observers would otherwise repeat.
final class NotificationPass {
    unowned(unsafe) let core: DatabaseCore
    let version: UInt64
    /// The states of the observations to leave out of this pass (`write(withoutNotifying:)`).
    let skipping: Set<ObjectIdentifier>
    private var logs: [UInt64: ChangeSet?] = [:]
    /// Ordered keys by query (table, predicate, orderings), for observers of equal queries.
    var keysByQuery: [QueryIdentity: [ObjectKey]] = [:]
    /// New contents and diff by query, starting version and key paths.
    var diffs: [DiffIdentity: ([ObjectKey], CollectionDiff)] = [:]

    init(core: DatabaseCore, skipping: Set<ObjectIdentifier> = []) {
        self.core = core
        self.version = core.session.version
        self.skipping = skipping
    }

    /// The merged changes from `version` to the pass's version (nil when the log is gone).
    func changes(since version: UInt64) -> ChangeSet? {
        if let cached = logs[version] { return cached }
        let changes = (try? core.session.changes(since: version)) ?? nil
        logs[version] = changes
        return changes
    }
}

/// Identifies a query for sharing evaluation between observers in one pass.
struct QueryIdentity: Hashable {
    let table: ObjectIdentifier
    let predicate: QueryPredicate?
    let orderings: [QueryOrdering]
}

/// Identifies the change of a query's contents from one version, as some key paths see it.
struct DiffIdentity: Hashable {
    let query: QueryIdentity
    let from: UInt64
    let keyPaths: [[String]]?
}

/// The observers of one database instance.
final class Notifier {
    /// Observers are held weakly: their tokens own them, so that dropping a token ends the
    /// observation and releases what it observes.
    private struct Entry {
        weak var observer: ChangeObserver?
    }
    private var entries: [Entry] = []
    private var delivering = false
    private var needsAnotherPass = false
    /// Observers to leave out of the next pass (`write(withoutNotifying:)`), by the identity
    /// of their `ObservationState`.
    var skipping: Set<ObjectIdentifier> = []
    /// The shared results observers, by query and key paths (see ResultsObserver.swift).
    var sharedResults: [SharedResultsKey: WeakObserver] = [:]

    var hasObservers: Bool { entries.contains { $0.observer?.state.isActive == true } }

    func add(_ observer: ChangeObserver) {
        // Ended observations are dropped in each pass; here only now and then, so that
        // registering many observers stays linear.
        if entries.count >= 64 && entries.count.nonzeroBitCount == 1 {
            entries.removeAll { $0.observer == nil || $0.observer?.state.isActive == false }
        }
        entries.append(Entry(observer: observer))
    }

    /// The active database observers (for `.refreshRequired`).
    var databaseObservers: [DatabaseObserver] {
        entries.compactMap { $0.observer as? DatabaseObserver }.filter { $0.state.isActive }
    }

    /// Computes and delivers every observer's changes up to the instance's version.
    func deliver(_ core: DatabaseCore) {
        if delivering {
            needsAnotherPass = true
            return
        }
        delivering = true
        defer { delivering = false }
        var skipped = skipping
        skipping = []
        repeat {
            needsAnotherPass = false
            guard !core.isInvalidated, !core.session.isInWriteTransaction, !core.session.isClosed else { return }
            entries.removeAll { $0.observer == nil || $0.observer?.state.isActive == false }
            let pass = NotificationPass(core: core, skipping: skipped)
            var deliveries: [(ChangeObserver, Delivery?)] = []
            for entry in entries {
                guard let observer = entry.observer, observer.state.isActive, observer.version != pass.version else { continue }
                let changes = observer.version < pass.version ? pass.changes(since: observer.version) : nil
                deliveries.append((observer, observer.prepare(changes, in: pass)))
            }
            for (observer, delivery) in deliveries {
                // A callback that committed or refreshed moved the instance on: what is left
                // was computed for an older version, so compute it again.
                if core.session.version != pass.version || core.session.isInWriteTransaction {
                    needsAnotherPass = !core.session.isInWriteTransaction
                    break
                }
                guard observer.state.isActive else { continue }
                observer.version = pass.version
                guard let delivery else { continue }
                delivery.update()
                if !skipped.isEmpty && skipped.contains(ObjectIdentifier(observer.state)) { continue }
                delivery.notify()
            }
            skipped = []
        } while needsAnotherPass
    }
}

extension DatabaseCore {
    /// Called whenever the instance has moved from version `old` to version `new` (outside a
    /// write transaction, in the instance's context): delivers the notifications. The versions
    /// are informational; each observer catches up from the version it last reported.
    func didAdvance(from old: UInt64, to new: UInt64) {
        guard old != new, let notifier else { return }
        notifier.deliver(self)
    }

    /// The instance's notifier, made on first use.
    var observers: Notifier {
        if let notifier { return notifier }
        let made = Notifier()
        notifier = made
        return made
    }

    /// Moves to the newest version and delivers notifications; returns whether the version
    /// changed.
    @discardableResult
    func refreshAndNotify() -> Bool {
        refreshNow()  // reports the move through didRefresh(from:to:), which notifies
    }

    /// Before a write transaction starts: if there is a newer version, move to it and deliver
    /// its notifications first, so that callbacks never run inside the transaction and the
    /// transaction's own commit reports only its own changes.
    func advanceBeforeWrite() {
        guard let notifier, notifier.hasObservers, !session.isInWriteTransaction else { return }
        refreshAndNotify()
    }

    /// The checks every `observe` makes, with messages that say what to do.
    func verifyObservable(_ operation: String) {
        verify(operation)
        require(!session.isInWriteTransaction, "\(operation) cannot be called inside a write transaction: register observers before beginWrite()/write { }, or after the commit.")
        require(!configuration.readOnly, "\(operation): a read-only database never changes, so it cannot be observed; open it with readOnly = false to observe it.")
        require(!isFrozen, "\(operation): frozen data never changes, so it cannot be observed; observe the live object or collection (thaw() it first).")
    }
}
