// Why a command stopped, worded for someone looking at a file, and the one line it prints.

import Foundation
import StrataStorage
import StrataStore

/// Why the command stopped, as the one line it prints.
struct CommandFailure: Error {
    let message: String
    /// The file's commit log is damaged or belongs to another copy (`strata recover` opens it).
    var damagedLog = false

    init(_ message: String) { self.message = message }

    init(path: String, _ reason: String) { self.message = "\(path): \(reason)" }

    /// A failure of the engine or the store, worded for someone looking at a file.
    init(path: String, _ error: any Error) {
        switch error {
        case StorageError.notADatabase, StoreError.storage(.notADatabase):
            self.init(path: path, "not a Strata database file")
        case StorageError.commitLogDamaged, StorageError.commitLogMismatch,
             StoreError.storage(.commitLogDamaged), StoreError.storage(.commitLogMismatch):
            self.init(path: path, "\(error); `strata recover \(path)` opens it at the last good version")
            damagedLog = true
        default:
            self.init(path: path, "\(error)")
        }
    }

    /// Prints the line on stderr and ends the process with status 1.
    func report() -> Never {
        FileHandle.standardError.write(Data("strata: \(message)\n".utf8))
        exit(1)
    }
}
