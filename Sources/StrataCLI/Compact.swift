// `strata compact FILE COPY`: a compacted copy of a database file, written to a new file.

import ArgumentParser
import Foundation
import StrataStorage

/// `strata compact FILE COPY`.
struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a compacted copy of a database file to a new file.",
        discussion: "<file> is opened read-only and left as it is; <copy> must not exist yet."
    )

    @Argument(help: "The database file to compact.")
    var file: String

    @Argument(help: "The new file to write the compacted copy to.")
    var copy: String

    func run() throws {
        try Self.compact(path: file, to: copy)
        print("wrote \(copy)")
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
