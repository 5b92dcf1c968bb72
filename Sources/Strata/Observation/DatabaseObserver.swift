import StrataStore

/// Watches the whole instance (`Database.observe(_:)`).
final class DatabaseObserver: ChangeObserver {
    unowned(unsafe) let core: DatabaseCore
    let callback: (Database.Notification, Database) -> Void

    init(core: DatabaseCore, callback: @escaping (Database.Notification, Database) -> Void) {
        self.core = core
        self.callback = callback
        super.init(version: core.session.version)
    }

    override func prepare(_ changes: ChangeSet?, in pass: NotificationPass) -> Delivery? {
        Delivery(update: {}, notify: { [self] in callback(.didChange, Database(core: core)) })
    }
}
