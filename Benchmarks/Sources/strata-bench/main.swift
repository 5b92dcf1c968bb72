import Foundation

do {
    try await runBenchmarks(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("strata-bench: \(error)\n".utf8))
    exit(1)
}
