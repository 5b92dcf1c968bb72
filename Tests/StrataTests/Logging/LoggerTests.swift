// The process-wide logger: what Strata reports at open, migration and write transactions
// reaches a custom log function at the levels it asks for, and nothing reaches it when off.

import Foundation
import Synchronization
import Testing
@testable import Strata

final class LoggedNote: Object {
    @Persisted var text = ""
}

/// Collects the messages of one test's file, installed as the shared logger for the duration
/// of `body` (other suites' files report to it meanwhile: their messages are left out).
final class LogCollector: Sendable {
    private let messages = Mutex<[(DatabaseLogger.Level, String)]>([])

    func run<R>(level: DatabaseLogger.Level, path: String, _ body: () throws -> R) rethrows -> R {
        try withSharedLoggerExclusively {
            let previous = DatabaseLogger.shared
            DatabaseLogger.shared = DatabaseLogger(level: level) { [self] level, message in
                guard message.contains(path) else { return }
                messages.withLock { $0.append((level, message)) }
            }
            defer { DatabaseLogger.shared = previous }
            return try body()
        }
    }

    var received: [(DatabaseLogger.Level, String)] { messages.withLock { $0 } }
}

@Suite(.serialized) struct LoggerTests {
    let folder = TemporaryFolder()

    @Test func openAndMigrationMessagesReachACustomLogFunctionAtDebug() throws {
        let collector = LogCollector()
        var configuration = folder.configuration(objectTypes: [LoggedNote.self])
        try collector.run(level: .debug, path: configuration.path) {
            do {
                let database = try Database(configuration: configuration)
                try database.write { database.create(LoggedNote.self, value: ["text": "a"]) }
            }
            configuration.schemaVersion = 2
            configuration.migrationBlock = { _, _ in }
            _ = try Database(configuration: configuration)
        }
        let texts = collector.received.map(\.1)
        #expect(texts.contains { $0.hasPrefix("Opened \(configuration.path)") }, "\(texts)")
        #expect(texts.contains { $0.contains("Migrating \(configuration.path) from schema version 0 to 2") }, "\(texts)")
        #expect(collector.received.allSatisfy { $0.0 <= .debug }, "nothing above the logger's level")
        #expect(!texts.contains { $0.hasPrefix("Began") }, "write transactions are reported at trace only")
    }

    @Test func writeTransactionsAreReportedAtTrace() throws {
        let collector = LogCollector()
        let configuration = folder.configuration(objectTypes: [LoggedNote.self])
        try collector.run(level: .trace, path: configuration.path) {
            let database = try Database(configuration: configuration)
            try database.write { database.create(LoggedNote.self, value: ["text": "a"]) }
            database.beginWrite()
            database.cancelWrite()
        }
        let trace = collector.received.filter { $0.0 == .trace }.map(\.1)
        #expect(trace.contains { $0.hasPrefix("Began a write transaction") }, "\(trace)")
        #expect(trace.contains { $0.hasPrefix("Committed version") }, "\(trace)")
        #expect(trace.contains { $0.hasPrefix("Cancelled a write transaction") }, "\(trace)")
    }

    @Test func aCompactionOnLaunchIsReported() throws {
        let collector = LogCollector()
        var configuration = folder.configuration(objectTypes: [LoggedNote.self])
        do {
            let database = try Database(configuration: configuration)
            try database.write { for i in 0..<50 { database.create(LoggedNote.self, value: ["text": "note \(i)"]) } }
        }
        configuration.shouldCompactOnLaunch = { _, _ in true }
        let count = try collector.run(level: .debug, path: configuration.path) {
            try Database(configuration: configuration).objects(LoggedNote.self).count
        }
        #expect(count == 50)
        let texts = collector.received.map(\.1)
        #expect(texts.contains { $0.hasPrefix("shouldCompactOnLaunch for \(configuration.path)") && $0.hasSuffix("true") }, "\(texts)")
        #expect(collector.received.contains { $0.0 == .info && $0.1 == "Compacted \(configuration.path)" }, "\(texts)")
    }

    @Test func openingADamagedCommitLogAtItsLastGoodVersionIsAWarning() throws {
        let collector = LogCollector()
        var copy = try CommitLogRecoveryTests.damagedCopy(in: folder)
        copy.commitLogRecovery = .openAtLastGoodVersion
        let report = try collector.run(level: .warn, path: copy.path) {
            try Database(configuration: copy).commitLogRecoveryReport
        }
        #expect(report != nil)
        let warnings = collector.received.filter { $0.0 == .warn }.map(\.1)
        #expect(warnings.count == 1 && warnings[0].hasPrefix("Opened \(copy.path) at its last good version"), "\(warnings)")
        #expect(collector.received.allSatisfy { $0.0 <= .warn }, "nothing more detailed than the level")
    }

    @Test func nothingReachesTheLogFunctionWhenOffAndNoMessageIsBuilt() throws {
        let collector = LogCollector()
        let configuration = folder.configuration(objectTypes: [LoggedNote.self])
        try collector.run(level: .off, path: configuration.path) {
            let database = try Database(configuration: configuration)
            try database.write { database.create(LoggedNote.self, value: ["text": "a"]) }
        }
        #expect(collector.received.isEmpty)
        let logger = DatabaseLogger(level: .off) { _, _ in Issue.record("an off logger called its function") }
        var built = false
        logger.log(.fatal, { built = true; return "x" }())
        #expect(!built, "the message is not built when the level lets nothing through")
    }

    @Test func levelsOrderFromOffToAllAndCanChangeAfterInstalling() {
        #expect(DatabaseLogger.Level.allCases == [.off, .fatal, .error, .warn, .info, .detail, .debug, .trace, .all])
        let logger = DatabaseLogger(level: .warn) { _, _ in }
        #expect(logger.isEnabled(.error) && logger.isEnabled(.warn) && !logger.isEnabled(.info))
        logger.level = .trace
        #expect(logger.level == .trace && logger.isEnabled(.trace) && !logger.isEnabled(.all))
        #expect(!logger.isEnabled(.off), "a message is never sent at .off")
    }
}

/// Runs `body` while no other test in this process replaces the shared logger: the Strata and
/// StrataRealmCompat suites that do run in one test process, in parallel, so they take an
/// exclusive `flock` on one file (open file descriptions conflict even within a process).
func withSharedLoggerExclusively<R>(_ body: () throws -> R) rethrows -> R {
    let path = NSTemporaryDirectory() + "/strata-shared-logger-tests.lock"
    let descriptor = open(path, O_CREAT | O_RDWR, 0o644)
    guard descriptor >= 0 else { return try body() }
    defer { close(descriptor) }
    while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
    defer { flock(descriptor, LOCK_UN) }
    return try body()
}
