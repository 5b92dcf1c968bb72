import Foundation
import Synchronization

/// A sync app on a Strata Sync server: logs users in and holds who is logged in.
///
/// ```swift
/// let app = App(id: "todo")                                   // STRATA_SYNC_URL or localhost:9090
/// let user = try await app.login(credentials: .anonymous)
/// var configuration = user.flexibleSyncConfiguration(initialSubscriptions: { subscriptions in
///     subscriptions.append(QuerySubscription<Todo>(name: "all_todos"))
/// })
/// configuration.objectTypes = [Todo.self]
/// let db = try await Database(configuration: configuration, actor: MainActor.shared, downloadBeforeOpen: .always)
/// ```
///
/// `App` values with the same id and base URL share their users within the process. Logged-in
/// users and their tokens are kept in `strata-sync/APP/users.json` under the configuration's
/// root folder (readable by the file's owner only), so ``currentUser`` survives a relaunch,
/// as in RealmSwift, and an anonymous user keeps their synced file.
public final class App: Sendable {
    /// The app's id on the server.
    public let appID: String
    /// Where its server is and where its files go.
    public let configuration: AppConfiguration
    let users: AppUsers

    /// The app `id` with `configuration` (nil: the default server and folder).
    public init(id: String, configuration: AppConfiguration? = nil) {
        appID = id
        self.configuration = configuration ?? AppConfiguration()
        users = AppUsers.shared(appID: id, baseURL: self.configuration.resolvedBaseURL)
        users.restore(for: self)
    }

    /// Logs a user in. Throws ``SyncError`` with `.invalidCredentials` when the server refuses
    /// the credentials, `.unknownApp` when it does not serve this app, `.loginFailed` otherwise.
    /// The user becomes ``currentUser``.
    public func login(credentials: Credentials) async throws -> User {
        let service = configuration.loginService ?? WebSocketLogin()
        let result = try await service.logIn(baseURL: configuration.resolvedBaseURL, appID: appID, credentials: credentials)
        return users.loggedIn(result, app: self)
    }

    /// The user who logged in last and has not logged out, nil if none.
    public var currentUser: User? { users.current }

    /// Every logged-in user, by id.
    public var allUsers: [String: User] { users.all }
}
