// The files that make up one database on disk: the database file and the companions kept
// beside it under the same name with a suffix. Whatever creates, copies or deletes a database's
// files names them through this value, so that the list lives in one place.

/// The paths of a database file and of its companions.
///
/// - `<path>-lock`: the lock file every opener holds (shared while open, exclusive to compact);
/// - `<path>-log`: the commit log, which holds the newest commits until a checkpoint writes them
///   into the file;
/// - `<path>-damaged`: the damage marker Strata leaves when it stopped on a damaged page, so that
///   the next open checks the file;
/// - `<path>-log.orphaned`: a commit log found without its database file, moved aside rather
///   than erased (`-log.orphaned-2`, `-3`… when taken).
public struct DatabaseFiles: Sendable, Hashable {
    /// The database file.
    public let path: String

    /// The files of the database at `path`.
    public init(path: String) { self.path = path }

    /// The lock file.
    public var lock: String { path + "-lock" }
    /// The commit log.
    public var log: String { StorageEngine.logPath(for: path) }
    /// The damage marker.
    public var damageMarker: String { path + "-damaged" }
    /// Where a commit log without its database file is first moved aside to.
    public var orphanedLog: String { log + ".orphaned" }

    /// The companions the storage engine makes beside the file: the lock file and the commit log.
    public var engineCompanions: [String] { [lock, log] }

    /// The companions that belong to the database and go when it is deleted: the lock file,
    /// the commit log and the damage marker. An orphaned log is not one of them: it holds
    /// commits of a file that is gone, kept for whoever wants them back.
    public var companions: [String] { [lock, log, damageMarker] }

    /// The database file and `companions`, in the order they are removed.
    public var all: [String] { [path] + companions }
}
