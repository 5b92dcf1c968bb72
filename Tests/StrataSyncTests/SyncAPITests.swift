// The public API over test doubles: apps and users, the synced configuration, opening with
// and without a download first, the subscription set's updates and states.

import Foundation
import Synchronization
import Testing
import Strata
import StrataSyncProtocol
@testable import StrataSync

final class SyncAPITodo: Object {
    @Persisted(primaryKey: true) var _id = ""
    @Persisted var title = ""
}

/// Logs in whoever asks, as `user-N` per distinct credential, or fails as told; refreshes
/// access tokens as `access-N-refreshed-K`, or fails as told.
final class FakeLogin: LoginService {
    let requests = Mutex<[Credentials]>([])
    let failure = Mutex<SyncError?>(nil)
    let refreshes = Mutex<[String]>([])
    let refreshFailure = Mutex<SyncError?>(nil)

    func refreshAccessToken(baseURL: String, appID: String, refreshToken: String) async throws -> String {
        let count = refreshes.withLock { $0.append(refreshToken); return $0.count }
        if let failure = refreshFailure.withLock({ $0 }) { throw failure }
        return "access-\(refreshToken.dropFirst("refresh-".count))-refreshed-\(count)"
    }

    func logIn(baseURL: String, appID: String, credentials: Credentials) async throws -> LoginResult {
        requests.withLock { $0.append(credentials) }
        if let failure = failure.withLock({ $0 }) { throw failure }
        let name: String
        switch credentials {
        case .anonymous: name = "anonymous"
        case .jwt(let token): name = "jwt-" + token
        }
        return LoginResult(userID: name, accessToken: "access-\(name)", refreshToken: "refresh-\(name)")
    }
}

/// An app whose network is test doubles, with its files in a fresh folder.
struct APIHarness {
    let folder = SyncTestFolder()
    let login = FakeLogin()
    let transport = TestTransport()
    let timer = ManualTimer()
    let ledgers = Mailbox<MemoryLedger>()
    let app: App

    init(appID: String = "api-\(UUID().uuidString)") {
        var configuration = AppConfiguration(baseURL: "http://sync.example:9090", rootDirectory: folder.url)
        configuration.loginService = login
        configuration.transport = transport
        configuration.retryTimer = timer
        configuration.seed = 1
        let ledgers = self.ledgers
        configuration.ledgerFactory = { _, _ in
            let ledger = MemoryLedger()
            ledgers.put(ledger)
            return ledger
        }
        app = App(id: appID, configuration: configuration)
    }

    /// Forgets this app's users held in memory, as a new process starts (the file stays).
    func forgetUsersInMemory() {
        AppUsers.forgetInMemory(appID: app.appID, baseURL: app.configuration.resolvedBaseURL)
    }

    /// Logs in anonymously and returns the user and their synced configuration of `SyncAPITodo`.
    func anonymousUserAndConfiguration() async throws -> (User, Database.Configuration) {
        let user = try await app.login(credentials: .anonymous)
        var configuration = user.flexibleSyncConfiguration()
        configuration.objectTypes = [SyncAPITodo.self]
        return (user, configuration)
    }

    /// A harness whose app has `configuration` (with its own stand-ins) under a new id.
    init(replacing configuration: AppConfiguration) {
        app = App(id: "api-\(UUID().uuidString)", configuration: configuration)
    }

    /// Plays the server for one connection: answers hello with welcome and completes the
    /// subscription version the hello names.
    func serveBootstrap(latestSequence: UInt64 = 0, snapshotSequence: UInt64? = nil) async -> TestConnection {
        let connection = await transport.connections.take()
        guard case .hello(let hello) = await connection.next() else { return connection }
        connection.deliver(.welcome(SyncMessage.Welcome(lastAcknowledged: 0, latestSequence: latestSequence)))
        connection.deliver(.snapshot(SyncMessage.Snapshot(objects: [], checkpoint: Checkpoint(sequence: snapshotSequence ?? latestSequence, checksum: 0),
                                                          subscriptionVersion: hello.subscriptionVersion, isReset: false, isLast: true)))
        return connection
    }
}

/// Opens `configuration` on this thread and returns its session, releasing the instance here
/// (instances are confined to the thread that opened them; the session is not).
func openSession(_ configuration: Database.Configuration) throws -> SyncSession? {
    try Database(configuration: configuration).syncSession
}

