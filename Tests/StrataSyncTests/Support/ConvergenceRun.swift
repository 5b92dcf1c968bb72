import Foundation
import Glibc

/// One convergence run: sync servers (each behind a `FaultProxy`), four `StrataSyncChild`
/// clients making seeded conflicting writes, a scripted sequence of faults, then the checks of
/// `ConvergenceCheck` over every client's final dump and a fresh client's.
///
/// The faults: the proxies' own seeded delays, drops and cuts throughout; a refusing partition
/// of the first server and its heal; a SIGKILL and restart of the first server; a `cutAll` on
/// every proxy; a black-hole partition of the last server and its heal; and client 0 SIGKILLs
/// itself after 20 writes and is started again on the same file.
struct ConvergenceRun {
    /// What went wrong outside the checks (a process failed).
    enum Failure: Error, CustomStringConvertible {
        case childFailed(commandLine: String, status: SpawnedProcess.Status, stderr: String)
        case childNotBuilt
        case noDump(commandLine: String)

        var description: String {
            switch self {
            case .childFailed(let commandLine, let status, let stderr): "\(commandLine) ended with \(status); stderr: \(stderr)"
            case .childNotBuilt: "StrataSyncChild was not found beside the test bundle (or set STRATA_SYNC_CHILD)"
            case .noDump(let commandLine): "\(commandLine) printed no dump"
            }
        }
    }

    static let clientCount = 4
    static let operationsPerClient = 60

    let storages: [SyncServerProcess.Storage]
    let seed: UInt64
    let folder: String
    /// Extra flags for every writing client (`--lists-only`: all of them edit one list).
    var workloadFlags: [String] = []

    /// What a run started, stopped at its end whatever happened.
    private final class Started {
        var servers: [SyncServerProcess] = []
        var proxies: [FaultProxy] = []
        var processes: [SpawnedProcess] = []

        func stopAll() async {
            for process in processes { await process.kill() }
            for server in servers { await server.kill() }
            for proxy in proxies { await proxy.stop() }
        }
    }

    /// Runs the scenario and returns the problems `ConvergenceCheck` found (empty: converged).
    func run() async throws -> [String] {
        let started = Started()
        do {
            let problems = try await run(started)
            await started.stopAll()
            return problems
        } catch {
            await started.stopAll()
            throw error
        }
    }

    private func run(_ started: Started) async throws -> [String] {
        guard let child = ProductExecutable.syncChild else { throw Failure.childNotBuilt }
        for (index, storage) in storages.enumerated() {
            let server = try await SyncServerProcess(storage: storage, logFolder: folder)
            started.servers.append(server)
            started.proxies.append(try await FaultProxy.start(targetPort: server.port,
                                                              schedule: .hostile(seed: seed &+ UInt64(index)),
                                                              lifetime: .seconds(170)))
        }
        let servers = started.servers
        let proxies = started.proxies
        let app = "convergence-\(UUID().uuidString.prefix(8).lowercased())"
        func serverURL(forClient client: Int) -> String {
            "http://127.0.0.1:\(proxies[client % proxies.count].port)"
        }
        func startClient(_ client: Int, name: String, seed: UInt64, operations: Int, killAfter: Int? = nil) throws -> SpawnedProcess {
            var arguments = ["--file", "\(folder)/client-\(client).strata", "--server", serverURL(forClient: client),
                             "--app", app, "--seed", String(seed), "--ops", String(operations), "--client", name]
            if let killAfter { arguments += ["--kill-after-ops", String(killAfter)] }
            arguments += workloadFlags
            let process = try SpawnedProcess.start(executable: child, arguments: arguments,
                                                   errorLogPath: "\(folder)/\(name).stderr")
            started.processes.append(process)
            return process
        }

        var runs: [SpawnedProcess] = []
        var clients: [SpawnedProcess] = []
        for client in 0..<Self.clientCount {
            let process = try startClient(client, name: "c\(client)", seed: seed &* 100 &+ UInt64(client),
                                          operations: Self.operationsPerClient,
                                          killAfter: client == 0 ? 20 : nil)
            clients.append(process)
            runs.append(process)
        }

        // The fault script, keyed to the clients' progress (lines printed), never to time.
        await clients[1].waitForLines(10)
        await proxies[0].partition(.refuse)
        await clients[1].waitForLines(30)
        await proxies[0].heal()
        await clients[2].waitForLines(15)
        try await servers[0].restart()
        await clients[3].waitForLines(25)
        for proxy in proxies { await proxy.cutAll() }
        await proxies[proxies.count - 1].partition(.blackHole)
        await clients[3].waitForLines(45)
        await proxies[proxies.count - 1].heal()

        // Client 0 killed itself after its 20th acknowledged write; it starts again on its file.
        let killed = await clients[0].waitForExit()
        guard killed == .signalled(SIGKILL) else {
            throw Failure.childFailed(commandLine: clients[0].commandLine, status: killed, stderr: clients[0].errorOutput)
        }
        let restarted = try startClient(0, name: "c0r", seed: seed &* 100 &+ 99, operations: 20)
        runs.append(restarted)

        for process in runs.dropFirst() {
            let status = await process.waitForExit()
            guard status == .exited(0) else {
                throw Failure.childFailed(commandLine: process.commandLine, status: status, stderr: process.errorOutput)
            }
        }

        // Quiescence: every client syncs down once more and dumps its own file; a fresh client
        // dumps what the server has.
        var dumps: [(client: String, line: String)] = []
        for client in 0...Self.clientCount {
            let name = client == Self.clientCount ? "fresh" : "c\(client)"
            let process = try SpawnedProcess.start(
                executable: child,
                arguments: ["--file", "\(folder)/\(client == Self.clientCount ? "fresh" : "client-\(client)").strata",
                            "--server", serverURL(forClient: client), "--app", app, "--dump"],
                errorLogPath: "\(folder)/\(name)-dump.stderr")
            started.processes.append(process)
            let status = await process.waitForExit()
            guard status == .exited(0) else {
                throw Failure.childFailed(commandLine: process.commandLine, status: status, stderr: process.errorOutput)
            }
            guard let line = ConvergenceCheck.dumpLine(process.lines) else { throw Failure.noDump(commandLine: process.commandLine) }
            dumps.append((name, line))
        }

        let writeLines = runs.flatMap { ConvergenceCheck.writeLines($0.lines) }
        var problems = ConvergenceCheck.problems(dumps: dumps, writeLines: writeLines)
        let counters = proxies.map(\.counters)
        if counters.allSatisfy({ $0.dropped + $0.cut + $0.closedByTest == 0 }) {
            problems.append("no connection was ever broken: the faults did not happen")
        }
        return problems
    }
}
