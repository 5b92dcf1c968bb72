import StrataStore
import StrataStorage

extension Database {
    /// Errors thrown by Strata. `code` classifies them the way RealmSwift's `Realm.Error.Code`
    /// does; `description` says what happened and what to do.
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// Kinds of errors.
        public enum Code: Int, Sendable {
            case fail = 1, fileAccess = 2, filePermissionDenied = 3, fileExists = 4, fileNotFound = 5
            case fileFormatUpgradeRequired = 6, incompatibleLockFile = 8, addressSpaceExhausted = 9
            case schemaMismatch = 10, incompatibleSyncedFile = 11, alreadyOpen = 12, invalidInput = 13, outOfDiskSpace = 14
            case incompatibleSession = 15, unsupportedFileFormatVersion = 16, multipleSyncAgents = 17
            case subscriptionFailed = 18
            /// A file operation (deleting a database's files, copying a seed file) failed in a
            /// way no other code describes.
            case fileOperationFailed = 19
            case invalidDatabase = 20, incompatibleHistories = 21, noSubscriptionForWrite = 22
            /// A write would leave more versions pinned than the configuration's
            /// `maximumNumberOfActiveVersions` allows.
            case tooManyActiveVersions = 30
        }

        /// The kind of error.
        public let code: Code
        /// What happened, and what to do about it.
        public let message: String
        /// The file involved, if any.
        public let path: String?

        public init(_ code: Code, _ message: String = "", path: String? = nil) {
            self.code = code
            self.message = message.isEmpty ? "\(code)" : message
            self.path = path
        }

        public var description: String { message }

        /// Matches errors by code, so `catch Database.Error.schemaMismatch` works.
        public static func ~= (pattern: Error, value: any Swift.Error) -> Bool {
            (value as? Error)?.code == pattern.code
        }

        /// A general failure (RealmSwift's `Realm.Error.callFailed`).
        public static let callFailed = Error(.fail, "Call failed")
        public static let fail = Error(.fail)
        public static let fileAccess = Error(.fileAccess)
        public static let filePermissionDenied = Error(.filePermissionDenied)
        public static let fileNotFound = Error(.fileNotFound)
        public static let fileExists = Error(.fileExists)
        public static let fileFormatUpgradeRequired = Error(.fileFormatUpgradeRequired)
        public static let incompatibleLockFile = Error(.incompatibleLockFile)
        public static let addressSpaceExhausted = Error(.addressSpaceExhausted)
        public static let incompatibleSyncedFile = Error(.incompatibleSyncedFile)
        public static let incompatibleSession = Error(.incompatibleSession)
        public static let multipleSyncAgents = Error(.multipleSyncAgents)
        public static let subscriptionFailed = Error(.subscriptionFailed)
        public static let fileOperationFailed = Error(.fileOperationFailed)
        public static let incompatibleHistories = Error(.incompatibleHistories)
        public static let noSubscriptionForWrite = Error(.noSubscriptionForWrite)
        public static let schemaMismatch = Error(.schemaMismatch)
        public static let invalidInput = Error(.invalidInput)
        public static let outOfDiskSpace = Error(.outOfDiskSpace)
        public static let invalidDatabase = Error(.invalidDatabase)
        public static let unsupportedFileFormatVersion = Error(.unsupportedFileFormatVersion)
        public static let alreadyOpen = Error(.alreadyOpen)
        public static let tooManyActiveVersions = Error(.tooManyActiveVersions)

        static func wrap(_ error: any Swift.Error, path: String?) -> Error {
            if let error = error as? Error { return error }
            if let error = error as? StoreError {
                switch error {
                case .storage(let storage): return wrap(storage, path: path)
                case .invalidSchema, .invalidValue, .duplicatePrimaryKey, .objectNotFound: return Error(.invalidInput, error.description, path: path)
                case .schemaMismatch, .schemaVersionTooOld: return Error(.schemaMismatch, error.description, path: path)
                case .corrupted: return path.map { damaged(error, path: $0) } ?? Error(.invalidDatabase, error.description)
                case .notAnObjectDatabase: return Error(.invalidDatabase, error.description, path: path)
                case .readOnly: return Error(.fileAccess, error.description, path: path)
                case .transactionEnded, .commitRefused: return Error(.fail, error.description, path: path)
                }
            }
            if let error = error as? StorageError {
                let code: Code
                switch error {
                case .corrupted, .truncated: return path.map { damaged(error, path: $0) } ?? Error(.invalidDatabase, error.description)
                case .notADatabase, .commitLogMismatch, .commitLogDamaged, .emptyDatabaseWithCommitLog: code = .invalidDatabase
                case .unsupportedFormatVersion: code = .unsupportedFileFormatVersion
                case .ioFailure(_, let errno):
                    switch errno {
                    case 28, 122: code = .outOfDiskSpace  // ENOSPC, EDQUOT
                    case 13, 1, 30: code = .filePermissionDenied  // EACCES, EPERM, EROFS
                    case 2: code = .fileNotFound
                    default: code = .fileAccess
                    }
                case .fileTooLarge: code = .addressSpaceExhausted
                case .lockFileInvalid: code = .incompatibleLockFile
                case .recoveryNeedsWriteAccess: code = .fileAccess
                // Something that cannot hold a database (a device, a FIFO, a directory, a
                // dangling link) is where the file should be: the file cannot be accessed.
                case .notARegularFile: code = .fileAccess
                default: code = .fail
                }
                return Error(code, error.description, path: path)
            }
            return Error(.fail, "\(error)", path: path)
        }
    }
}