/// Opens `configuration` and reads its subscriptions through the instance.
func openAndReadSubscriptions(_ configuration: Database.Configuration) throws -> (SyncSession?, Int, String?) {
    let db = try Database(configuration: configuration)
    return (db.syncSession, db.subscriptions.count, db.subscriptions.first(named: "all")?.objectClassName)
}

/// Opens with a download first, isolated to itself.
actor SyncAPIOpener {
    func open(_ configuration: Database.Configuration, _ behavior: Database.OpenBehavior) async throws -> Bool {
        let db = try await Database(configuration: configuration, actor: self, downloadBeforeOpen: behavior)
        return db.syncSession != nil
    }
}

@Suite("SyncAPI", .timeLimit(.minutes(10)))
struct SyncAPITests {
    // MARK: Apps and users

    @Test func loginMakesTheCurrentUserAndSameIDGivesTheSameUser() async throws {
        let harness = APIHarness()
        #expect(harness.app.currentUser == nil)
        let anonymous = try await harness.app.login(credentials: .anonymous)
        let jwt = try await harness.app.login(credentials: .jwt(token: "abc"))
        #expect(anonymous.id == "anonymous")
        #expect(jwt.id == "jwt-abc")
        #expect(harness.app.currentUser === jwt)
        let ids: Set<String> = Set(harness.app.allUsers.keys)
        #expect(ids == ["anonymous", "jwt-abc"])
        let again = try await harness.app.login(credentials: .anonymous)
        #expect(again === anonymous)
        #expect(harness.app.currentUser === anonymous)
        #expect(jwt.accessToken == "access-jwt-abc")
        #expect(jwt.isLoggedIn)
        // Another App value for the same id and server sees the same users.
        let sameApp = App(id: harness.app.appID, configuration: harness.app.configuration)
        #expect(sameApp.currentUser === anonymous)
    }

    @Test func loggedInUsersAndTheirTokensSurviveARelaunchAndLogOutForgetsThem() async throws {
        let harness = APIHarness()
        let first = try await harness.app.login(credentials: .jwt(token: "a"))
        let second = try await harness.app.login(credentials: .anonymous)
        try await second.refreshAccessToken()
        // A new process: nothing in memory, the same folder.
        harness.forgetUsersInMemory()
        let relaunched = App(id: harness.app.appID, configuration: harness.app.configuration)
        #expect(relaunched.currentUser?.id == second.id)
        #expect(relaunched.currentUser?.accessToken == "access-anonymous-refreshed-1")
        #expect(Set(relaunched.allUsers.keys) == [first.id, second.id])
        #expect(relaunched.allUsers[first.id]?.refreshToken == first.refreshToken)
        #expect(relaunched.currentUser?.syncFileURL == second.syncFileURL)
        let file = harness.folder.url.appendingPathComponent("strata-sync/\(harness.app.appID)/users.json")
        let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(permissions?.intValue == 0o600)

        try await relaunched.currentUser?.logOut()
        harness.forgetUsersInMemory()
        let again = App(id: harness.app.appID, configuration: harness.app.configuration)
        #expect(again.currentUser?.id == first.id)
        #expect(again.allUsers.count == 1)
    }

