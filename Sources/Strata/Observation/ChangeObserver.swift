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
