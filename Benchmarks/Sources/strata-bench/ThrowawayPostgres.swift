// The PostgreSQL the sync workloads' postgres engines use: `--postgres URL`, else
// STRATA_TEST_POSTGRES_URL, else a throwaway cluster started through the repository's
// scripts/with-postgres.sh (which installs PostgreSQL when it is missing and runs as root, and
// starts the cluster as a non-root user). The script runs a child that prints the URL and then
// waits for its standard input to close; closing it (or this process ending) stops the cluster
// and removes its folder.

#if !NO_STRATA

import Foundation

final class ThrowawayPostgres {
    let url: String
    private let process: Process
    private let input: Pipe

    /// Starts a cluster and waits until it accepts connections; throws with the script's
    /// explanation when it cannot.
    init() throws {
        guard let script = ThrowawayPostgres.findScript() else {
            throw BenchError("no PostgreSQL: pass --postgres URL, or run strata-bench inside the repository "
                + "(it starts one with scripts/with-postgres.sh)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, "/bin/sh", "-c", "echo \"$STRATA_TEST_POSTGRES_URL\"; cat >/dev/null"]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "STRATA_TEST_POSTGRES_URL")
        process.environment = environment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        self.process = process
        self.input = input
        logProgress("starting a throwaway PostgreSQL with \(script)")
        // The first line the child prints is the URL; end of file means the script failed
        // (it explained why on standard error, which is ours).
        var line = Data()
        let reader = output.fileHandleForReading
        while true {
            let byte = reader.readData(ofLength: 1)
            if byte.isEmpty || byte.first == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        let url = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        guard url.hasPrefix("postgres://") else {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            throw BenchError("scripts/with-postgres.sh did not start PostgreSQL (exit status \(process.terminationStatus))")
        }
        self.url = url
    }

    /// Stops the cluster and waits for the script to remove it.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// scripts/with-postgres.sh in the current folder or one of its parents, or beside the
    /// package this executable was built in (Benchmarks/.build*/release/strata-bench).
    private static func findScript() -> String? {
        var starts = [FileManager.default.currentDirectoryPath]
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.deletingLastPathComponent().path
        starts.append(executable)
        for start in starts {
            var folder = URL(fileURLWithPath: start)
            for _ in 0..<6 {
                let candidate = folder.appendingPathComponent("scripts/with-postgres.sh").path
                if FileManager.default.isExecutableFile(atPath: candidate) || FileManager.default.fileExists(atPath: candidate) {
                    return candidate
                }
                folder.deleteLastPathComponent()
            }
        }
        return nil
    }
}
#endif
