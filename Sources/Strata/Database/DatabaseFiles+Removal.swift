// Deleting a database's files (the list of them is `DatabaseFiles`, in StrataStorage).

import Foundation
import StrataStorage

extension DatabaseFiles {
    /// Removes the database file and its companions, those that exist, in order; throws
    /// naming the first that cannot be removed (the ones after it stay):
    /// `filePermissionDenied` when the folder does not let this process remove it, else
    /// `fileOperationFailed`.
    func removeAll() throws(Database.Error) {
        for file in all where FileManager.default.fileExists(atPath: file) {
            guard unlink(file) != 0 else { continue }
            let code = errno
            let reason = String(cString: strerror(code))
            switch code {
            case ENOENT: continue  // removed meanwhile by another process
            case EACCES, EPERM, EROFS:
                throw Database.Error(.filePermissionDenied, "Cannot delete \(file): \(reason). The folder must be writable by this process.", path: file)
            default:
                throw Database.Error(.fileOperationFailed, "Cannot delete \(file): \(reason).", path: file)
            }
        }
    }

    /// Removes what it can of the database file and its companions, ignoring failures: for
    /// an in-memory database's backing files and a salvage's half-written destination.
    func removeAllQuietly() {
        for file in all { try? FileManager.default.removeItem(atPath: file) }
    }
}
