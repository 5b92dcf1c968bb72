import Foundation

extension Process {
    /// Starts the process and returns its termination status once it has exited, without
    /// holding a thread while it runs (the concurrency pool has one thread per core; a test
    /// blocked in `waitUntilExit()` there keeps every other test's tasks waiting).
    func runUntilExit() async throws -> Int32 {
        try await withCheckedThrowingContinuation { continuation in
            terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try run() } catch {
                terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
    }
}
