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
/// users live in memory only: a new process logs in again (the synced files stay and keep
/// their unsent changes).
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
    }

    /// Logs a user in. Throws ``SyncError`` with `.invalidCredentials` when the server refuses
    /// the credentials, `.unknownApp` when it does not serve this app, `.loginFailed` otherwise.
    /// The user becomes ``currentUser``.
    public func login(credentials: Credentials) async throws -> User {
        let service = configuration.loginService ?? HTTPLogin()
        let result = try await service.logIn(baseURL: configuration.resolvedBaseURL, appID: appID, credentials: credentials)
        return users.loggedIn(result, app: self)
    }

    /// The user who logged in last and has not logged out, nil if none.
    public var currentUser: User? { users.current }

    /// Every logged-in user, by id.
    public var allUsers: [String: User] { users.all }
}

/// The logged-in users of one app id and server, shared by the `App` values naming them.
final class AppUsers: Sendable {
    private struct State {
        var users: [String: User] = [:]
        var order: [String] = []
    }
    private let state = Mutex(State())
    private static let registry = Mutex<[String: AppUsers]>([:])

    static func shared(appID: String, baseURL: String) -> AppUsers {
        registry.withLock { registry in
            let key = baseURL + "|" + appID
            if let users = registry[key] { return users }
            let users = AppUsers()
            registry[key] = users
            return users
        }
    }

    func loggedIn(_ result: LoginResult, app: App) -> User {
        state.withLock { state in
            let user: User
            if let existing = state.users[result.userID] {
                existing.setTokens(access: result.accessToken, refresh: result.refreshToken)
                user = existing
            } else {
                user = User(id: result.userID, app: app, accessToken: result.accessToken, refreshToken: result.refreshToken)
                state.users[result.userID] = user
            }
            state.order.removeAll { $0 == result.userID }
            state.order.append(result.userID)
            return user
        }
    }

    func loggedOut(_ userID: String) {
        state.withLock { state in
            state.users[userID] = nil
            state.order.removeAll { $0 == userID }
        }
    }

    var current: User? { state.withLock { state in state.order.last.flatMap { state.users[$0] } } }
    var all: [String: User] { state.withLock { $0.users } }
}
