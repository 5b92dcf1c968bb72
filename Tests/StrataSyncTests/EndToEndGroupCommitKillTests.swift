// A server killed while several clients' uploads are being stored together (group commit),
// end to end with the real client: the kill is keyed to the first acknowledgement any writer
// gets, not to time; at the end every writer's changesets are on the server exactly once.

import Foundation
import Testing
import Strata
@testable import StrataSync
import StrataSyncProtocol
import StrataSyncServer

@Suite("EndToEnd group commit kills", .serialized, .timeLimit(.minutes(10)))
struct EndToEndGroupCommitKillTests {
    /// Four writers with outboxes of 500 changesets each resume at once (so their uploads reach
    /// the store together); the server is SIGKILLed at the first acknowledgement and started
    /// again on its data; a newcomer then holds every write, and the history holds each
    /// writer's changesets once, numbered without gaps.
    private func killTheServerMidGroupCommit(_ storage: (String) throws -> SyncServerProcess.Storage) async throws {
        let folder = try ServerTestEnvironment.temporaryDirectory()
        let server = try await SyncServerProcess(storage: try storage(folder + "/server-data"), logFolder: folder)
        let app = App(id: ServerTestEnvironment.uniqueAppID("e2e-group"),
                      configuration: AppConfiguration(baseURL: "http://127.0.0.1:\(server.port)", rootDirectory: URL(fileURLWithPath: folder)))
        var writers: [EndToEndDevice] = []
        var sessions: [SyncSession] = []
        var keys: [String] = []
        for index in 0..<4 {
            let writer = try await EndToEndDevice(name: "writer\(index)", app: app)
            let session = try await writer.open()
            session.suspend()
            #expect(await session.reach(.disconnected))
            keys += try await writer.create(500, payloadBytes: 200)
            writers.append(writer)
            sessions.append(session)
        }
        for session in sessions { session.resume() }
        await withTaskGroup(of: Void.self) { group in
            for session in sessions { group.addTask { await session.firstUploadAcknowledgement() } }
            await group.next()
            group.cancelAll()
        }
        await server.kill()
        try await server.start()
        for writer in writers { try await writer.sync() }

        let newcomer = try await EndToEndDevice(name: "newcomer", app: app)
        try await newcomer.open()
        let seen = try await newcomer.dump()
        #expect(Set(seen.keys) == Set(keys), "server: \(server.errorOutput)")
        for writer in writers { try await writer.user.logOut() }
        try await newcomer.user.logOut()
        await server.kill()

        let history = try await EndToEndRestartTests.history(of: app.appID, in: try storage(folder + "/server-data"))
        #expect(history.count == keys.count)
        #expect(history.map(\.serverSequence) == Array(1...UInt64(history.count)))
        let byClient = Dictionary(grouping: history, by: \.clientID)
        #expect(byClient.count == writers.count)
        for (client, changesets) in byClient {
            #expect(changesets.map(\.clientSequence) == Array(1...500), "client \(client)'s changesets once each, in order")
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test(.enabled(if: EndToEndRestartEnvironment.serverBuilt, "needs strata-sync-server"))
    func theEmbeddedServerKilledMidGroupCommitLosesAndDoublesNothing() async throws {
        try await killTheServerMidGroupCommit { .embedded(folder: $0) }
    }

    @Test(.enabled(if: EndToEndRestartEnvironment.serverBuilt && PostgresTestEnvironment.shouldRun,
                   "needs strata-sync-server and STRATA_TEST_POSTGRES_URL"))
    func thePostgresServerKilledMidGroupCommitLosesAndDoublesNothing() async throws {
        let url = try PostgresTestEnvironment.requireURL()
        try await killTheServerMidGroupCommit { _ in .postgres(url: url) }
    }
}
