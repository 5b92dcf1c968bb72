// `strata import-realm SOURCE DEST [--key HEX]`: a Realm file copied into a new Strata file,
// with a progress bar on a terminal.

import ArgumentParser
import Foundation
import StrataRealmFile

/// `strata import-realm SOURCE DEST [--key HEX] [--skip-nested-collections]`.
struct ImportRealm: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-realm",
        abstract: "Copy a Realm file (file format 24) into a new Strata database file.",
        discussion: """
            Reads SOURCE without changing it and writes DEST, which must not exist, atomically: \
            a failure leaves no DEST. Progress (objects per class) goes to stderr, as a bar on a \
            terminal and as plain lines otherwise; the summary goes to stdout.
            """
    )

    @Argument(help: "The Realm file to read.")
    var source: String

    @Argument(help: "The Strata file to create.")
    var destination: String

    @Option(help: ArgumentHelp("The Realm file's 64-byte encryption key, as 128 hex digits.", valueName: "HEX128"))
    var key: String?

    @Flag(help: "Leave out mixed values holding a nested list or dictionary (counted) instead of importing them.")
    var skipNestedCollections = false

    func run() throws {
        let keyData = try key.map { text throws(CommandFailure) in try realmKey(fromHex: text) }
        let file = try openRealmFile(source, key: keyData)
        let reporter = ProgressReporter(isTerminal: isatty(STDERR_FILENO) == 1)
        let report: RealmImportReport
        do {
            report = try RealmImport.importFile(file, to: URL(fileURLWithPath: destination),
                                                options: .init(skipNestedCollectionsInMixed: skipNestedCollections)) { progress in
                reporter.show(progress)
            }
        } catch {
            reporter.end()
            throw CommandFailure(path: source, error)
        }
        reporter.end()
        let total = report.objectCounts.values.reduce(0, +)
        print("\(destination): \(total) object\(plural(total)) in \(report.objectCounts.count) class\(report.objectCounts.count == 1 ? "" : "es"), schema version \(report.schemaVersion)")
        for name in report.objectCounts.keys.sorted() {
            let count = report.objectCounts[name] ?? 0
            print("  \(name): \(count) object\(plural(count))")
        }
        if report.skippedNestedCollections > 0 {
            print("left out: \(report.skippedNestedCollections) mixed value(s) holding a nested list or dictionary")
        }
        if report.unresolvedLinks > 0 {
            print("left out: \(report.unresolvedLinks) link(s) to objects not in the file")
        }
    }
}

/// Shows import progress on stderr: one bar redrawn in place on a terminal (copying, then
/// linking), else one line per class when its objects are copied (and every 100,000 objects
/// within a large class).
final class ProgressReporter {
    let isTerminal: Bool
    private var drawn = false

    init(isTerminal: Bool) { self.isTerminal = isTerminal }

    func show(_ progress: RealmImportProgress) {
        let counts = (progress.phase == .linking ? "linking " : "") + "\(progress.className) \(progress.objectsCopied)/\(progress.objectCount)"
        let prefix = "[\(progress.classNumber)/\(progress.classCount)] "
        if isTerminal {
            let width = 30
            let filled = progress.objectCount == 0 ? width : progress.objectsCopied * width / max(progress.objectCount, 1)
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            write("\r\u{1B}[K" + prefix + "[\(bar)] " + counts)
            drawn = true
        } else if progress.phase == .copying
                    && (progress.objectsCopied == progress.objectCount || (progress.objectsCopied > 0 && progress.objectsCopied % 100_000 == 0)) {
            write(prefix + counts + "\n")
        }
    }

    /// Ends the bar's line.
    func end() {
        if drawn { write("\n") }
        drawn = false
    }

    private func write(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }
}
