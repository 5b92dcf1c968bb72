import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Strata
import Synchronization

/// The logged-in users of one app id and server, shared by the `App` values naming them, and
/// kept between launches in `strata-sync/APP/users.json` under the app's root folder.
final class AppUsers: Sendable {
    private struct State {
        var users: [String: User] = [:]
        var order: [String] = []
        /// Where the users are kept; nil until the first `App` restores them.
        var file: URL?
    }
    private let state = Mutex(State())
    /// Serialises writes of the file, so a newer list is never overwritten by an older one.
    private let writing = Mutex(())
    private let baseURL: String
    private static let registry = Mutex<[String: AppUsers]>([:])

    private init(baseURL: String) { self.baseURL = baseURL }

    static func shared(appID: String, baseURL: String) -> AppUsers {
        registry.withLock { registry in
            let key = baseURL + "|" + appID
            if let users = registry[key] { return users }
            let users = AppUsers(baseURL: baseURL)
            registry[key] = users
            return users
        }
    }

    /// Forgets the users of app `appID` on `baseURL` held in memory, as a new process starts
    /// (their file stays). Only that app's: tests of other apps may run meanwhile.
    package static func forgetInMemory(appID: String, baseURL: String) {
        _ = registry.withLock { $0.removeValue(forKey: baseURL + "|" + appID) }
    }

    /// Loads the users kept for `app` the first time an `App` of this id and server is made.
    /// A missing or unreadable file means no one is logged in.
    func restore(for app: App) {
        let file = Self.file(for: app)
        let stored: StoredUsers? = (try? Data(contentsOf: file)).flatMap { try? JSONDecoder().decode(StoredUsers.self, from: $0) }
        state.withLock { state in
            guard state.file == nil else { return }
            state.file = file
            guard let stored, stored.baseURL == baseURL else { return }
            for id in stored.order {
                guard let tokens = stored.users[id], state.users[id] == nil else { continue }
                state.users[id] = User(id: id, app: app, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
                state.order.append(id)
            }
        }
    }

    func loggedIn(_ result: LoginResult, app: App) -> User {
        let user = state.withLock { state in
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
        save()
        return user
    }

    func loggedOut(_ userID: String) {
        state.withLock { state in
            state.users[userID] = nil
            state.order.removeAll { $0 == userID }
        }
        save()
    }

    var current: User? { state.withLock { state in state.order.last.flatMap { state.users[$0] } } }
    var all: [String: User] { state.withLock { $0.users } }

    /// Writes the users and their tokens (after a login, a logout or a token refresh). A write
    /// that fails leaves the users logged in for this process; the next launch logs in again.
    func save() {
        writing.withLock { _ in
            let (file, stored) = state.withLock { state in
                let users = state.order.compactMap { id -> (String, StoredUsers.Tokens)? in
                    guard let user = state.users[id], let access = user.accessToken, let refresh = user.refreshToken else { return nil }
                    return (id, StoredUsers.Tokens(accessToken: access, refreshToken: refresh))
                }
                return (state.file, StoredUsers(baseURL: baseURL, order: users.map(\.0), users: Dictionary(uniqueKeysWithValues: users)))
            }
            guard let file, let data = try? JSONEncoder().encode(stored) else { return }
            let folder = file.deletingLastPathComponent()
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // Written beside the file and renamed over it, readable by the owner only: the
            // tokens are credentials.
            let temporary = folder.appendingPathComponent(".users-\(UUID().uuidString).json")
            guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else { return }
            if rename(temporary.path, file.path) != 0 {
                try? FileManager.default.removeItem(at: temporary)
            }
        }
    }

    private static func file(for app: App) -> URL {
        let root = app.configuration.rootDirectory ?? Database.Configuration.defaultFileURL.deletingLastPathComponent()
        return root.appendingPathComponent("strata-sync", isDirectory: true)
            .appendingPathComponent(User.pathComponent(app.appID), isDirectory: true)
            .appendingPathComponent("users.json")
    }
}

/// The users file: who is logged in (the current user last) and their tokens.
private struct StoredUsers: Codable {
    struct Tokens: Codable {
        var accessToken: String
        var refreshToken: String
    }
    var baseURL: String
    var order: [String]
    var users: [String: Tokens]
}
