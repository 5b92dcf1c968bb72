// A sync client in its own process, for the convergence tests (Tests/StrataSyncTests/ConvergenceTests.swift).
//
//   StrataSyncChild --file PATH --server URL --app ID --seed N --ops K [--kill-after-ops M] [--client NAME]
//       opens PATH synced (anonymous login, every class of SyncTestModel subscribed), makes K seeded
//       random writes, printing one JSON line per committed write: {"ops":[…],"write":I}; then
//       waits for upload and download and prints {"dump":…} (CanonicalDump) and exits 0.
//       With --kill-after-ops M it SIGKILLs itself right after printing its Mth write.
//       With --tokens-only each write instead appends the token NAME-I to the list of the item
//       "tokens" (created by the first write): {"ops":[{"op":"listInsert",…}],"write":I}.
//       With --lists-only each write instead inserts, removes, moves or swaps tokens of the list
//       of the item "lists" (ListWorkload), printing inserted and removed tokens.
//   StrataSyncChild --file PATH --server URL --app ID --dump
//       syncs down and prints the dump only.
//   StrataSyncChild --file PATH --local --seed N --ops K
//       the same without sync (a plain local file), to check the workload and the dump alone.
//   StrataSyncChild --sync-available
//       exits 0 if this build can sync, 3 if not.
//
// Failures print "error: …" to stderr and exit 1 (2: bad command line, 3: no sync client).

import Foundation
import Strata

func printLine(_ object: [String: Any]) throws {
    var data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    data.append(UInt8(ascii: "\n"))
    // Unbuffered: a line the test has read is a write that was committed, even if the process
    // is killed right after.
    FileHandle.standardOutput.write(data)
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(status)
}

if CommandLine.arguments.dropFirst().first == "--sync-available" {
    exit(syncClientAvailable ? 0 : 3)
}

let arguments: ChildArguments
do {
    arguments = try ChildArguments(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error)\nusage: see Tests/Support/StrataSyncChild/main.swift", status: 2)
}

do {
    let database: Database
    if arguments.local {
        var configuration = Database.Configuration(fileURL: URL(fileURLWithPath: arguments.file))
        configuration.objectTypes = syncTestModelTypes
        configuration.maximumFileSize = 1 << 30
        database = try Database(configuration: configuration)
    } else {
        database = try await openSyncedDatabase(arguments)
    }
    if !arguments.dumpOnly {
        var workload = Workload(seed: arguments.seed, client: arguments.client)
        var listWorkload = ListWorkload(seed: arguments.seed, client: arguments.client)
        for index in 1...max(1, arguments.operations) where arguments.operations > 0 {
            let operations = arguments.tokensOnly ? try TokenAppend.write(index, client: arguments.client, on: database)
                : arguments.listsOnly ? try listWorkload.write(on: database)
                : try workload.write(on: database)
            try printLine(["write": index, "ops": operations])
            if arguments.killAfterOperations == index {
                kill(getpid(), SIGKILL)
            }
        }
    }
    if !arguments.local {
        try await waitForSync(database)
    }
    FileHandle.standardOutput.write(Data("{\"dump\":\(try CanonicalDump.json(of: database))}\n".utf8))
    exit(0)
} catch ChildFailure.syncClientUnavailable {
    fail("\(ChildFailure.syncClientUnavailable)", status: 3)
} catch {
    fail("\(error)", status: 1)
}
