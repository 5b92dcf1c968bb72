import Foundation

/// Runs a blocking call (a socket receive, a read of a child's output) on a thread of its own
/// and awaits its result. The concurrency pool has as few threads as the machine has cores;
/// blocking one of them can stall unrelated tests, or the servers a test is waiting for.
enum BlockingCall {
    static func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result(catching: body))
            }.start()
        }
    }
}
