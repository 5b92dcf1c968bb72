import Foundation
import Glibc
import Testing

/// The convergence clients' own behaviour, checked without a server (`StrataSyncChild --local`):
/// the seeded workload is reproducible and covers every operation kind, a client killed after
/// an acknowledged write still has it in its file, and `SpawnedProcess` reports how it ended.
@Suite("ConvergenceChild", .enabled(if: ProductExecutable.syncChild != nil, "StrataSyncChild is not built"))
struct ConvergenceChildTests {
    private let folder: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("strata-child-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    private func runChild(_ arguments: [String], log: String) async throws -> SpawnedProcess {
        let child = try #require(ProductExecutable.syncChild)
        let process = try SpawnedProcess.start(executable: child, arguments: arguments, errorLogPath: "\(folder)/\(log).stderr",
                                               limit: .seconds(60))
        await process.waitForExit()
        return process
    }

    @Test func sameSeedMakesTheSameWritesAndTheSameDump() async throws {
        let first = try await runChild(["--file", "\(folder)/a.strata", "--local", "--seed", "7", "--ops", "40"], log: "a")
        let second = try await runChild(["--file", "\(folder)/b.strata", "--local", "--seed", "7", "--ops", "40"], log: "b")
        #expect(first.status == .exited(0), "\(first.errorOutput)")
        #expect(first.lines.count == 41)
        #expect(first.lines == second.lines)
        let other = try await runChild(["--file", "\(folder)/c.strata", "--local", "--seed", "8", "--ops", "40"], log: "c")
        #expect(other.lines != first.lines)
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func theWorkloadMakesEveryKindOfOperation() async throws {
        let run = try await runChild(["--file", "\(folder)/all.strata", "--local", "--seed", "11", "--ops", "400"], log: "all")
        #expect(run.status == .exited(0), "\(run.errorOutput)")
        var kinds: Set<String> = []
        for line in ConvergenceCheck.writeLines(run.lines) {
            let write = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            for operation in write["ops"] as? [[String: Any]] ?? [] {
                if let kind = operation["op"] as? String { kinds.insert(kind) }
            }
        }
        let expected: Set<String> = ["create", "delete", "set", "listInsert", "listRemove", "listMove", "linkListInsert",
                                     "linkListRemove", "setInsert", "setRemove", "mapSet", "mapRemove", "setEmbedded"]
        #expect(expected.subtracting(kinds).isEmpty, "never made: \(expected.subtracting(kinds).sorted())")
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func aClientKilledAfterAnAcknowledgedWriteStillHasItInItsFile() async throws {
        let file = "\(folder)/killed.strata"
        let killed = try await runChild(["--file", file, "--local", "--seed", "5", "--ops", "30", "--kill-after-ops", "12"],
                                        log: "killed")
        #expect(killed.status == .signalled(SIGKILL))
        let writes = ConvergenceCheck.writeLines(killed.lines)
        #expect(writes.count == 12)
        #expect(ConvergenceCheck.dumpLine(killed.lines) == nil)

        let reopened = try await runChild(["--file", file, "--local", "--seed", "6", "--ops", "0"], log: "reopened")
        #expect(reopened.status == .exited(0), "\(reopened.errorOutput)")
        let dump = try #require(ConvergenceCheck.dumpLine(reopened.lines))
        #expect(ConvergenceCheck.problems(dumps: [("reopened", dump)], writeLines: writes).isEmpty)
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func aBadCommandLineIsRefusedWithStatusTwo() async throws {
        let run = try await runChild(["--file", "\(folder)/x.strata", "--local", "--seed", "x", "--ops", "1"], log: "bad")
        #expect(run.status == .exited(2))
        #expect(run.errorOutput.contains("--seed takes a whole number"))
    }
}
