import StrataStore

extension Database {
    /// What a database notification reports. RealmSwift calls it `Realm.Notification`.
    public enum Notification: String, Sendable {
        /// The instance moved to a newer version: after its own commits, `refresh()`, or a
        /// refresh before a write transaction.
        case didChange = "RLMRealmDidChangeNotification"
        /// Another instance (or process) committed and this one, with `autorefresh` off, has
        /// not refreshed yet: call `refresh()` to see the change. Sent on the instance's
        /// executor, so only to actor-, main-actor- and queue-confined instances.
        case refreshRequired = "RLMRealmRefreshRequiredNotification"
    }

    /// Calls `block` each time this instance moves to a newer version, in its context. Keep
    /// the returned token for as long as you want notifications. Not allowed inside a write
    /// transaction, on a read-only instance, or from outside the instance's context.
    public func observe(_ block: @escaping (_ notification: Notification, _ database: Database) -> Void) -> NotificationToken {
        core.verifyObservable("Database.observe(_:)")
        let observer = DatabaseObserver(core: core, callback: block)
        core.observers.add(observer)
        return NotificationToken(observer, core: core)
    }

    /// Runs `block` in a write transaction and commits it, like `write(_:)`, without calling
    /// the observers of `tokens` for this commit (use it for changes the user interface made
    /// itself and already shows). The tokens must come from observations on this instance.
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken], _ block: () throws -> Result) throws -> Result {
        try core.write(block) { try commitWrite(withoutNotifying: tokens) }
    }

    /// Commits the write transaction, like `commitWrite()`, without calling the observers of
    /// `tokens` for this commit.
    public func commitWrite(withoutNotifying tokens: [NotificationToken]) throws {
        let skipped = Set(tokens.compactMap { $0.registeredObserver.map { ObjectIdentifier($0.state) } })
        if !skipped.isEmpty { core.observers.skipping = skipped }
        defer { core.notifier?.skipping = [] }
        try core.commitWrite()
    }
}
