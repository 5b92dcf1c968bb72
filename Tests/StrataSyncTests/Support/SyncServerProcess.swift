import Foundation
import Synchronization

/// A `strata-sync-server` in its own process, so a test can kill it (SIGKILL, as a crash) and
/// start it again on the same storage and port.
final class SyncServerProcess: Sendable {
    /// Where the server keeps its data.
    enum Storage: Sendable {
        /// The embedded store in a folder (`--data DIR`).
        case embedded(folder: String)
        /// A PostgreSQL database (`--postgres URL`).
        case postgres(url: String)
    }

    /// Why a server did not come up.
    enum Problem: Error, CustomStringConvertible {
        case notBuilt
        case didNotListen(commandLine: String, status: SpawnedProcess.Status?, stderr: String)

        var description: String {
            switch self {
            case .notBuilt:
                "strata-sync-server was not found beside the test bundle (build it, or set STRATA_SYNC_SERVER)"
            case .didNotListen(let commandLine, let status, let stderr):
                "\(commandLine) did not accept connections (\(status.map(\.description) ?? "still running")); stderr: \(stderr)"
            }
        }
    }

    let storage: Storage
    /// The loopback port it listens on (the same across restarts).
    let port: Int
    private let logFolder: String
    private let current = Mutex<SpawnedProcess?>(nil)

    /// Starts a server on `storage` and a free loopback port; returns once it accepts connections.
    init(storage: Storage, logFolder: String) async throws {
        self.storage = storage
        self.port = try freeLoopbackPort()
        self.logFolder = logFolder
        try await start()
    }

    private var arguments: [String] {
        switch storage {
        case .embedded(let folder): ["--data", folder, "--port", String(port)]
        case .postgres(let url): ["--postgres", url, "--port", String(port)]
        }
    }

    /// Starts the process and waits (bounded) until its port accepts a connection.
    func start() async throws {
        guard let executable = ProductExecutable.syncServer else { throw Problem.notBuilt }
        let logPath = "\(logFolder)/server-\(port)-\(UUID().uuidString.prefix(8)).stderr"
        let process = try SpawnedProcess.start(executable: executable, arguments: arguments, errorLogPath: logPath)
        current.withLock { $0 = process }
        // Readiness, not timing: try to connect until it works, the process ends, or 30 s pass.
        for _ in 0..<600 {
            if process.status != nil { break }
            if (try? await LoopbackSocket.connect(port: port)) != nil { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        await process.kill()
        throw Problem.didNotListen(commandLine: process.commandLine, status: process.status, stderr: process.errorOutput)
    }

    /// Kills the process with SIGKILL (a crash: nothing is flushed or closed cleanly) and waits
    /// until it has ended.
    func kill() async {
        let process = current.withLock { $0 }
        await process?.kill()
    }

    /// Kills it and starts it again on the same storage and port.
    func restart() async throws {
        await kill()
        try await start()
    }

    /// What the running (or last) process wrote to stderr.
    var errorOutput: String {
        current.withLock { $0 }?.errorOutput ?? ""
    }
}
