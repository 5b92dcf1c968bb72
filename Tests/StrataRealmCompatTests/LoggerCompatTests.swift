// RealmSwift's `Logger` (10.39+) as applications set it up: a custom logger as the shared one,
// its level changed later; messages of a realm's open arrive at `.debug` and none at `.off`.

import Foundation
import Synchronization
import Testing
import StrataRealmCompat

class CompatLoggedItem: Object {
    @Persisted var name = ""
}

@Suite(.serialized) struct LoggerCompatTests {
    @Test func aCustomSharedLoggerReceivesARealmsOpenAtDebugAndNothingWhenOff() throws {
        try withSharedLoggerExclusively { try customSharedLogger() }
    }

    func customSharedLogger() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("logged.strata"), objectTypes: [CompatLoggedItem.self])
        configuration.maximumFileSize = 1 << 30
        let path = configuration.fileURL!.path
        let received = Mutex<[(Logger.LogLevel, String)]>([])
        let previous = Logger.shared
        defer { Logger.shared = previous }
        Logger.shared = Logger(level: .debug) { level, message in
            if message.contains(path) { received.withLock { $0.append((level, message)) } }
        }
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(CompatLoggedItem()) }
        }
        #expect(received.withLock { $0 }.contains { $0.0 == .info && $0.1.hasPrefix("Opened") })

        received.withLock { $0.removeAll() }
        Logger.shared.level = .off
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(CompatLoggedItem()) }
        }
        #expect(received.withLock { $0 }.isEmpty)
    }

    @Test func aCategoryLoggerReceivesStorageMessagesAndTheirLevelIsSetByCategory() throws {
        try withSharedLoggerExclusively { try categoryLogger() }
    }

    func categoryLogger() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("logged.strata"), objectTypes: [CompatLoggedItem.self])
        configuration.maximumFileSize = 1 << 30
        let path = configuration.fileURL!.path
        let received = Mutex<[(Logger.LogLevel, String, String)]>([])
        let previous = Logger.shared
        defer { Logger.shared = previous }
        Logger.shared = Logger(function: { level, category, message in
            if message.contains(path) { received.withLock { $0.append((level, category.rawValue, message)) } }
        })
        Logger.setLogLevel(.trace, for: Category.Storage.transaction)
        #expect(Logger.logLevel(for: Category.realm) == .trace)
        Logger.setLogLevel(.off, for: Category.Sync.Client.all)
        #expect(Logger.logLevel(for: Category.Storage.all) == .trace, "a sync category leaves the storage level alone")
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(CompatLoggedItem()) }
        }
        let messages = received.withLock { $0 }
        #expect(messages.contains { $0.0 == .info && $0.1 == "Realm.Storage" && $0.2.hasPrefix("Opened") }, "\(messages)")
        #expect(messages.contains { $0.0 == .trace && $0.1 == "Realm.Storage.Transaction" && $0.2.hasPrefix("Committed") }, "\(messages)")
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
