import Foundation
public import Strata
import Synchronization

/// A logged-in user of an ``App``. Opens synced databases through
/// ``flexibleSyncConfiguration(initialSubscriptions:rerunOnOpen:)``.
public final class User: Sendable {
    /// The server's id for the user.
    public let id: String
    /// The app the user logged in to.
    public let app: App
    private struct Tokens {
        var access: String?
        var refresh: String?
    }
    private let tokens: Mutex<Tokens>

    init(id: String, app: App, accessToken: String, refreshToken: String) {
        self.id = id
        self.app = app
        tokens = Mutex(Tokens(access: accessToken, refresh: refreshToken))
    }

    /// The token the user's sessions present to the server; nil once logged out.
    public var accessToken: String? { tokens.withLock { $0.access } }

    /// The token for a new access token; nil once logged out.
    public var refreshToken: String? { tokens.withLock { $0.refresh } }

    /// Whether the user is logged in (``logOut()`` not called).
    public var isLoggedIn: Bool { accessToken != nil }

    func setTokens(access: String, refresh: String) {
        tokens.withLock { $0 = Tokens(access: access, refresh: refresh) }
    }

    /// Gets a new access token with the refresh token (the user's sessions do this when the
    /// server refuses an expired access token). Throws ``SyncError`` with `.invalidToken` when
    /// the server refuses the refresh token or the user logged out.
    public func refreshAccessToken() async throws {
        guard let refresh = refreshToken else { throw SyncError(.invalidToken, "the user logged out") }
        let service = app.configuration.loginService ?? WebSocketLogin()
        let access = try await service.refreshAccessToken(baseURL: app.configuration.resolvedBaseURL, appID: app.appID,
                                                          refreshToken: refresh)
        tokens.withLock { tokens in
            // A logOut() meanwhile wins: its tokens stay gone.
            if tokens.refresh == refresh { tokens.access = access }
        }
        app.users.save()
    }

    /// Logs the user out: stops the user's sync sessions (changes not yet uploaded stay in
    /// their files and upload when the user logs in again), forgets the tokens and removes the
    /// user from ``App/allUsers``. Opening the user's synced databases then fails.
    public func logOut() async throws {
        tokens.withLock { $0 = Tokens(access: nil, refresh: nil) }
        app.users.loggedOut(id)
        SessionRegistry.shared.stopSessions(of: self)
    }

    /// A configuration for this user's synced file of this app: a file of its own under the
    /// app configuration's root folder (`strata-sync/APP/USER/default.strata`), carrying the
    /// sync settings. Set `objectTypes` as usual (every synced class needs a primary key).
    ///
    /// `initialSubscriptions` sets the file's subscriptions when the file has none yet, or,
    /// with `rerunOnOpen`, on the first open in each process. It runs inside an update of the
    /// set, so it calls `append`/`remove` directly.
    public func flexibleSyncConfiguration(initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)? = nil,
                                          rerunOnOpen: Bool = false) -> Database.Configuration {
        var configuration = Database.Configuration(fileURL: syncFileURL)
        configuration.attachment = SyncConfiguration(user: self, initialSubscriptions: initialSubscriptions, rerunOnOpen: rerunOnOpen)
        return configuration
    }

    /// The user's file for this app. Its folder is made here, because a database's file must
    /// have a folder before it opens.
    var syncFileURL: URL {
        let root = app.configuration.rootDirectory ?? Database.Configuration.defaultFileURL.deletingLastPathComponent()
        let folder = root.appendingPathComponent("strata-sync", isDirectory: true)
            .appendingPathComponent(Self.pathComponent(app.appID), isDirectory: true)
            .appendingPathComponent(Self.pathComponent(id), isDirectory: true)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent("default.strata")
    }

    /// `name` as one safe path component: letters, digits, `-`, `_` and `.` kept, the rest
    /// percent-encoded, and never `.` or `..`.
    static func pathComponent(_ name: String) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_."))
        let encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "user"
        return encoded.isEmpty || encoded == "." || encoded == ".." ? "_" + encoded : encoded
    }
}
