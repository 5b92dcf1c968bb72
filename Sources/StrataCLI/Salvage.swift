// `strata salvage FILE NEW`: `Database.salvage(from:to:)` from the command line.

import Foundation
import Strata

extension StrataCommand {
    /// Copies every readable object of `path` into the new file `copy` and prints the report.
    /// Returns whether every object was copied with its links (exit status 0); false (exit
    /// status 2) when objects or links were lost. A salvage that cannot start (no such file,
    /// `copy` exists, no readable schema) is a failure (exit status 1) and writes nothing.
    static func salvage(path: String, to copy: String) throws(CommandFailure) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandFailure(path: path, "no such file")
        }
        guard !isDirectory.boolValue else { throw CommandFailure(path: path, "is a directory, not a database file") }
        guard !FileManager.default.fileExists(atPath: copy) else {
            throw CommandFailure(path: copy, "already exists; salvage writes a new file")
        }
        let report: Database.SalvageReport
        do {
            report = try Database.salvage(from: URL(fileURLWithPath: path), to: URL(fileURLWithPath: copy))
        } catch {
            throw CommandFailure("\(error)")
        }
        print(report)
        return report.isComplete
    }
}
