// `strata recover FILE`: opens a database past a damaged commit log, at the last version the
// log holds intact (StorageOptions.commitLogRecovery), and says what that gave up.

import ArgumentParser
import Foundation
import StrataStorage

/// `strata recover FILE`.
struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open a database file past a damaged commit log, at its last good version.",
        discussion: """
            Opens the file writable, replays its commit log up to the last version the log holds \
            intact, makes that version durable in the file and erases the log; the commits after \
            it are given up, and the tool says how many. A file whose log is intact is opened \
            and closed as any open would, and nothing is given up.
            """
    )

    @Argument(help: "The database file to recover.")
    var file: String

    func run() throws {
        print(try Self.recover(path: file))
    }

    /// Opens the file writable with the recovery option and closes it again; returns what to
    /// print. An intact log is replayed as any open would, and nothing is given up.
    static func recover(path: String) throws(CommandFailure) -> String {
        try checkIsDatabaseFile(path)
        var options = StorageOptions()
        options.commitLogRecovery = .openAtLastGoodVersion
        let engine: StorageEngine
        do { engine = try StorageEngine.open(path: path, options: options) } catch { throw CommandFailure(path: path, error) }
        defer { engine.close() }
        guard let report = engine.commitLogRecoveryReport else {
            return "\(path): the commit log is intact; nothing to recover (version \(engine.latestVersion))"
        }
        return "\(path): \(report)"
    }
}
