import Foundation

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "notifications" {
        try await runNotificationBenchmark(Array(arguments.dropFirst()))
    } else {
        try await runBenchmarks(arguments)
    }
} catch {
    FileHandle.standardError.write(Data("strata-bench: \(error)\n".utf8))
    exit(1)
}
