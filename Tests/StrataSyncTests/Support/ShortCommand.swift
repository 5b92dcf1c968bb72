import Foundation
import Glibc

/// A short command a test runs to its end (a control script): spawned with `posix_spawn`, its
/// stdout written to a file, and waited for with `waitpid` on a thread of its own.
///
/// Not Foundation's `Process`: a child of this test process that starts a daemon (`pg_ctl
/// start`) was never reaped by it on Linux — `waitUntilExit()` waited forever beside a
/// zombie — so the PostgreSQL restart test stalled until its time limit.
enum ShortCommand {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `executable` with `arguments`; returns its exit status (or 128 + the signal that
    /// ended it) and what it printed on stdout. stderr goes to the test's stderr.
    static func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let outputPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("short-command-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure(description: "could not start \(executable): \(String(cString: strerror(spawned)))") }
        let child = pid
        let waited = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            Thread {
                var status: Int32 = 0
                while waitpid(child, &status, 0) == -1 && errno == EINTR {}
                continuation.resume(returning: status)
            }.start()
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Glibc's macros don't bring to Swift.
        let signal = waited & 0x7f
        let status = signal == 0 ? (waited >> 8) & 0xff : 128 + signal
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return (status, output)
    }
}
