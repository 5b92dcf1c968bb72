// Another process saving a `Question`: the StrataCommitChild executable, run to its exit.

import Foundation
import StrataTestWorkloads
import Testing

/// Runs StrataCommitChild with `--question path id owner`, returning its exit status and
/// what it printed; nil (with the issue recorded) when the executable is not found.
func saveQuestionInChild(path: String, id: String, owner: String) async throws -> (status: Int32, output: String)? {
    guard let child = locateProductExecutable(named: "StrataCommitChild", override: "STRATA_COMMIT_CHILD") else {
        Issue.record("StrataCommitChild not found near the test bundle")
        return nil
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: child)
    process.arguments = ["--question", path, id, owner]
    let output = Pipe()
    process.standardOutput = output
    let status = try await process.runUntilExit()
    let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return (status, printed)
}
