import Foundation
import Strata
import Synchronization

/// The process's sync sessions, one per synced file: the first open of a synced configuration
/// attaches the file's ledger and starts its session; later opens (any thread, any actor)
/// reuse it until its user logs out.
final class SessionRegistry: Sendable {
    static let shared = SessionRegistry()

    private struct Entry {
        var session: SyncSession
        var user: User
    }
    private let entries = Mutex<[String: Entry]>([:])
    /// Files whose ledger is being attached: an open of the file from inside the attach (the
    /// ledger opening its own instance) must not start a second attach.
    private let attaching = Mutex<Set<String>>([])

    /// Whether `configuration`'s file is being attached right now.
    func isAttaching(_ configuration: Database.Configuration) -> Bool {
        guard let key = try? Self.key(of: configuration) else { return false }
        return attaching.withLock { $0.contains(key) }
    }

    /// The key of a configuration's file.
    static func key(of configuration: Database.Configuration) throws -> String {
        guard let fileURL = configuration.fileURL else {
            throw SyncError(.localFileError, "a synced database needs a file: in-memory databases do not sync")
        }
        return fileURL.standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// The running session of `configuration`'s file, if any.
    func existingSession(for configuration: Database.Configuration) -> SyncSession? {
        guard let key = try? Self.key(of: configuration) else { return nil }
        return entries.withLock { $0[key]?.session }
    }

    /// The session of `configuration`'s file, started if needed.
    func session(for configuration: Database.Configuration, sync: SyncConfiguration) throws -> SyncSession {
        let user = sync.user
        guard user.isLoggedIn else {
            throw SyncError(.sessionStopped, "user '\(user.id)' is logged out: log in again to open their synced database")
        }
        let key = try Self.key(of: configuration)
        if let session = entries.withLock({ entries in
            entries[key].flatMap { $0.user === user && !$0.session.isStopped ? $0.session : nil }
        }) {
            return session
        }
        // Attaching may open the file; it runs without the registry's lock.
        let app = user.app.configuration
        let syncedTypes = configuration.objectTypes ?? []
        attaching.withLock { _ = $0.insert(key) }
        defer { attaching.withLock { _ = $0.remove(key) } }
        let ledger: any SessionLedger
        if let factory = app.ledgerFactory {
            ledger = try factory(configuration, syncedTypes)
        } else {
            ledger = try SyncLedger.attach(configuration: configuration, syncedTypes: syncedTypes)
        }
        var settings = SessionEngine.Settings(url: try Self.syncURL(baseURL: app.resolvedBaseURL, appID: user.app.appID),
                                              appID: user.app.appID, accessToken: { user.accessToken ?? "" },
                                              transport: app.transport ?? WebSocketTransport())
        settings.refreshAccessToken = { try await user.refreshAccessToken() }
        if let timer = app.retryTimer { settings.timer = timer }
        if let seed = app.seed { settings.seed = seed }
        let session = SyncSession(ledger: ledger, settings: settings)
        let stored = try ledger.subscriptions()
        if let initial = sync.initialSubscriptions, stored.version == 0 || sync.rerunOnOpen {
            try session.subscriptions.applyInitial(initial, to: ledger)
        }
        let chosen = entries.withLock { entries -> SyncSession in
            if let running = entries[key], running.user === user, !running.session.isStopped { return running.session }
            entries[key]?.session.stop(SyncError(.sessionStopped, "another user opened the file"))
            entries[key] = Entry(session: session, user: user)
            return session
        }
        if chosen === session {
            session.resume()
        } else {
            session.stop(SyncError(.sessionStopped, "another open of the file started its session first"))
        }
        return chosen
    }

    /// Stops and forgets the sessions of `user`.
    func stopSessions(of user: User) {
        let stopped = entries.withLock { entries -> [SyncSession] in
            let keys = entries.filter { $0.value.user === user }.map(\.key)
            return keys.compactMap { entries.removeValue(forKey: $0)?.session }
        }
        for session in stopped { session.stop(SyncError(.sessionStopped, "user '\(user.id)' logged out")) }
    }

    /// The WebSocket URL of an app: the base URL with http→ws, https→wss, and
    /// `/sync/{appID}`.
    static func syncURL(baseURL: String, appID: String) throws -> URL {
        try ServerURL.webSocket(baseURL: baseURL, route: "sync", appID: appID, failing: .connectionFailed)
    }
}
