// The `strata` command-line tool: the seeds' actor scenario as a demo, and inspection of
// database files. Every failure of a command ends in one line on stderr and a non-zero exit
// status; swift-argument-parser parses the command line and answers usage errors and help.

import ArgumentParser
import Foundation

/// The root command: its subcommands do the work; run alone, it prints the help.
@main
struct StrataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Play Strata's actor demo, or look inside a Strata database file.",
        discussion: """
            Exit statuses: 0 for success; 1 for a failure (one line on stderr, starting "strata: "); \
            2 when verify or inspect finds the file damaged, or salvage loses objects; 64 for a \
            command line that makes no sense.
            """,
        subcommands: [Demo.self, Inspect.self, Dump.self, ImportRealm.self, Verify.self, Compact.self, Recover.self, Salvage.self, SyncStatus.self]
    )

    /// Parses the command line and runs the command it names. A `CommandFailure` is printed as
    /// the tool's own one line (`strata: …`, status 1); everything else (help, usage errors,
    /// `ExitCode`) is answered by the argument parser.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            failure.report()
        } catch {
            exit(withError: error)
        }
    }
}
