// RealmSwift's Device Sync opening code (its documentation's flexible-sync example) compiled
// against the RealmSwift names, and the values it builds checked without a server.
import Foundation
import Testing
import StrataRealmCompat

/// RealmSwift's documented flexible-sync open, with only the import changed. Compiled, not
/// run: it needs a server.
@MainActor
func openSyncedRealmAsDocumented(APPID: String) async throws -> Realm {
    let app = App(id: APPID)
    let user = try await app.login(credentials: .anonymous)
    var flexSyncConfig = user.flexibleSyncConfiguration(initialSubscriptions: { subs in
        subs.append(QuerySubscription<Todo>(name: "all_todos"))
    })
    flexSyncConfig.objectTypes = [Todo.self]
    let realm = try await Realm(configuration: flexSyncConfig, actor: MainActor.shared, downloadBeforeOpen: .always)
    let subscriptions = realm.subscriptions
    try await subscriptions.update {
        subscriptions.append(QuerySubscription<Todo>(name: "more"))
    }
    if let session = realm.syncSession {
        try await session.wait(for: .upload)
        let token = session.addProgressNotification(for: .download, mode: .forCurrentlyOutstandingWork) { progress in
            print(progress.fractionTransferred, progress.isTransferComplete, progress.transferredBytes, progress.transferrableBytes)
        }
        token?.invalidate()
        let direction: ProgressDirection = .download
        try await session.wait(for: direction)
        switch session.state {
        case .active, .inactive, .dying: break
        }
        let behavior: Realm.OpenBehavior = .once
        _ = behavior
        let mode: SyncSession.ProgressMode = .reportIndefinitely
        _ = mode
    }
    try await user.logOut()
    return realm
}

/// Logs in without a server.
private final class CompatLogin: LoginService {
    func logIn(baseURL: String, appID: String, credentials: Credentials) async throws -> LoginResult {
        LoginResult(userID: "compat-user", accessToken: "a", refreshToken: "r")
    }

    func refreshAccessToken(baseURL: String, appID: String, refreshToken: String) async throws -> String { "a2" }
}

@Suite struct SyncCompatTests {
    @Test func theDocumentedConfigurationCarriesTheUserAndInitialSubscriptions() async throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-sync-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var appConfiguration = AppConfiguration(baseURL: "http://localhost:1", rootDirectory: folder)
        appConfiguration.loginService = CompatLogin()
        let app = App(id: "compat-\(UUID().uuidString)", configuration: appConfiguration)
        let user = try await app.login(credentials: .anonymous)
        #expect(user.id == "compat-user")
        #expect(app.currentUser === user)
        var flexSyncConfig = user.flexibleSyncConfiguration(initialSubscriptions: { subs in
            subs.append(QuerySubscription<Todo>(name: "all_todos"))
        })
        flexSyncConfig.objectTypes = [Todo.self]
        let sync = try #require(flexSyncConfig.syncConfiguration)
        #expect(sync.user === user)
        #expect(sync.rerunOnOpen == false)
        #expect(flexSyncConfig.fileURL?.path.hasPrefix(folder.path) == true)
        #expect(flexSyncConfig.objectTypes?.count == 1)
        #expect(QuerySubscription<Todo>(name: "all_todos").name == "all_todos")
        try await user.logOut()
        #expect(!user.isLoggedIn)
    }
}
