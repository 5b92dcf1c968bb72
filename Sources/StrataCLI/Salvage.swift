// `strata salvage FILE NEW`: `Database.salvage(from:to:)` from the command line.

import ArgumentParser
import Foundation
import Strata

/// `strata salvage FILE NEW`.
struct Salvage: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy every readable object of a damaged file into a new file (exit status 2 if some were lost).",
        discussion: """
            <file> is opened read-only and never written to; <new> must not exist yet. Prints what was \
            copied and what was lost, per object type; exits with status 2 when objects or links \
            were lost.
            """
    )

    @Argument(help: "The damaged database file to read.")
    var file: String

    @Argument(help: "The new database file to copy the readable objects into.")
    var new: String

    func run() throws {
        if !(try Self.salvage(path: file, to: new)) { throw ExitCode(2) }
    }

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
