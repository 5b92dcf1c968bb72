// `strata recover FILE`: opens a database past a damaged commit log, at the last version the
// log holds intact (StorageOptions.commitLogRecovery), and says what that gave up.

import Foundation
import StrataStorage

extension StrataCommand {
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
