// The `strata` command-line tool: the seeds' actor scenario as a demo, and inspection of
// database files. Every failure ends in one line on stderr and a non-zero exit status.

import Foundation
import StrataStorage
import StrataStore

@main
struct StrataCommand {
    /// Each command's arguments and what it does, for the usage text.
    static let commands: [(name: String, arguments: String, summary: String)] = [
        ("demo", "[DIRECTORY]", "play the seeds' actor scenario on a fresh database, printing what happens"),
        ("inspect", "FILE", "print the schema, object counts, trees and space statistics"),
        ("dump", "FILE [--type T] [--json]", "print every object (of type T), readably or as one JSON document"),
        ("verify", "FILE", "check a database file completely"),
        ("compact", "FILE COPY", "write a compacted copy of FILE to COPY"),
        ("recover", "FILE", "open FILE past a damaged commit log, at its last good version"),
        ("salvage", "FILE NEW", "copy every readable object of a damaged FILE into NEW (exit 2 if some were lost)"),
    ]

    static var usage: String {
        commands.enumerated().map { position, command in
            let synopsis = "strata \(command.name) \(command.arguments)"
            return (position == 0 ? "usage: " : "       ") + synopsis.padding(toLength: 40, withPad: " ", startingAt: 0) + command.summary
        }.joined(separator: "\n")
    }

    /// Exit statuses: 1 for a failure, 2 for a file that verify found damaged (or whose
    /// salvage lost objects), 64 (EX_USAGE)
    /// for a command line that makes no sense.
    @MainActor
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            switch (arguments.first, arguments.count) {
            case ("demo", 1...2):
                do {
                    try await runDemo(directory: arguments.count == 2 ? arguments[1] : nil)
                } catch let failure as CommandFailure {
                    throw failure
                } catch {
                    throw CommandFailure("demo failed: \(error)")
                }
            case ("inspect", 2):
                let healthy = try inspect(path: arguments[1])
                if !healthy { exit(2) }
            case ("dump", _):
                try dump(DumpRequest(parsing: Array(arguments.dropFirst())))
            case ("verify", 2):
                let healthy = try printVerification(path: arguments[1])
                if !healthy { exit(2) }
            case ("recover", 2):
                print(try recover(path: arguments[1]))
            case ("compact", 3):
                try compact(path: arguments[1], to: arguments[2])
                print("wrote \(arguments[2])")
            case ("salvage", 3):
                if !(try salvage(path: arguments[1], to: arguments[2])) { exit(2) }
            case (nil, _), ("help", _), ("-h", _), ("--help", _):
                print(usage)
            case (let name?, _):
                if let command = commands.first(where: { $0.name == name }) {
                    throw CommandFailure.usage("usage: strata \(command.name) \(command.arguments)")
                }
                throw CommandFailure.usage("unknown command '\(name)'")
            }
        } catch let failure as CommandFailure {
            failure.report()
        } catch {
            CommandFailure("\(error)").report()
        }
    }

    /// Prints what `verify(path:)` finds, or that the file's commit log is damaged (the file
    /// does not open then: that is the finding); returns whether the file is healthy.
    static func printVerification(path: String) throws(CommandFailure) -> Bool {
        let verification: FileVerification
        do {
            verification = try verify(path: path)
        } catch {
            guard error.damagedLog else { throw error }
            print(error.message)
            return false
        }
        print(verification)
        return verification.isHealthy
    }

    /// The engine's verification (every page and tree), then, if the engine finds nothing and
    /// the file has object types, every object read and checked against its table's counter
    /// and indexes (`TableAccess.verifyObjects`).
    static func verify(path: String) throws(CommandFailure) -> FileVerification {
        let engine = try openEngine(path)
        var verification: FileVerification
        do { verification = FileVerification(engine: try engine.verify()) } catch {
            engine.close()
            throw CommandFailure(path: path, error)
        }
        guard verification.engine.isHealthy else {
            engine.close()
            return verification
        }
        let store: Store
        do {
            guard let opened = try openStore(on: engine) else {
                engine.close()
                return verification
            }
            store = opened
        } catch {
            engine.close()
            verification.objectProblems.append("the object store cannot be opened: \(error)")
            return verification
        }
        defer { store.close() }
        let session: StoreSession
        do { session = try store.makeSession() } catch {
            verification.objectProblems.append("the object store cannot be read: \(error)")
            return verification
        }
        defer { session.close() }
        for object in store.schema.objectSchemas {
            guard let table = session.table(named: object.name) else { continue }
            let checked = table.verifyObjects()
            verification.objects.append((object.name, checked.objects))
            verification.objectProblems += checked.problems
        }
        return verification
    }

    static func compact(path: String, to copy: String) throws(CommandFailure) {
        guard !FileManager.default.fileExists(atPath: copy) else {
            throw CommandFailure(path: copy, "already exists; compact writes a new file")
        }
        let engine = try openEngine(path)
        defer { engine.close() }
        do { try engine.copyCompacted(to: copy) } catch { throw CommandFailure(path: path, "cannot compact to \(copy): \(error)") }
    }
}

