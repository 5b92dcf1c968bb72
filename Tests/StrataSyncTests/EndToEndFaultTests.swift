// Issue 31's faults end to end, with the real client (`App`, `login`, the flexible sync
// configuration, `Database(configuration:actor:downloadBeforeOpen:)`, `syncSession`) against a
// real server: in this process where nothing is killed, in its own process where the server is
// killed. Every wait is for the session's own progress or state; the time limits turn a hang
// into a failure.

import Foundation
import Testing
import Strata
@testable import StrataSync
import StrataSyncServer

/// An in-process server on the embedded store, whose store the test can also read.
struct EndToEndServer {
    let server: SyncServer
    let storage: EmbeddedSyncStorage
    let port: Int

    static func start(apps: AppsConfiguration = .open) async throws -> EndToEndServer {
        let storage = try EmbeddedSyncStorage(directory: try ServerTestEnvironment.temporaryDirectory())
        let server = SyncServer(configuration: .init(port: 0, storage: .custom(storage), apps: apps))
        return EndToEndServer(server: server, storage: storage, port: try await server.start())
    }

    /// A fresh app id on this server, its files in a fresh folder.
    func app(_ id: String = ServerTestEnvironment.uniqueAppID("e2e")) throws -> App {
        App(id: id, configuration: AppConfiguration(baseURL: "http://127.0.0.1:\(port)",
                                                    rootDirectory: URL(fileURLWithPath: try ServerTestEnvironment.temporaryDirectory())))
    }
}

@Suite("EndToEnd faults", .timeLimit(.minutes(10)))
struct EndToEndFaultTests {
    // MARK: Credentials and schemas

    @Test func aJWTSignedWithAnotherKeyIsRefusedAtLoginWithATypedError() async throws {
        let appID = ServerTestEnvironment.uniqueAppID("e2e-jwt")
        let server = try await EndToEndServer.start(apps: AppsConfiguration(apps: [appID: .init(jwtKeys: ["right key"], anonymous: false)]))
        let app = try server.app(appID)
        let error = await #expect(throws: SyncError.self) {
            try await app.login(credentials: .jwt(token: ServerAuthTests.jwt(#"{"sub":"mallory"}"#, key: "wrong key")))
        }
        #expect(error?.code == .invalidCredentials)
        #expect(app.allUsers.isEmpty)
        // The same claims signed with the configured key log in, so the refusal was the key's.
        let user = try await app.login(credentials: .jwt(token: ServerAuthTests.jwt(#"{"sub":"ann"}"#, key: "right key")))
        #expect(user.id == "ann")
        await server.server.shutdown()
    }

    @Test func aForgedAccessTokenStopsOnlyThatSessionWithInvalidToken() async throws {
        let server = try await EndToEndServer.start()
        let app = try server.app()
        let good = try await EndToEndDevice(name: "good", app: app)
        try await good.open()
        let forger = try await EndToEndDevice(name: "forger", app: app)
        forger.user.setTokens(access: "forged.token", refresh: "forged.refresh")
        let session = try await forger.open(downloadBeforeOpen: .never)
        await session.stopped()
        #expect(session.lastError?.code == .invalidToken)
        #expect(session.state == .inactive)
        let error = await #expect(throws: SyncError.self) { try await session.wait(for: .download) }
        #expect(error?.code == .invalidToken)
        // The server and the other session carry on.
        let tokens = try await good.write(3)
        try await good.sync()
        #expect(EndToEndCheck.holdsExactlyOnce(tokens, in: try await good.dump(), note: "good"))
        try await good.user.logOut()
        try await forger.user.logOut()
        await server.server.shutdown()
    }

    @Test func aClientWhoseSchemaBreaksTheAppsIsStoppedWhileAnotherKeepsSyncing() async throws {
        let server = try await EndToEndServer.start()
        let app = try server.app()
        let good = try await EndToEndDevice(name: "good", app: app)
        try await good.open()
        let before = try await good.write(2)
        try await good.sync()

        let mismatched = try await EndToEndDevice(name: "mismatched", app: app)
        let session = try await mismatched.open(downloadBeforeOpen: .never, types: [EndToEndNoteWithIntegerText.self])
        await session.stopped()
        #expect(session.lastError?.code == .schemaMismatch)
        #expect(session.state == .inactive)
        let error = await #expect(throws: SyncError.self) { try await session.wait(for: .download) }
        #expect(error?.code == .schemaMismatch)

        // The good client keeps syncing, and a newcomer sees all of its writes once.
        let after = try await good.write(3)
        try await good.sync()
        let newcomer = try await EndToEndDevice(name: "newcomer", app: app)
        try await newcomer.open()
        let seen = try await newcomer.dump()
        #expect(EndToEndCheck.holdsExactlyOnce(before + after, in: seen, note: "good"))
        #expect(seen["mismatched"] == nil)
        for user in [good.user, mismatched.user, newcomer.user] { try await user.logOut() }
        await server.server.shutdown()
    }

    // MARK: Client reset

    @Test func aClientOfflinePastCompactionKeepsItsPendingWritesThroughAReset() async throws {
        let server = try await EndToEndServer.start(apps: AppsConfiguration(historyLimit: 5))
        let app = try server.app()
        let offline = try await EndToEndDevice(name: "offline", app: app)
        let online = try await EndToEndDevice(name: "online", app: app)
        let offlineSession = try await offline.open()
        try await online.open()

        let synced = try await offline.write(3)
        try await offline.sync()
        try await online.sync()
        offlineSession.suspend()
        #expect(await offlineSession.reach(.disconnected))
        let seenByOffline = try await server.storage.position(app: app.appID).latestSequence

        let pending = try await offline.write(4)
        let others = try await online.write(20)
        try await online.sync()
        let compacted = try await server.storage.position(app: app.appID).compactedThrough
        #expect(compacted > seenByOffline, "the offline client's checkpoint must be behind the compacted history")

        offlineSession.resume()
        try await offline.sync()
        try await online.sync()
        // Both have applied everything the server acknowledged.
        let latest = try await server.storage.position(app: app.appID).latestSequence
        await offlineSession.downloaded(through: latest)
        await (try await online.session).downloaded(through: latest)
        let offlineDump = try await offline.dump()
        let onlineDump = try await online.dump()
        #expect(offlineDump == onlineDump)
        #expect(EndToEndCheck.holdsExactlyOnce(synced + pending, in: onlineDump, note: "offline"))
        #expect(EndToEndCheck.holdsExactlyOnce(others, in: offlineDump, note: "online"))
        #expect(offlineDump["offline"]?.text == "offline write 7")
        try await offline.user.logOut()
        try await online.user.logOut()
        await server.server.shutdown()
    }
}
