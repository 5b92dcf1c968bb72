import Foundation

/// The child's command line:
///
///     StrataSyncChild --file PATH --server URL --app ID --seed N --ops K [--kill-after-ops M] [--client NAME]
///     StrataSyncChild --file PATH --server URL --app ID --dump
///     StrataSyncChild --file PATH --local --seed N --ops K      (no sync: the workload and the dump alone)
struct ChildArguments {
    /// Why the command line was refused.
    enum Problem: Error, CustomStringConvertible {
        case missing(option: String)
        case notANumber(option: String, value: String)
        case unknownOption(String)
        case valueMissing(option: String)

        var description: String {
            switch self {
            case .missing(let option): "\(option) is required"
            case .notANumber(let option, let value): "\(option) takes a whole number, not '\(value)'"
            case .unknownOption(let option): "unknown option \(option)"
            case .valueMissing(let option): "\(option) needs a value"
            }
        }
    }

    var file: String
    var server: String?
    var app: String?
    var seed: UInt64 = 0
    var operations = 0
    var killAfterOperations: Int?
    /// Distinguishes this client's list tokens from every other client's (default: the seed).
    var client: String
    var dumpOnly = false
    var local = false
    /// Every write appends one token to the item `tokens` instead of the random workload, so a
    /// test can require each printed write's token exactly once and in order.
    var tokensOnly = false
    /// Every write edits the one list of the item `lists` (`ListWorkload`) instead of the
    /// random workload.
    var listsOnly = false

    init(_ arguments: [String]) throws(Problem) {
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var index = 0
        while index < arguments.count {
            let option = arguments[index]
            switch option {
            case "--dump", "--local", "--tokens-only", "--lists-only":
                flags.insert(option)
                index += 1
            case "--file", "--server", "--app", "--seed", "--ops", "--kill-after-ops", "--client":
                guard index + 1 < arguments.count else { throw .valueMissing(option: option) }
                values[option] = arguments[index + 1]
                index += 2
            default:
                throw .unknownOption(option)
            }
        }
        func number(_ option: String) throws(Problem) -> Int? {
            guard let text = values[option] else { return nil }
            guard let value = Int(text), value >= 0 else { throw .notANumber(option: option, value: text) }
            return value
        }
        guard let file = values["--file"] else { throw .missing(option: "--file") }
        self.file = file
        dumpOnly = flags.contains("--dump")
        local = flags.contains("--local")
        tokensOnly = flags.contains("--tokens-only")
        listsOnly = flags.contains("--lists-only")
        server = values["--server"]
        app = values["--app"]
        if !local {
            guard server != nil else { throw .missing(option: "--server") }
            guard app != nil else { throw .missing(option: "--app") }
        }
        if !dumpOnly {
            guard let seed = try number("--seed") else { throw .missing(option: "--seed") }
            guard let operations = try number("--ops") else { throw .missing(option: "--ops") }
            self.seed = UInt64(seed)
            self.operations = operations
        }
        killAfterOperations = try number("--kill-after-ops")
        client = values["--client"] ?? "s\(seed)"
    }
}