/// What `strata verify` found: the engine's report and, for a file with object types, the
/// objects read per type and any problems with them.
struct FileVerification: CustomStringConvertible {
    let engine: VerificationReport
    var objects: [(type: String, count: Int)] = []
    var objectProblems: [String] = []

    var isHealthy: Bool { engine.isHealthy && objectProblems.isEmpty }

    var description: String {
        var lines = ["\(engine)"]
        if !objects.isEmpty {
            let total = objects.reduce(0) { $0 + $1.count }
            lines.append("objects: \(total) read (\(objects.map { "\($0.type) \($0.count)" }.joined(separator: ", ")))"
                + (objectProblems.isEmpty ? ", no problems" : ", \(objectProblems.count) problem\(plural(objectProblems.count)):"))
            lines += objectProblems.map { "  \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}

/// Why the command stopped, as the one line it prints.
struct CommandFailure: Error {
    let message: String
    var status: Int32 = 1
    /// The file's commit log is damaged or belongs to another copy (`strata recover` opens it).
    var damagedLog = false

    init(_ message: String) { self.message = message }

    init(path: String, _ reason: String) { self.message = "\(path): \(reason)" }

    /// A failure of the engine or the store, worded for someone looking at a file.
    init(path: String, _ error: any Error) {
        switch error {
        case StorageError.notADatabase, StoreError.storage(.notADatabase):
            self.init(path: path, "not a Strata database file")
        case StorageError.commitLogDamaged, StorageError.commitLogMismatch,
             StoreError.storage(.commitLogDamaged), StoreError.storage(.commitLogMismatch):
            self.init(path: path, "\(error); `strata recover \(path)` opens it at the last good version")
            damagedLog = true
        default:
            self.init(path: path, "\(error)")
        }
    }

    static func usage(_ message: String) -> CommandFailure {
        var failure = CommandFailure(message + " (strata help lists the commands)")
        failure.status = 64
        return failure
    }

    /// Prints the line and ends the process.
    func report() -> Never {
        FileHandle.standardError.write(Data("strata: \(message)\n".utf8))
        exit(status)
    }
}

// MARK: Opening files

/// Refuses a missing path, a directory and an empty file before an engine opens them.
func checkIsDatabaseFile(_ path: String) throws(CommandFailure) {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw CommandFailure(path: path, "no such file")
    }
    guard !isDirectory.boolValue else { throw CommandFailure(path: path, "is a directory, not a database file") }
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    if size == 0 { throw CommandFailure(path: path, "the file is empty, not a database") }
}

/// Opens an existing database file read-only. The checks before the engine opens it keep a
/// missing path or a directory from getting a lock file created beside it, and word the
/// common mistakes plainly.
func openEngine(_ path: String) throws(CommandFailure) -> StorageEngine {
    try checkIsDatabaseFile(path)
    do {
        return try StorageEngine.open(path: path, options: StorageOptions(readOnly: true))
    } catch {
        throw CommandFailure(path: path, error)
    }
}

/// The object store of an opened engine file, as it is in the file (no schema asked for); nil
/// for a plain engine file. Once it opens, the store owns the engine (closing it closes the
/// engine); when it throws, the caller still owns the engine.
func openStore(on engine: StorageEngine) throws(StoreError) -> Store? {
    do { return try Store.open(engine: engine, schema: nil) } catch .notAnObjectDatabase { return nil }
}

/// An engine file opened read-only, with its object store when it has one. Close it when done.
struct OpenedFile {
    let path: String
    let engine: StorageEngine
    /// nil for a plain engine file: trees without Strata's object schema.
    let store: Store?

    init(_ path: String) throws(CommandFailure) {
        self.path = path
        engine = try openEngine(path)
        do {
            store = try openStore(on: engine)
        } catch {
            engine.close()
            throw CommandFailure(path: path, error)
        }
    }

    /// A session reading the newest version.
    func makeSession() throws(CommandFailure) -> StoreSession? {
        guard let store else { return nil }
        do { return try store.makeSession() } catch { throw CommandFailure(path: path, error) }
    }

    func close() {
        // The store owns the engine once it opened: closing it closes the engine.
        if let store { store.close() } else { engine.close() }
    }
}
