// What `strata verify` finds in a file, and how it prints it.

import StrataStorage

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
