// A server killed mid-upload and PostgreSQL restarting under syncing clients, end to end with
// the real client. The faults are keyed to the clients' progress (the first upload
// acknowledgement), not to time; at the end every local write must be on the server once.

import Foundation
import Testing
import Strata
@testable import StrataSync
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
    /// returns what it printed.
    @discardableResult
    static func postgres(_ action: String) throws -> String {
        let control = try #require(postgresControl, "STRATA_TEST_POSTGRES_CTL is not set: run through scripts/test.sh")
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: control)
        process.arguments = [action]
        process.standardOutput = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(control) \(action) failed")
        return String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
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

@Suite("EndToEnd restarts", .serialized, .timeLimit(.minutes(3)))
struct EndToEndRestartTests {
    /// A large outbox (several upload frames), the server SIGKILLed at the first
    /// acknowledgement and started again on its data; a newcomer then holds every write once.
    private func killTheServerMidUpload(_ storage: (String) throws -> SyncServerProcess.Storage) async throws {
        let folder = try ServerTestEnvironment.temporaryDirectory()
        let server = try await SyncServerProcess(storage: try storage(folder + "/server-data"), logFolder: folder)
        let app = App(id: ServerTestEnvironment.uniqueAppID("e2e-kill"),
                      configuration: AppConfiguration(baseURL: "http://127.0.0.1:\(server.port)", rootDirectory: URL(fileURLWithPath: folder)))
        let writer = try await EndToEndDevice(name: "writer", app: app)
        let session = try await writer.open()
        session.suspend()
        #expect(await session.reach(.disconnected))
        // 2,500 changesets of 4 list inserts: at least three upload frames (≤ 1,000 each).
        let tokens = try await writer.write(2_500, tokensPerWrite: 4)
        session.resume()
        await session.firstUploadAcknowledgement()
        await server.kill()
        try await server.start()
        try await writer.sync()
        #expect(EndToEndCheck.holdsExactlyOnce(tokens, in: try await writer.dump(), note: "writer"))

        let newcomer = try await EndToEndDevice(name: "newcomer", app: app)
        try await newcomer.open()
        let seen = try await newcomer.dump()
        #expect(EndToEndCheck.holdsExactlyOnce(tokens, in: seen, note: "writer"), "server: \(server.errorOutput)")
        #expect(EndToEndCheck.duplicates(in: seen).isEmpty)
        try await writer.user.logOut()
        try await newcomer.user.logOut()
        await server.kill()
        try? FileManager.default.removeItem(atPath: folder)
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
    @Test(.enabled(if: EndToEndRestartEnvironment.restartsPostgres, "needs scripts/with-postgres.sh's STRATA_TEST_POSTGRES_CTL"))
    func postgresRestartingUnderSyncingClientsLosesAndDoublesNothing() async throws {
        let url = try EndToEndRestartEnvironment.postgres("url")
        let server = SyncServer(configuration: .init(port: 0, storage: .postgres(url: url)))
        let port = try await server.start()
        let app = App(id: ServerTestEnvironment.uniqueAppID("e2e-pg"),
                      configuration: AppConfiguration(baseURL: "http://127.0.0.1:\(port)",
                                                      rootDirectory: URL(fileURLWithPath: try ServerTestEnvironment.temporaryDirectory())))
        let first = try await EndToEndDevice(name: "first", app: app)
        let second = try await EndToEndDevice(name: "second", app: app)
        let firstSession = try await first.open()
        try await second.open()
        let early = try await second.write(5)
        try await second.sync()

        firstSession.suspend()
        #expect(await firstSession.reach(.disconnected))
        let bulk = try await first.write(1_500, tokensPerWrite: 4)
        firstSession.resume()
        await firstSession.firstUploadAcknowledgement()
        try EndToEndRestartEnvironment.postgres("stop")
        let during = try await second.write(5)
        try EndToEndRestartEnvironment.postgres("start")

        try await first.sync()
        try await second.sync()
        try await first.sync()
        let firstDump = try await first.dump()
        let secondDump = try await second.dump()
        #expect(firstDump == secondDump)
        #expect(EndToEndCheck.holdsExactlyOnce(bulk, in: secondDump, note: "first"))
        #expect(EndToEndCheck.holdsExactlyOnce(early + during, in: firstDump, note: "second"))

        let newcomer = try await EndToEndDevice(name: "newcomer", app: app)
        try await newcomer.open()
        #expect(try await newcomer.dump() == firstDump)
        for user in [first.user, second.user, newcomer.user] { try await user.logOut() }
        await server.shutdown()
    }
}
