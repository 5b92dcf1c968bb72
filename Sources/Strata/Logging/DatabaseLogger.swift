// Strata's logging hook: one process-wide logger (`DatabaseLogger.shared`) that the public
// layer reports to at the points an operator wants to see (a file opened, a migration run, a
// file compacted, a damaged commit log recovered, write transactions at `.trace`). Strata
// depends on the toolchain only, so this is a level and a function, not swift-log; an
// application forwards the function to whatever logging it uses.
//
// Cost when off: every report is `DatabaseLogger.log(_:_:)` with an autoclosure message, which
// reads the shared logger and its level (one uncontended lock, one atomic load) and builds the
// message only when the level lets it through.

import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Receives what Strata reports about its work: opening files, migrations, compaction,
/// recovery of damaged files, and (at `.trace`) write transactions.
///
/// Install one for the whole process, or change the level of the current one:
///
/// ```swift
/// DatabaseLogger.shared = DatabaseLogger(level: .debug) { level, message in
///     print("[strata \(level)] \(message)")
/// }
/// DatabaseLogger.shared.level = .info
/// ```
///
/// The function may be called from any thread, several at once; it must do its own
/// synchronisation. It is called while Strata holds internal locks, so it must not use a
/// database. The default logger writes warnings and errors (`.warn` and more severe) to
/// standard error.
public final class DatabaseLogger: Sendable {
    /// How much is reported: each level includes the ones before it. A message is passed on
    /// when its level is at most the logger's (and neither is `.off`).
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        /// Nothing.
        case off
        /// Failures that stop the process.
        case fatal
        /// Errors that an operation reports to its caller (a damaged file found at open).
        case error
        /// Something went wrong but was handled (a damaged commit log cut back at open).
        case warn
        /// Files opened and closed, migrations, compactions: a few messages per file.
        case info
        /// More about each of those (versions, sizes).
        case detail
        /// What helps to debug an application: schema changes, decisions taken at open.
        case debug
        /// Every write transaction: begun, committed, cancelled.
        case trace
        /// Everything.
        case all

        /// Orders levels from `.off` (least) to `.all` (most).
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The level's name: `off`, `fatal`, `error`, …
        public var description: String {
            switch self {
            case .off: "off"
            case .fatal: "fatal"
            case .error: "error"
            case .warn: "warn"
            case .info: "info"
            case .detail: "detail"
            case .debug: "debug"
            case .trace: "trace"
            case .all: "all"
            }
        }
    }

    /// What a logger calls with each message it lets through.
    public typealias LogFunction = @Sendable (_ level: Level, _ message: String) -> Void

    private let currentLevel: Atomic<Int>
    private let logFunction: LogFunction

    /// A logger that passes messages up to `level` to `logFunction`.
    public init(level: Level, logFunction: @escaping LogFunction) {
        self.currentLevel = Atomic(level.rawValue)
        self.logFunction = logFunction
    }

    /// The most detailed level passed on; change it at any time, from any thread.
    public var level: Level {
        get { Level(rawValue: currentLevel.load(ordering: .relaxed)) ?? .off }
        set { currentLevel.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// Whether a message of `level` would be passed on.
    @inline(__always)
    public func isEnabled(_ level: Level) -> Bool {
        level != .off && level.rawValue <= currentLevel.load(ordering: .relaxed)
    }

    /// Passes `message` on if `level` is enabled; the message is built only then.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard isEnabled(level) else { return }
        logFunction(level, message())
    }

    private static let current = Mutex<DatabaseLogger>(DatabaseLogger(level: .warn) { level, message in
        StandardError.write("[Strata] \(level): \(message)\n")
    })

    /// The logger Strata reports to, for the whole process. Replacing it takes effect for the
    /// next message.
    public static var shared: DatabaseLogger {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Reports `message` at `level` to the shared logger (Strata's own call sites).
    static func report(_ level: Level, _ message: @autoclosure () -> String) {
        shared.log(level, message())
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#else
private let systemWrite = Darwin.write
#endif

/// Standard error, written without Foundation's buffering (the default log function).
private enum StandardError {
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(2, base + offset, bytes.count - offset)
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
