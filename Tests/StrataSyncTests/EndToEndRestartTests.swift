// A server killed mid-upload and PostgreSQL restarting under syncing clients, end to end with
// the real client. The faults are keyed to the clients' progress (the first upload
// acknowledgement), not to time; at the end every local write must be on the server once.

import Foundation
import Logging
import Testing
import Strata
@testable import StrataSync
import StrataSyncProtocol
import StrataSyncServer

/// Where the restart suites find their server and database.
enum EndToEndRestartEnvironment {
    static var serverBuilt: Bool { ProductExecutable.syncServer != nil }
    /// The script of scripts/with-postgres.sh that makes, stops and starts its second cluster.
    static var postgresControl: String? {
        ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES_CTL"].flatMap { $0.isEmpty ? nil : $0 }
    }
    /// Whether the PostgreSQL restart runs: with the control script, or in CI (where it then fails).
    static var restartsPostgres: Bool { postgresControl != nil || ProcessInfo.processInfo.environment["STRATA_CI"] == "1" }

    /// Runs the control script with `action` (`url`, `stop` or `start`), waits for it and
    /// returns what it printed (see `ShortCommand` for why not Foundation's `Process`).
    @discardableResult
    static func postgres(_ action: String) async throws -> String {
        let control = try #require(postgresControl, "STRATA_TEST_POSTGRES_CTL is not set: run through scripts/test.sh")
        let (status, output) = try await ShortCommand.run(control, [action])
        #expect(status == 0, "\(control) \(action) failed (status \(status))")
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension SyncSession {
    /// Returns once the server acknowledged some of this session's uploads (or all of them).
    func firstUploadAcknowledgement() async {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let token = addProgressNotification(for: .upload, mode: .reportIndefinitely) { progress in
            if progress.transferred > 0 { continuation.yield() }
        }
        var iterator = stream.makeAsyncIterator()
        _ = await iterator.next()
        token?.invalidate()
    }
}

@Suite("EndToEnd restarts", .serialized, .timeLimit(.minutes(10)))
struct EndToEndRestartTests {
    /// A large outbox (several upload frames), the server SIGKILLed at the first
    /// acknowledgement and started again on its data; a newcomer then holds every write once.
    private func killTheServerMidUpload(_ storage: (String) throws -> SyncServerProcess.Storage) async throws {
        let folder = try ServerTestEnvironment.temporaryDirectory()
        let serverStorage = try storage(folder + "/server-data")
        // Every await is a named step under a deadline, so a step that never ends fails the
        // test with its name instead of holding the run.
        let server = try await withStepDeadline(seconds: 60, "starting the server") {
            try await SyncServerProcess(storage: serverStorage, logFolder: folder)
        }
        let app = App(id: ServerTestEnvironment.uniqueAppID("e2e-kill"),
                      configuration: AppConfiguration(baseURL: "http://127.0.0.1:\(server.port)", rootDirectory: URL(fileURLWithPath: folder)))
        let writer = try await withStepDeadline(seconds: 60, "logging in the writer") { try await EndToEndDevice(name: "writer", app: app) }
        let session = try await withStepDeadline(seconds: 60, "opening the writer's file") { try await writer.open() }
        session.suspend()
        #expect(try await withStepDeadline(seconds: 30, "suspending the writer's session") { await session.reach(.disconnected) })
        // 2,000 changesets of ~700 bytes: at least two upload frames (≤ 1,000 changesets, ≤ 1 MiB).
        let keys = try await withStepDeadline(seconds: 120, "writing 2,000 objects") { try await writer.create(2_000, payloadBytes: 700) }
        session.resume()
        try await withStepDeadline(seconds: 60, "the first acknowledgement of the upload") { await session.firstUploadAcknowledgement() }
        try await withStepDeadline(seconds: 30, "killing the server") { await server.kill() }
        try await withStepDeadline(seconds: 60, "starting the server again") { try await server.start() }
        try await withStepDeadline(seconds: 120, "syncing the writer after the restart") { try await writer.sync() }

        let newcomer = try await withStepDeadline(seconds: 60, "logging in the newcomer") { try await EndToEndDevice(name: "newcomer", app: app) }
        try await withStepDeadline(seconds: 120, "opening the newcomer's file") { try await newcomer.open() }
        let seen = try await withStepDeadline(seconds: 60, "reading the newcomer's objects") { try await newcomer.dump() }
        #expect(Set(seen.keys) == Set(keys), "server: \(server.errorOutput)")
        try await withStepDeadline(seconds: 30, "logging the users out") {
            try await writer.user.logOut()
            try await newcomer.user.logOut()
        }
        try await withStepDeadline(seconds: 30, "stopping the server") { await server.kill() }

        // The server's history holds each of the writer's changesets exactly once.
        let history = try await withStepDeadline(seconds: 120, "reading the server's history") {
            try await Self.history(of: app.appID, in: serverStorage)
        }
        #expect(history.count == keys.count)
        #expect(Set(history.map { "\($0.clientID):\($0.clientSequence)" }).count == history.count)
        #expect(Set(history.map(\.clientSequence)) == Set(1...UInt64(keys.count)))
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Every changeset of `app`'s history in the (stopped) server's store.
    static func history(of app: String, in storage: SyncServerProcess.Storage) async throws -> [ServerChangeset] {
        let store: any SyncStorage
        switch storage {
        case .embedded(let folder): store = try EmbeddedSyncStorage(directory: folder)
        case .postgres(let url): store = try PostgresSyncStorage(url: url)
        }
        let background = Task { try await store.run { _, _ in } }
        defer { background.cancel() }
        try await store.prepare()
        var changesets: [ServerChangeset] = []
        while true {
            let page = try await store.history(app: app, after: changesets.last?.serverSequence ?? 0, limit: 500)
            if page.changesets.isEmpty { break }
            changesets += page.changesets
        }
        return changesets
    }

    @Test(.enabled(if: EndToEndRestartEnvironment.serverBuilt, "needs strata-sync-server"))
    func theEmbeddedServerKilledMidUploadLosesAndDoublesNothing() async throws {
        try await killTheServerMidUpload { .embedded(folder: $0) }
    }

    @Test(.enabled(if: EndToEndRestartEnvironment.serverBuilt && PostgresTestEnvironment.shouldRun,
                   "needs strata-sync-server and STRATA_TEST_POSTGRES_URL"))
    func thePostgresServerKilledMidUploadLosesAndDoublesNothing() async throws {
        let url = try PostgresTestEnvironment.requireURL()
        try await killTheServerMidUpload { _ in .postgres(url: url) }
    }

    /// PostgreSQL (the second cluster of scripts/with-postgres.sh, so other suites' database
    /// stays up) stops (as a crash) at the first acknowledgement of one client's large upload
    /// while another client writes, and starts again: both sessions reconnect by themselves,
    /// converge, and every write is on the server once.
    ///
    /// Every await is a named step under a deadline (``withStepDeadline(seconds:_:sourceLocation:_:)``):
    /// a step that never finishes fails the test saying which, instead of holding the run past
    /// the time limit (which only cancels). The deadlines are far above a step's normal
    /// duration; the reconnecting ones allow for a store call given up on after
    /// `PostgresSyncStorage.operationLimit` (30 s) plus the client's backoff.
    @Test(.enabled(if: EndToEndRestartEnvironment.restartsPostgres, "needs scripts/with-postgres.sh's STRATA_TEST_POSTGRES_CTL"))
    func postgresRestartingUnderSyncingClientsLosesAndDoublesNothing() async throws {
        let url = try await withStepDeadline(seconds: 90, "creating the restartable PostgreSQL cluster") {
            try await EndToEndRestartEnvironment.postgres("url")
        }
        var logger = Logger(label: "e2e-pg-restart", factory: { StreamLogHandler.standardError(label: $0) })
        // STRATA_TEST_SYNC_LOG=trace|debug|… shows the server's sessions and store calls.
        logger.logLevel = ProcessInfo.processInfo.environment["STRATA_TEST_SYNC_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        let server = SyncServer(configuration: .init(port: 0, storage: .postgres(url: url)), logger: logger)
        let port = try await withStepDeadline(seconds: 60, "starting the server") { try await server.start() }
        let app = App(id: ServerTestEnvironment.uniqueAppID("e2e-pg"),
                      configuration: AppConfiguration(baseURL: "http://127.0.0.1:\(port)",
                                                      rootDirectory: URL(fileURLWithPath: try ServerTestEnvironment.temporaryDirectory())))
        var users: [User] = []
        var failure: (any Error)?
        do {
            try await restartPostgres(under: app, users: &users)
        } catch {
            // Thrown after the cleanup below; a timed-out step has recorded its issue already.
            failure = error
        }
        let loggedIn = users
        try await withStepDeadline(seconds: 30, "logging the users out") {
            for user in loggedIn { try await user.logOut() }
        }
        try await withStepDeadline(seconds: 60, "shutting the server down") { await server.shutdown() }
        if let failure, !(failure is StepTimedOut) { throw failure }
    }

    /// The scenario of ``postgresRestartingUnderSyncingClientsLosesAndDoublesNothing()``
    /// against a running server of `app`; each device's user is added to `users` once logged in.
    private func restartPostgres(under app: App, users: inout [User]) async throws {
        let first = try await withStepDeadline(seconds: 60, "logging in the first device") {
            try await EndToEndDevice(name: "first", app: app)
        }
        users.append(first.user)
        let second = try await withStepDeadline(seconds: 60, "logging in the second device") {
            try await EndToEndDevice(name: "second", app: app)
        }
        users.append(second.user)
        let firstSession = try await withStepDeadline(seconds: 60, "opening the first device's file") { try await first.open() }
        try await withStepDeadline(seconds: 60, "opening the second device's file") { try await second.open() }
        let early = try await second.write(5)
        try await withStepDeadline(seconds: 60, "syncing the second device's first writes") { try await second.sync() }

        firstSession.suspend()
        let disconnected = try await withStepDeadline(seconds: 30, "suspending the first session") {
            await firstSession.reach(.disconnected)
        }
        #expect(disconnected)
        let bulk = try await first.create(1_500, payloadBytes: 700)
        firstSession.resume()
        try await withStepDeadline(seconds: 60, "the first acknowledgement of the bulk upload") {
            await firstSession.firstUploadAcknowledgement()
        }
        try await withStepDeadline(seconds: 90, "stopping PostgreSQL") { try await EndToEndRestartEnvironment.postgres("stop") }
        let during = try await second.write(5)
        try await withStepDeadline(seconds: 90, "starting PostgreSQL again") { try await EndToEndRestartEnvironment.postgres("start") }

        try await withStepDeadline(seconds: 120, "syncing the first device after the restart") { try await first.sync() }
        try await withStepDeadline(seconds: 120, "syncing the second device after the restart") { try await second.sync() }
        // A newcomer opened now downloads through everything both uploaded; the two then
        // catch up to its checkpoint.
        let newcomer = try await withStepDeadline(seconds: 60, "logging in the newcomer") {
            try await EndToEndDevice(name: "newcomer", app: app)
        }
        users.append(newcomer.user)
        let newcomerSession = try await withStepDeadline(seconds: 120, "opening the newcomer's file") { try await newcomer.open() }
        let latest = try await withStepDeadline(seconds: 30, "reading the newcomer's checkpoint") {
            await newcomerSession.downloadCheckpoint()
        }
        try await withStepDeadline(seconds: 120, "the first device downloading through \(latest)") {
            await firstSession.downloaded(through: latest)
        }
        let secondSession = try await second.session
        try await withStepDeadline(seconds: 120, "the second device downloading through \(latest)") {
            await secondSession.downloaded(through: latest)
        }
        let firstDump = try await first.dump()
        let secondDump = try await second.dump()
        let newcomerDump = try await newcomer.dump()
        #expect(firstDump == secondDump)
        #expect(newcomerDump == firstDump)
        #expect(Set(bulk).isSubset(of: Set(newcomerDump.keys)))
        #expect(EndToEndCheck.holdsExactlyOnce(early + during, in: newcomerDump, note: "second"))
    }
}
