import Foundation
import StrataStore
import Synchronization
import Testing
@testable import Strata

#if os(Linux)
/// A process killed while its repository changes the file's schema leaves the old schema and
/// values, or the new ones, never a mix. The child is this test binary itself, running
/// `SchemaEvolutionKillChild` (enabled only by the environment variable the parent sets): it
/// opens the file, says "opening", and then opens a repository of a changed type, which
/// migrates 20,000 items. The parent kills it with SIGKILL as soon as it reads that, so the
/// kill lands during the migration's write transaction (or, rarely, before or after it);
/// whichever schema the file then holds must be whole, with all its values.
@Suite("Repository schema evolution under SIGKILL")
struct SchemaEvolutionKillTests {
    @Test("a child killed while it migrates the file leaves the old schema and values or the new, whole")
    func killedMigrationLeavesOneWholeSchema() async throws {
        let folder = TemporaryFolder()
        let count = 20_000
        let items = (0..<count).map { evoNoteV1(String(format: "n%05d", $0), subtitle: $0 % 3 == 0 ? "s\($0)" : nil) }
        do {
            let v1 = try Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note")
            try await v1.save(contentsOf: items)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", "SchemaEvolutionKillChild"]
        var environment = ProcessInfo.processInfo.environment
        environment["STRATA_EVOLUTION_CHILD_FILE"] = folder.configuration().fileURL?.path
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let said = LineWatcher(awaiting: "opening")
        output.fileHandleForReading.readabilityHandler = { handle in said.append(handle.availableData) }
        let ended = LineWatcher(awaiting: nil)
        process.terminationHandler = { _ in
            ended.finish()
            said.finish()
        }
        try process.run()
        let pid = process.processIdentifier
        // Not a synchronisation: only a child that hangs meets it.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(300))
            _ = kill(pid, SIGKILL)
        }
        let sawOpening = await said.wait()
        _ = kill(pid, SIGKILL)
        _ = await ended.wait()
        watchdog.cancel()
        output.fileHandleForReading.readabilityHandler = nil
        #expect(sawOpening, "the child ended before it opened the file")

        let stored = try #require(try childSchema(folder)["Note"])
        if stored.properties.contains(where: { $0.name == "priority" }) {
            // The new schema: every item, with its values and the default.
            let v2 = try Repository(EvoNoteWithPriority.self, in: folder.configuration(), name: "Note")
            let loaded = try await v2.loadAll()
            #expect(loaded.count == count)
            #expect(loaded.allSatisfy { $0.priority == 3 && $0.status == "open" })
            #expect(loaded.map(\.body) == items.map(\.body))
            #expect(loaded.map(\.subtitle) == items.map(\.subtitle))
            #expect(try await v2.items(where: "priority == 3").count == count)
        } else {
            // The old schema: every item as it was saved.
            #expect(stored.properties.map(\.name).sorted() == ["body", "id", "place", "subtitle", "tags", "title"])
            let v1 = try Repository(EvoNoteV1.self, in: folder.configuration(), name: "Note")
            #expect(try await v1.loadAll() == items)
        }
    }
}

/// The child's half: runs only in the process the test above starts.
@Suite("SchemaEvolutionKillChild", .enabled(if: ProcessInfo.processInfo.environment["STRATA_EVOLUTION_CHILD_FILE"] != nil))
struct SchemaEvolutionKillChild {
    @Test("opens the parent's file with a changed type (the parent kills it meanwhile)")
    func migrate() async throws {
        let path = try #require(ProcessInfo.processInfo.environment["STRATA_EVOLUTION_CHILD_FILE"])
        var configuration = Database.Configuration(fileURL: URL(fileURLWithPath: path))
        configuration.maximumFileSize = 1 << 30
        // The file is opened first, so that what follows "opening" is the migration itself
        // (about 0.2 s for the parent's 20,000 items), where the parent's kill lands.
        var plain = configuration
        plain.objectTypes = []
        let open = try Database(configuration: plain, queue: nil)
        let v2 = try Repository(EvoNoteWithPriority.self, in: configuration, name: "Note")
        FileHandle.standardOutput.write(Data("opening\n".utf8))
        _ = try await v2.count
        withExtendedLifetime(open) {}
    }
}

/// Waits, without holding a thread, until `awaiting` has been read from a child's output (or
/// until `finish()`); answers whether it was read.
private final class LineWatcher: Sendable {
    private struct State {
        var text = ""
        var done = false
        var seen = false
        var waiter: CheckedContinuation<Bool, Never>?
    }
    private let awaiting: String?
    private let state = Mutex(State())

    init(awaiting: String?) { self.awaiting = awaiting }

    func append(_ data: Data) {
        let resume: CheckedContinuation<Bool, Never>? = state.withLock { state in
            if data.isEmpty { state.done = true } else { state.text += String(decoding: data, as: UTF8.self) }
            if let awaiting, state.text.contains(awaiting) { state.seen = true }
            guard state.done || state.seen, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        resume?.resume(returning: state.withLock { $0.seen })
    }

    func finish() { append(Data()) }

    func wait() async -> Bool {
        await withCheckedContinuation { continuation in
            let ready: Bool? = state.withLock { state in
                if state.done || state.seen { return state.seen }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// The file's stored schema, as a fresh open reads it.
private func childSchema(_ folder: TemporaryFolder) throws -> Schema {
    var configuration = folder.configuration()
    configuration.objectTypes = []
    let database = try Database(configuration: configuration, queue: nil)
    return withExtendedLifetime(database) { database.core.session.store.schema }
}
#endif
