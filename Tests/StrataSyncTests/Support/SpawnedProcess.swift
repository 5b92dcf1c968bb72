import Foundation
import Glibc
import Synchronization

/// A child process a test runs (a `StrataSyncChild` client, a `strata-sync-server`): its stdout
/// is collected line by line on a thread of its own, stderr goes to a file for diagnostics, and
/// a watchdog SIGKILLs it after `limit` so a hang fails the test instead of stalling it.
final class SpawnedProcess: Sendable {
    /// How the process ended.
    enum Status: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    private struct State {
        var lines: [String] = []
        var status: Status?
        var lineWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var exitWaiters: [CheckedContinuation<Status, Never>] = []
    }

    /// The executable's name and arguments, for messages.
    let commandLine: String
    /// Where its stderr goes.
    let errorLogPath: String
    /// Its process id.
    let processIdentifier: Int32
    private let state = Mutex(State())

    private init(commandLine: String, errorLogPath: String, processIdentifier: Int32) {
        self.commandLine = commandLine
        self.errorLogPath = errorLogPath
        self.processIdentifier = processIdentifier
    }

    /// Starts `executable` with `arguments`; stderr goes to `errorLogPath`.
    static func start(executable: String, arguments: [String], errorLogPath: String,
                      limit: Duration = .seconds(150)) throws -> SpawnedProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        guard FileManager.default.createFile(atPath: errorLogPath, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errorLogPath])
        }
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorLogPath))
        try process.run()
        let spawned = SpawnedProcess(
            commandLine: ([URL(fileURLWithPath: executable).lastPathComponent] + arguments).joined(separator: " "),
            errorLogPath: errorLogPath, processIdentifier: process.processIdentifier)
        let reader = output.fileHandleForReading.fileDescriptor
        let box = ProcessBox(process)
        Thread {
            spawned.collect(from: reader)
            box.process.waitUntilExit()
            let status: Status = box.process.terminationReason == .uncaughtSignal
                ? .signalled(box.process.terminationStatus) : .exited(box.process.terminationStatus)
            spawned.finish(status)
        }.start()
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(limit.components.seconds))) {
            if spawned.status == nil { _ = Glibc.kill(pid, SIGKILL) }
        }
        return spawned
    }

    /// The lines printed so far (without newlines).
    var lines: [String] {
        state.withLock { $0.lines }
    }

    /// How it ended; nil while it runs.
    var status: Status? {
        state.withLock { $0.status }
    }

    /// What it wrote to stderr so far.
    var errorOutput: String {
        (try? String(contentsOfFile: errorLogPath, encoding: .utf8)) ?? ""
    }

    /// Returns once it has printed `count` lines or has ended.
    func waitForLines(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.lines.count >= count || state.status != nil { return true }
                state.lineWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Returns how it ended, once it has ended and all its output is collected.
    @discardableResult
    func waitForExit() async -> Status {
        await withCheckedContinuation { continuation in
            let status = state.withLock { state -> Status? in
                if let status = state.status { return status }
                state.exitWaiters.append(continuation)
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    /// SIGKILLs it (if it still runs) and waits until it has ended.
    func kill() async {
        if status == nil { _ = Glibc.kill(processIdentifier, SIGKILL) }
        await waitForExit()
    }

    private func collect(from descriptor: Int32) {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending += chunk[..<count]
            var complete: [String] = []
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                complete.append(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
            if !complete.isEmpty { append(complete) }
        }
        if !pending.isEmpty { append([String(decoding: pending, as: UTF8.self)]) }
    }

    private func append(_ newLines: [String]) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.lines += newLines
            let count = state.lines.count
            let ready = state.lineWaiters.filter { $0.count <= count }.map(\.continuation)
            state.lineWaiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    private func finish(_ status: Status) {
        let (lineWaiters, exitWaiters) = state.withLock { state in
            state.status = status
            defer {
                state.lineWaiters.removeAll()
                state.exitWaiters.removeAll()
            }
            return (state.lineWaiters.map(\.continuation), state.exitWaiters)
        }
        for continuation in lineWaiters { continuation.resume() }
        for continuation in exitWaiters { continuation.resume(returning: status) }
    }
}

/// Hands the `Process` to the collecting thread. @unchecked: after `run()` only that thread
/// touches it (`waitUntilExit`, then the termination fields).
private final class ProcessBox: @unchecked Sendable {
    let process: Process
    init(_ process: Process) {
        self.process = process
    }
}
