// RealmSwift's `Logger` (10.39+): the process-wide logger with a level and a log function,
// forwarded to Strata's `DatabaseLogger`.

public import Strata

/// RealmSwift's logger: Strata's ``DatabaseLogger``. `Logger.shared.level = .debug`,
/// `Logger.shared = Logger(level: .info) { level, message in … }` work as in RealmSwift.
/// The default logger writes `.warn` and more severe messages to standard error (RealmSwift's
/// writes `.info` to the system log).
public typealias Logger = DatabaseLogger

extension DatabaseLogger {
    /// RealmSwift's name for the logger's levels: `.off`, `.fatal`, `.error`, `.warn`,
    /// `.info`, `.detail`, `.debug`, `.trace`, `.all`.
    public typealias LogLevel = Level
}
