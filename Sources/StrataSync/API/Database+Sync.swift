import Foundation
public import Strata

extension Database {
    /// Whether opening a synced database first downloads the server's data (RealmSwift's
    /// `Realm.OpenBehavior`).
    public enum OpenBehavior: Sendable, Hashable {
        /// Open at once with what the file has; sync continues in the background.
        case never
        /// Download first only when the file does not exist yet (the first launch).
        case once
        /// Download first on every open.
        case always

        /// Whether opening downloads first, given whether the file exists.
        func downloadsFirst(fileExists: Bool) -> Bool {
            switch self {
            case .never: false
            case .once: !fileExists
            case .always: true
            }
        }
    }

    /// Opens a database isolated to `actor`, first downloading as `downloadBeforeOpen` says:
    /// connect, bootstrap the subscriptions, and apply every server change that existed when
    /// the server welcomed the session. For a configuration that does not sync, the same as
    /// `init(configuration:actor:)`. Throws ``SyncError`` if the session stops before the
    /// download completes (a refused token, a schema the server refuses).
    public init(configuration: Configuration, actor: isolated any Actor, downloadBeforeOpen: OpenBehavior) async throws {
        try await Database.download(configuration, downloadBeforeOpen)
        try await self.init(configuration: configuration, actor: actor)
    }

    /// The main-actor form of ``init(configuration:actor:downloadBeforeOpen:)``.
    @MainActor
    public init(configuration: Configuration, downloadBeforeOpen: OpenBehavior) async throws {
        try await Database.download(configuration, downloadBeforeOpen)
        try await self.init(configuration: configuration)
    }

    /// Opens a database isolated to the caller's actor, first downloading as
    /// `downloadBeforeOpen` says (see ``init(configuration:actor:downloadBeforeOpen:)``).
    public static func open(configuration: Configuration, downloadBeforeOpen: OpenBehavior,
                            _isolation actor: isolated any Actor = #isolation) async throws -> Database {
        try await Database(configuration: configuration, actor: actor, downloadBeforeOpen: downloadBeforeOpen)
    }

    /// Starts the file's session and waits for its download when `behavior` asks for one.
    /// Runs off the caller's actor.
    static func download(_ configuration: Configuration, _ behavior: OpenBehavior) async throws {
        guard let sync = configuration.syncConfiguration else { return }
        let fileExists = configuration.fileURL.map { FileManager.default.fileExists(atPath: $0.path) } ?? false
        guard behavior.downloadsFirst(fileExists: fileExists) else { return }
        let session = try SessionRegistry.shared.session(for: configuration, sync: sync)
        try await session.wait(for: .download)
    }

    /// The file's sync session; nil when the database does not sync.
    public var syncSession: SyncSession? {
        guard configuration.syncConfiguration != nil else { return nil }
        return SessionRegistry.shared.existingSession(for: configuration)
    }

    /// The file's subscriptions. Only synced databases have them: on another database this
    /// stops the process with a message saying so (a programming error, as in RealmSwift).
    public var subscriptions: SyncSubscriptionSet {
        guard let session = syncSession else {
            preconditionFailure("Database.subscriptions was used on a database that does not sync: open it with user.flexibleSyncConfiguration()")
        }
        return session.subscriptions
    }
}
