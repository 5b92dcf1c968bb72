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
}
