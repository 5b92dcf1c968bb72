// Delivery of change notifications for one database instance. Everything hangs off one
// function, `DatabaseCore.notifyObservers(advancedFrom:to:)`, called whenever the instance
// moves to a newer version (by `refresh()`, by auto-refresh on its executor, before a write
// transaction starts on a newer version) and after the instance's own commits.
//
// A pass first computes every observer's change against the version the observer last saw
// (from the change log), and only then calls the callbacks, so that no callback sees a
// version its change was not computed for. If a callback moves the instance (it commits or
// refreshes), the rest of the pass is computed again for the new version.

import StrataStore

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
    /// The tokens of observations registered from this instance on another actor or queue
    /// (`observe(on:)`), held weakly: the caller owns them.
    private var handedOver: [WeakToken] = []
    private struct WeakToken {
        weak var token: NotificationToken?
    }

    var hasObservers: Bool { entries.contains { $0.observer?.state.isActive == true } }

    func add(_ observer: ChangeObserver) {
        // Ended observations are dropped in each pass; here only now and then, so that
        // registering many observers stays linear.
        if entries.count >= 64 && entries.count.nonzeroBitCount == 1 {
            entries.removeAll { $0.observer == nil || $0.observer?.state.isActive == false }
        }
        entries.append(Entry(observer: observer))
    }

    /// Remembers an observation registered from this instance on another actor or queue.
    func handOver(_ token: NotificationToken) {
        if handedOver.count >= 16 && handedOver.count.nonzeroBitCount == 1 { handedOver.removeAll { $0.token == nil } }
        handedOver.append(WeakToken(token: token))
    }

    /// The live tokens of observations registered from this instance with other instances
    /// (not the one `own` is the refresh target of).
    func handedOverTokens(excluding own: RefreshTarget?) -> [NotificationToken] {
        handedOver.removeAll { $0.token == nil }
        return handedOver.compactMap(\.token).filter { $0.isElsewhere(than: own) }
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
            guard !core.hasReleasedVersion, !core.session.isInWriteTransaction, !core.session.isClosed else { return }
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
