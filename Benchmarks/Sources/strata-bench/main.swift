import Foundation

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "notifications" {
        try await runNotificationBenchmark(Array(arguments.dropFirst()))
    } else if arguments.first == "linking" {
        #if NO_STRATA
        throw BenchError("built with NO_STRATA: the linking benchmark measures Strata only")
        #else
        try await runLinkingBenchmark(Array(arguments.dropFirst()))
        #endif
    } else {
        try await runBenchmarks(arguments)
    }
} catch {
    FileHandle.standardError.write(Data("strata-bench: \(error)\n".utf8))
    exit(1)
}
