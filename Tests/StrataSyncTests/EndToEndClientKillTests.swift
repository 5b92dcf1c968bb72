// A client process SIGKILLed at a seeded point of its writes (wherever it is then: inside the
// next write's commit, recording it, or uploading) and started again on the same file: its
// outbox survives, nothing is uploaded twice, nothing committed is lost.

import Foundation
import Testing
import StrataSyncServer

@Suite("EndToEnd client kills", .serialized, .timeLimit(.minutes(10)),
       .enabled(if: ConvergenceEnvironment.canSync, "needs StrataSyncChild built with the sync client"))
struct EndToEndClientKillTests {
    /// The tokens of the item `tokens` in a child's dump line.
    private func tokens(inDump line: String?) throws -> [String] {
        let line = try #require(line, "no dump")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let items = try #require((object["dump"] as? [String: Any])?["SyncItem"] as? [[String: Any]])
        let item = try #require(items.first { $0["_id"] as? String == "tokens" })
        return item["tokens"] as? [String] ?? []
    }

    /// The tokens of a child's printed (committed) writes, in order.
    private func printedTokens(_ lines: [String]) -> [String] {
        ConvergenceCheck.writeLines(lines).compactMap { line in
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            return ((object?["ops"] as? [[String: Any]])?.first)?["token"] as? String
        }
    }

    @Test(arguments: [41 as UInt64, 42, 43])
    func aClientKilledMidWriteKeepsItsOutboxAndUploadsItExactlyOnce(seed: UInt64) async throws {
        let child = try #require(ProductExecutable.syncChild)
        let server = try await EndToEndServer.start()
        let folder = try ServerTestEnvironment.temporaryDirectory()
        let app = ServerTestEnvironment.uniqueAppID("e2e-client-kill")
        let file = "\(folder)/client.strata"
        func start(_ name: String, _ arguments: [String]) throws -> SpawnedProcess {
            try SpawnedProcess.start(executable: child,
                                     arguments: ["--file", file, "--server", "http://127.0.0.1:\(server.port)", "--app", app] + arguments,
                                     errorLogPath: "\(folder)/\(name).stderr")
        }
        var random = SplitMix64(seed: seed)
        let killAfterLines = 5 + Int(random.next() % 80)

        // Far more writes than it gets to make: the kill lands inside its write loop.
        let killed = try start("killed", ["--seed", String(seed), "--ops", "100000", "--client", "k", "--tokens-only"])
        await killed.waitForLines(killAfterLines)
        await killed.kill()
        #expect(killed.status == .signalled(SIGKILL), "\(killed.errorOutput)")
        let committed = printedTokens(killed.lines)
        #expect(committed.count >= killAfterLines)

        let restarted = try start("restarted", ["--seed", String(seed), "--ops", "20", "--client", "r", "--tokens-only"])
        let restartedStatus = await restarted.waitForExit()
        #expect(restartedStatus == .exited(0), "\(restarted.errorOutput)")
        let after = printedTokens(restarted.lines)
        #expect(after.count == 20)

        let own = try tokens(inDump: ConvergenceCheck.dumpLine(restarted.lines))
        let fresh = try SpawnedProcess.start(executable: child,
                                             arguments: ["--file", "\(folder)/fresh.strata", "--server", "http://127.0.0.1:\(server.port)",
                                                         "--app", app, "--dump"],
                                             errorLogPath: "\(folder)/fresh.stderr")
        let freshStatus = await fresh.waitForExit()
        #expect(freshStatus == .exited(0), "\(fresh.errorOutput)")
        let onServer = try tokens(inDump: ConvergenceCheck.dumpLine(fresh.lines))

        // Every printed write once, in order; at most one more write of the killed process
        // (committed as the kill landed, before it printed); then the restarted process's writes.
        let inFlight = "k-\(committed.count + 1)"
        let expected = [committed + after, committed + [inFlight] + after]
        #expect(expected.contains(onServer), "seed \(seed), killed after \(committed.count) printed writes; server has \(onServer.count) tokens")
        #expect(own == onServer)
        #expect(Set(onServer).count == onServer.count, "a token appears twice: an upload was applied twice")
        await server.server.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