    @Test func aDamagedUsersFileMeansNoOneIsLoggedIn() async throws {
        let harness = APIHarness()
        let folder = harness.folder.url.appendingPathComponent("strata-sync/\(harness.app.appID)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: folder.appendingPathComponent("users.json"))
        harness.forgetUsersInMemory()
        let app = App(id: harness.app.appID, configuration: harness.app.configuration)
        #expect(app.currentUser == nil)
        let user = try await app.login(credentials: .anonymous)
        harness.forgetUsersInMemory()
        #expect(App(id: app.appID, configuration: app.configuration).currentUser?.id == user.id)
    }

    @Test func aRefusedLoginThrowsItsTypedError() async throws {
        let harness = APIHarness()
        harness.login.failure.withLock { $0 = SyncError(.invalidCredentials, "bad signature") }
        let error = await #expect(throws: SyncError.self) { try await harness.app.login(credentials: .jwt(token: "x")) }
        #expect(error?.code == .invalidCredentials)
        #expect(harness.app.allUsers.isEmpty)
    }

    @Test func logOutForgetsTheUserAndStopsItsSessions() async throws {
        let harness = APIHarness()
        let (user, configuration) = try await harness.anonymousUserAndConfiguration()
        let session = try #require(try openSession(configuration))
        let ledger = await harness.ledgers.take()
        ledger.recordLocalCommit()
        let waiting = Task { try await session.wait(for: .upload) }
        try await user.logOut()
        let error = await #expect(throws: SyncError.self) { try await waiting.value }
        #expect(error?.code == .sessionStopped)
        #expect(!user.isLoggedIn)
        #expect(user.accessToken == nil)
        #expect(harness.app.currentUser == nil)
        #expect(session.state == .inactive)
        #expect(throws: Database.Error.self) { try openSession(configuration) }
    }

    @Test func theSyncURLFollowsTheBaseURLsScheme() throws {
        let plain: String = try SessionRegistry.syncURL(baseURL: "http://host:9090", appID: "todo").absoluteString
        let secure: String = try SessionRegistry.syncURL(baseURL: "https://host/base/", appID: "a b").absoluteString
        #expect(plain == "ws://host:9090/sync/todo")
        #expect(secure == "wss://host/base/sync/a%20b")
        #expect(throws: SyncError.self) { try SessionRegistry.syncURL(baseURL: "ftp://host", appID: "x") }
    }

    @Test func theDefaultBaseURLIsTheEnvironmentsOrLocalhost() {
        let expected = ProcessInfo.processInfo.environment["STRATA_SYNC_URL"] ?? "http://localhost:9090"
        #expect(AppConfiguration().resolvedBaseURL == expected)
        #expect(AppConfiguration(baseURL: "http://x:1").resolvedBaseURL == "http://x:1")
    }

    // MARK: Configuration and opening

    @Test func theFlexibleSyncConfigurationIsAPerUserFileCarryingTheSettings() async throws {
        let harness = APIHarness(appID: "my/app")
        let user = try await harness.app.login(credentials: .jwt(token: "u1"))
        let configuration = user.flexibleSyncConfiguration(initialSubscriptions: { $0.append(QuerySubscription<SyncAPITodo>()) }, rerunOnOpen: true)
        let expected = harness.folder.url.appendingPathComponent("strata-sync/my%2Fapp/jwt-u1/default.strata")
        let path: String? = configuration.fileURL?.standardizedFileURL.path
        #expect(path == expected.standardizedFileURL.path)
        let sync = try #require(configuration.syncConfiguration)
        #expect(sync.user === user)
        #expect(sync.rerunOnOpen)
        #expect(sync.initialSubscriptions != nil)
        #expect(Database.Configuration(inMemoryIdentifier: "plain").syncConfiguration == nil)
    }

    @Test func openingAppliesTheInitialSubscriptionsAndStartsOneSessionPerFile() async throws {
        let harness = APIHarness()
        let user = try await harness.app.login(credentials: .anonymous)
        var configuration = user.flexibleSyncConfiguration(initialSubscriptions: { subscriptions in
            subscriptions.append(QuerySubscription<SyncAPITodo>(name: "all"))
        })
        configuration.objectTypes = [SyncAPITodo.self]
        let (session, count, named) = try openAndReadSubscriptions(configuration)
        #expect(count == 1)
        #expect(named == "SyncAPITodo")
        let subscriptions = try #require(session).subscriptions
        let ledger = await harness.ledgers.take()
        let expected = StoredSubscriptions(version: 1, specs: [SubscriptionSpec(name: "all", className: "SyncAPITodo")], completedVersion: 0)
        let stored = try ledger.subscriptions()
        #expect(stored == expected)
        #expect(subscriptions.state == .pending)
        let again = try await Task.detached { try openSession(configuration) }.value
        #expect(again === session)
        #expect(harness.ledgers.pending.isEmpty)
        let connection = await harness.serveBootstrap()
        _ = await connection.barrier()
        #expect(subscriptions.state == .complete)
        try await user.logOut()
    }

    @Test func aDatabaseThatDoesNotSyncHasNoSession() throws {
        let session = try openSession(Database.Configuration(inMemoryIdentifier: "sync-api-plain", objectTypes: [SyncAPITodo.self]))
        #expect(session == nil)
    }

    @Test func openBehaviorDecidesWhetherToDownloadFirst() {
        let never = Database.OpenBehavior.never, once = Database.OpenBehavior.once, always = Database.OpenBehavior.always
        #expect(!never.downloadsFirst(fileExists: false))
        #expect(!never.downloadsFirst(fileExists: true))
        #expect(once.downloadsFirst(fileExists: false))
        #expect(!once.downloadsFirst(fileExists: true))
        #expect(always.downloadsFirst(fileExists: false))
        #expect(always.downloadsFirst(fileExists: true))
    }

    @Test func downloadBeforeOpenReturnsOnlyAfterTheBootstrapAndTheWelcomesLatest() async throws {
        let harness = APIHarness()
        let user = try await harness.app.login(credentials: .anonymous)
        var configuration = user.flexibleSyncConfiguration(initialSubscriptions: { $0.append(QuerySubscription<SyncAPITodo>(name: "all")) })
        configuration.objectTypes = [SyncAPITodo.self]
        let opened = Mutex(false)
        let opening = Task {
            let result = try await SyncAPIOpener().open(configuration, .always)
            opened.withLock { $0 = true }
            return result
        }
        // The bootstrap completes below the welcome's newest sequence: the open waits for it.
        let connection = await harness.serveBootstrap(latestSequence: 3, snapshotSequence: 1)
        connection.deliver(.download(changesets: [], checkpoint: Checkpoint(sequence: 2, checksum: 0), remaining: 1))
        _ = await connection.barrier(1)
        #expect(!opened.withLock { $0 })
        connection.deliver(.download(changesets: [], checkpoint: Checkpoint(sequence: 3, checksum: 0), remaining: 0))
        #expect(try await opening.value)
        try await user.logOut()
    }

    @Test func downloadBeforeOpenFailsWhenTheServerRefusesTheToken() async throws {
        let harness = APIHarness()
        let (_, configuration) = try await harness.anonymousUserAndConfiguration()
        let opening = Task { try await Database.download(configuration, .always) }
        let connection = await harness.transport.connections.take()
        _ = await connection.next()
        connection.deliver(.error(code: .invalidToken, message: "expired"))
        // The session refreshes the token once and tries again; a second refusal is final.
        let again = await harness.transport.connections.take()
        guard case .hello(let hello) = await again.next() else { Issue.record("a second hello"); return }
        #expect(hello.accessToken == "access-anonymous-refreshed-1")
        again.deliver(.error(code: .invalidToken, message: "forged"))
        let error = await #expect(throws: SyncError.self) { try await opening.value }
        #expect(error?.code == .invalidToken)
        #expect(harness.login.refreshes.withLock { $0 } == ["refresh-anonymous"])
    }

    @Test func anExpiredAccessTokenIsRefreshedAndTheSessionGoesOn() async throws {
        let harness = APIHarness()
        let (user, configuration) = try await harness.anonymousUserAndConfiguration()
        let session = try #require(try openSession(configuration))
        let first = await harness.serveBootstrap()
        _ = await first.barrier(1)
        #expect(session.connectionState == .connected)
        // Half an hour later the connection drops and the server refuses the old token.
        first.breakConnection()
        _ = await harness.timer.requested.take()
        harness.timer.fire()
        let second = await harness.transport.connections.take()
        _ = await second.next()
        second.deliver(.error(code: .invalidToken, message: "the access token expired"))
        let third = await harness.transport.connections.take()
        guard case .hello(let hello) = await third.next() else { Issue.record("hello with the new token"); return }
        #expect(hello.accessToken == "access-anonymous-refreshed-1")
        #expect(user.accessToken == "access-anonymous-refreshed-1")
        third.deliver(.welcome(SyncMessage.Welcome(lastAcknowledged: 0, latestSequence: 0)))
        _ = await third.barrier(2)
        #expect(session.connectionState == .connected)
        #expect(session.state == .active)
        try await user.logOut()
    }

    @Test func aRefusedRefreshTokenStopsTheSession() async throws {
        let harness = APIHarness()
        let user = try await harness.app.login(credentials: .anonymous)
        harness.login.refreshFailure.withLock { $0 = SyncError(.invalidToken, "the refresh token expired") }
        var configuration = user.flexibleSyncConfiguration()
        configuration.objectTypes = [SyncAPITodo.self]
        let opening = Task { try await Database.download(configuration, .always) }
        let connection = await harness.transport.connections.take()
        _ = await connection.next()
        connection.deliver(.error(code: .invalidToken, message: "expired"))
        let error = await #expect(throws: SyncError.self) { try await opening.value }
        #expect(error?.code == .invalidToken)
        #expect(harness.login.refreshes.withLock { $0.count } == 1)
    }

    // MARK: Subscriptions

    @Test func updateStoresSendsAndReturnsOnceTheServerBootstrapsTheVersion() async throws {
        let harness = APIHarness()
        let (user, configuration) = try await harness.anonymousUserAndConfiguration()
        let session = try #require(try openSession(configuration))
        let ledger = await harness.ledgers.take()
        let connection = await harness.serveBootstrap()
        _ = await connection.barrier(1)
        let subscriptions = session.subscriptions
        #expect(subscriptions.count == 0)
        #expect(subscriptions.state == .complete)
        let updating = Task {
            try await subscriptions.update {
                subscriptions.append(QuerySubscription<SyncAPITodo>(name: "mine"), QuerySubscription<SyncAPITodo>())
                subscriptions.append(QuerySubscription<SyncAPITodo>())
                #expect(subscriptions.count == 2)
            }
        }
        let sent = await connection.next()
        let specs: [SubscriptionSpec] = [SubscriptionSpec(name: "mine", className: "SyncAPITodo"), SubscriptionSpec(name: nil, className: "SyncAPITodo")]
        #expect(sent == .subscribe(version: 1, subscriptions: specs))
        let storedSpecs = try ledger.subscriptions().specs
        #expect(storedSpecs == specs)
        #expect(subscriptions.state == .pending)
        connection.deliver(.snapshot(SyncMessage.Snapshot(objects: [], checkpoint: Checkpoint(sequence: 0, checksum: 0),
                                                          subscriptionVersion: 1, isReset: false, isLast: true)))
        try await updating.value
        #expect(subscriptions.state == .complete)
        let names: [String?] = subscriptions.map(\.name)
        #expect(names == ["mine", nil])

        // The callback form reports the same completion.
        let completions = Mailbox<String>()
        subscriptions.update({ subscriptions.append(QuerySubscription<SyncAPITodo>(name: "extra")) }, onComplete: { error in
            completions.put(error.map { "\($0)" } ?? "complete")
        })
        let extra = await connection.next()
        guard case .subscribe(let extraVersion, _) = extra else { Issue.record("sent \(extra)"); return }
        #expect(extraVersion == 2)
        connection.deliver(.snapshot(SyncMessage.Snapshot(objects: [], checkpoint: Checkpoint(sequence: 0, checksum: 0),
                                                          subscriptionVersion: 2, isReset: false, isLast: true)))
        let completion = await completions.take()
        #expect(completion == "complete")
        // A block that changes nothing returns at once.
        try await subscriptions.update { subscriptions.append(QuerySubscription<SyncAPITodo>(name: "mine")) }
        let second = Task {
            try await subscriptions.update {
                subscriptions.remove(named: "mine")
                subscriptions.append(QuerySubscription<SyncAPITodo>(name: "later"))
                subscriptions.removeAll(ofType: SyncAPITodo.self)
                subscriptions.append(QuerySubscription<SyncAPITodo>(name: "last"))
            }
        }
        let resent = await connection.next()
        let expectedResent = SyncMessage.subscribe(version: 3, subscriptions: [SubscriptionSpec(name: "last", className: "SyncAPITodo")])
        #expect(resent == expectedResent)
        try await user.logOut()
        let error = await #expect(throws: SyncError.self) { try await second.value }
        #expect(error?.code == .sessionStopped)
        if case .error(let stateError) = subscriptions.state {
            #expect(stateError.code == .sessionStopped)
        } else {
            Issue.record("state is \(subscriptions.state)")
        }
    }
}

@Suite("SyncAPI attaching", .timeLimit(.minutes(10)))
struct SyncAPIAttachingTests {
    @Test func anOpenOfTheFileFromInsideTheAttachStartsNoSecondSession() async throws {
        let base = APIHarness()  // its folder holds the files until the test ends
        let inner = Mailbox<Bool>()
        var appConfiguration = base.app.configuration
        appConfiguration.ledgerFactory = { configuration, _ in
            // The ledger opening the file itself, with the configuration it was given.
            inner.put(try Database(configuration: configuration).syncSession == nil)
            return MemoryLedger()
        }
        let harness = APIHarness(replacing: appConfiguration)
        let (user, configuration) = try await harness.anonymousUserAndConfiguration()
        let session = try openSession(configuration)
        #expect(session != nil)
        #expect(await inner.take())
        try await user.logOut()
    }
}
