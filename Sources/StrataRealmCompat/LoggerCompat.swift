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

// MARK: Log categories (RealmSwift 10.50+)

extension DatabaseLogger {
    /// RealmSwift's logger with a category-aware function. Strata's messages come under
    /// `Category.Storage.transaction` (write transactions, at `.trace`) and
    /// `Category.Storage.all` (everything else). The logger starts at the shared logger's
    /// level, as RealmSwift's levels are global rather than per logger.
    public convenience init(function: @escaping @Sendable (LogLevel, any LogCategory, String) -> Void) {
        self.init(level: DatabaseLogger.shared.level) { level, message in
            function(level, level == .trace ? Category.Storage.transaction : Category.Storage.all, message)
        }
    }

    /// Sets the level of a category, as RealmSwift does. Strata has one level for all its
    /// messages: a storage category (or `Category.realm`, which includes it) sets the shared
    /// logger's level; the sync, app and SDK categories do not apply to Strata's messages and
    /// leave it as it is.
    public static func setLogLevel(_ level: LogLevel, for category: any LogCategory = Category.realm) {
        guard category.rawValue == Category.realm.rawValue || category.rawValue.hasPrefix(Category.Storage.all.rawValue) else { return }
        shared.level = level
    }

    /// The level of a category: the shared logger's, for every category (see
    /// ``setLogLevel(_:for:)``).
    public static func logLevel(for category: any LogCategory) -> LogLevel {
        shared.level
    }
}

/// RealmSwift's log category: a dotted name in the `Category` hierarchy.
public protocol LogCategory: Sendable {
    /// The category's dotted name, e.g. `Realm.Storage.Transaction`.
    var rawValue: String { get }
}

/// RealmSwift's log categories. Strata reports under `Storage.all` and `Storage.transaction`.
public enum Category: String, LogCategory {
    /// Everything; setting its level sets every category's.
    case realm = "Realm"
    /// The SDK's own messages.
    case sdk = "Realm.SDK"
    /// App Services messages.
    case app = "Realm.App"

    /// The database's messages.
    public enum Storage: String, LogCategory {
        /// All of the database's messages.
        case all = "Realm.Storage"
        /// Write transactions.
        case transaction = "Realm.Storage.Transaction"
        /// Queries.
        case query = "Realm.Storage.Query"
        /// Objects.
        case object = "Realm.Storage.Object"
        /// Notifications.
        case notification = "Realm.Storage.Notification"
    }

    /// Sync's messages.
    public enum Sync: String, LogCategory {
        /// All of sync's messages.
        case all = "Realm.Sync"
        /// The server's.
        case server = "Realm.Sync.Server"

        /// The sync client's messages.
        public enum Client: String, LogCategory {
            /// All of the client's messages.
            case all = "Realm.Sync.Client"
            /// Sessions.
            case session = "Realm.Sync.Client.Session"
            /// Changesets.
            case changeset = "Realm.Sync.Client.Changeset"
            /// The network.
            case network = "Realm.Sync.Client.Network"
            /// Client resets.
            case reset = "Realm.Sync.Client.Reset"
        }
    }
}
