/// Why the server could not start or a store refused an operation.
public enum SyncServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configuration file (or a command-line value) is wrong.
    case invalidConfiguration(String)
    /// The store could not be opened or migrated.
    case storageUnavailable(String)
    /// An upload's first changeset skips past the next client sequence the server expects.
    case outOfOrderUpload(expected: UInt64, received: UInt64)
    /// Stored bytes that do not decode (a damaged store).
    case corruptStorage(String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let why): "invalid configuration: \(why)"
        case .storageUnavailable(let why): "storage unavailable: \(why)"
        case .outOfOrderUpload(let expected, let received):
            "upload out of order: the next client sequence is \(expected), the upload starts at \(received)"
        case .corruptStorage(let why): "corrupt storage: \(why)"
        }
    }
}
