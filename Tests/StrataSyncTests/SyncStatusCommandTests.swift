import Foundation
import Strata
@testable import StrataSync
import Testing

/// `strata sync-status FILE`, run as a separate process on files the ledger wrote.
@Suite("strata sync-status", .offThePool)
struct SyncStatusCommandTests {
    struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    static func runStrata(_ arguments: String...) throws -> Run {
        let executable = try #require(ProductExecutable.path(named: "strata", override: "STRATA_EXECUTABLE"),
                                      "the strata executable was not found beside the tests; run swift build first")
        let folder = LedgerFolder()
        let outputURL = folder.url.appendingPathComponent("stdout"), errorsURL = folder.url.appendingPathComponent("stderr")
        try Data().write(to: outputURL)
        try Data().write(to: errorsURL)
        let output = try FileHandle(forWritingTo: outputURL), errors = try FileHandle(forWritingTo: errorsURL)
        defer { try? output.close(); try? errors.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: try String(contentsOf: outputURL, encoding: .utf8),
                   errors: try String(contentsOf: errorsURL, encoding: .utf8))
    }

    @Test func reportsTheClientIDPendingUploadsAndCheckpoint() throws {
        let folder = LedgerFolder()
        let path: String
        let clientID: UInt64
        do {
            let client = try LedgerClient(name: "status", folder: folder.url)
            try client.db.write {
                client.db.create(LedgerTask.self, value: ["id": "a", "title": "one"])
            }
            try client.db.write {
                client.db.create(LedgerTask.self, value: ["id": "b", "title": "two"])
            }
            try client.ledger.acknowledge(through: 1)
            clientID = client.ledger.clientID
            path = try #require(client.configuration.fileURL?.path)
            client.ledger.detach()
        }
        let run = try Self.runStrata("sync-status", path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("sync client \(String(clientID, radix: 16))"), "\(run.output)")
        #expect(run.output.contains("pending uploads: 1 changeset\n"), "\(run.output)")
        #expect(run.output.contains("last acknowledged upload: 1"), "\(run.output)")
        #expect(run.output.contains("last checkpoint: 0"), "\(run.output)")
    }

    @Test func aFileThatNeverSyncedIsAFailureWithOneLine() throws {
        let folder = LedgerFolder()
        let url = folder.url.appendingPathComponent("plain.strata")
        do {
            let db = try Database(configuration: Database.Configuration(fileURL: url, objectTypes: [LedgerPerson.self]))
            try db.write { db.create(LedgerPerson.self, value: ["id": 1, "name": "Ann"]) }
        }
        let run = try Self.runStrata("sync-status", url.path)
        #expect(run.status == 1)
        #expect(run.errors.contains("never been synced"), "\(run.errors)")
        #expect(run.output.isEmpty)
    }
}
