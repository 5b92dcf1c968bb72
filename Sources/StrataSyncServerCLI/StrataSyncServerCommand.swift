// strata-sync-server: the sync server as a command (see docs/design/sync.md, "Server").
import ArgumentParser
import Foundation
import Logging
import StrataSyncServer

/// `strata-sync-server --data DIR --port 9090 [--host H] [--postgres URL] [--config FILE] [--history-limit N] [--log-level L]`
@main
struct StrataSyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-sync-server",
        abstract: "Serves Strata Sync: HTTP login and the /sync/{appID} WebSocket.")

    @Option(help: "The folder of the embedded store (ignored with --postgres).")
    var data = "./strata-sync-data"

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port).")
    var port = 9090

    @Option(help: "Keep the data in this PostgreSQL database (postgres://user[:password]@host[:port]/database).")
    var postgres: String?

    @Option(help: "A JSON file of the apps served and their logins.")
    var config: String?

    @Option(name: .customLong("history-limit"), help: "Keep only each app's newest N changesets (older clients get a reset).")
    var historyLimit: UInt64?

    @Option(name: .customLong("log-level"),
            help: "The least severe messages logged: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        var logger = Logger(label: "strata.sync.server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        var apps = AppsConfiguration.open
        if let config { apps = try AppsConfiguration.load(path: config) }
        if let historyLimit { apps.historyLimit = historyLimit }
        let storage: SyncServer.Storage = postgres.map { .postgres(url: $0) } ?? .embedded(directory: data)
        let server = SyncServer(configuration: .init(host: host, port: port, storage: storage, apps: apps), logger: logger)
        let host = self.host
        try await server.runUntilSignalled { port in
            // Written unbuffered: scripts wait for this line to learn the port.
            let line = "strata-sync-server listening on http://\(host):\(port) (WebSocket ws://\(host):\(port)/sync/{appID})\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
    }
}
