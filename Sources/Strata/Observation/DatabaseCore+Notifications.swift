// What a database instance does for its observers: delivery after each move, the move before
// a write, the checks of `observe`, and `.refreshRequired`.

import StrataStore

extension DatabaseCore {
    /// Delivers the notifications for a move from version `old` to version `new` (outside a
    /// write transaction, in the instance's context): after every move and after the
    /// instance's own commits. The versions
    /// are informational; each observer catches up from the version it last reported.
    func notifyObservers(advancedFrom old: UInt64, to new: UInt64) {
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

    /// Before a write transaction starts, when the instance has observers: moves to the newest
    /// version and delivers its notifications first, so that callbacks never run inside the
    /// transaction and the transaction's own commit reports only its own changes.
    func advanceToLatestBeforeWrite() {
        guard let notifier, notifier.hasObservers, !session.isInWriteTransaction else { return }
        advanceToLatest()  // reports the move through reportAdvance(from:to:), which notifies
    }

    /// The checks every `observe` makes, with messages that say what to do.
    func verifyObservable(_ operation: String) {
        verify(operation)
        require(!session.isInWriteTransaction, "\(operation) cannot be called inside a write transaction: register observers before beginWrite()/write { }, or after the commit.")
        require(!configuration.readOnly, "\(operation): a read-only database never changes, so it cannot be observed; open it with readOnly = false to observe it.")
        require(!isFrozen, "\(operation): frozen data never changes, so it cannot be observed; observe the live object or collection (thaw() it first).")
    }

    /// A newer version was published while this instance does not auto-refresh: tell its
    /// database observers (on its executor; see `refreshIfAutoRefreshing()`).
    func notifyRefreshRequired() {
        guard let notifier, !session.isInWriteTransaction else { return }
        for observer in notifier.databaseObservers { observer.callback(.refreshRequired, Database(core: self)) }
    }
}
