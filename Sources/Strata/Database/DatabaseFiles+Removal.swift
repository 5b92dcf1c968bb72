// Deleting a database's files (the list of them is `DatabaseFiles`, in StrataStorage).

import Foundation
import StrataStorage

extension DatabaseFiles {
    /// Removes the database file and its companions, those that exist, in order; throws
    /// `fileAccess` naming the first that cannot be removed (the ones after it stay).
    func removeAll() throws(Database.Error) {
        for file in all where FileManager.default.fileExists(atPath: file) {
            do { try FileManager.default.removeItem(atPath: file) } catch { throw Database.Error(.fileAccess, "\(error)", path: file) }
        }
    }

    /// Removes what it can of the database file and its companions, ignoring failures: for
    /// an in-memory database's backing files and a salvage's half-written destination.
    func removeAllQuietly() {
        for file in all { try? FileManager.default.removeItem(atPath: file) }
    }
}
