// Programming errors stop the process with a message that says what went wrong and what to do.
// Each misuse runs in a child process (StrataMisuseChild) so the test can watch it die: the
// child prints "misusing" just before the mistake, and the test checks that it then died by a
// signal with the expected message on stderr. A child that prints "survived" found a missing
// check.

import Foundation
import StrataTestWorkloads
import Synchronization
import Testing

@Suite struct MisuseTests {
    /// One mistake: the child's case name and the text its message must contain.
    struct Misuse: Sendable, CustomTestStringConvertible {
        let name: String
        let message: String
        var testDescription: String { name }
    }

    static let wrongContext = "Database accessed from the wrong context: "
    static let wrongActor = "Incorrect actor executor assumption; expected 'StrataMisuseChild.Keeper' executor."

    static let misuses: [Misuse] = [
        // Confinement.
        Misuse(name: "thread", message: wrongContext + "objects(_:) outside the thread that opened it"),
        Misuse(name: "thread-object", message: wrongContext + "reading an object's property outside the thread that opened it"),
        Misuse(name: "queue", message: wrongContext + "objects(_:) outside the dispatch queue 'own-queue'"),
        Misuse(name: "queue-open-elsewhere",
               message: "Database(configuration:queue:) was called outside the queue 'intended-queue'. A queue-confined database must be opened on its queue"),
        Misuse(name: "main-actor", message: wrongContext + "objects(_:) outside the main actor"),
        // Off a custom actor, Swift's own isolation check stops the process before Strata's
        // message can be printed; it names the actor.
        Misuse(name: "actor", message: wrongActor),
        Misuse(name: "actor-object", message: wrongActor),
        Misuse(name: "async-write-thread",
               message: "asyncWrite() can only be used on databases isolated to an actor or the main actor; use write { } on thread- and queue-confined databases."),
        Misuse(name: "async-write-other-actor",
               message: "asyncWrite() was called from Stranger, but the database is isolated to the actor Keeper. Call it from code isolated to that actor"),
        // Transactions and object lifetime.
        Misuse(name: "set-outside-write", message: "Cannot modify managed objects outside a write transaction: wrap the change in database.write { }"),
        Misuse(name: "write-deleted", message: "Object of type 'Dog' has been deleted or invalidated; check isInvalidated before using it."),
        Misuse(name: "read-after-invalidate", message: "Object of type 'Dog' has been deleted or invalidated; check isInvalidated before using it."),
        Misuse(name: "write-after-invalidate", message: "Object of type 'Dog' has been deleted or invalidated; check isInvalidated before using it."),
        Misuse(name: "read-deleted", message: "Object of type 'Dog' has been deleted or invalidated; check isInvalidated before using it."),
        Misuse(name: "primary-key-change",
               message: "The primary key of 'Person' cannot be changed after the object was added to a database. To give it a new key, delete the object"),
        Misuse(name: "nested-write", message: "The database is already in a write transaction; write transactions cannot be nested."),
        Misuse(name: "duplicate-primary-key",
               message: "An object of type 'Person' with primary key 1 already exists. Use update: .modified or .all to update it."),
        Misuse(name: "update-without-primary-key",
               message: "'Dog' does not have a primary key and cannot be updated; add it with update: .error."),
        Misuse(name: "delete-unmanaged", message: "Cannot delete an unmanaged object; only objects added to a database can be deleted."),
        // Handing over and async writes.
        Misuse(name: "resolve-twice",
               message: "This ThreadSafeReference to a 'Person' object was already resolved. A reference can be resolved only once"),
        Misuse(name: "async-write-thread-confined",
               message: "Async writes need a context to call back on: use them on a database opened on the main thread, confined to a serial queue"),
        // Queries.
        Misuse(name: "query-non-persisted",
               message: "The key path does not go through any @Persisted property of 'Dog'; only persisted properties can be queried."),
        Misuse(name: "query-sum-of-string", message: "Invalid query: sum applies to numbers; 'Dog.name' is a string"),
        Misuse(name: "query-sort-unknown", message: "Invalid query: 'Dog' has no property 'age'; its properties are: name"),
        // Frozen data.
        Misuse(name: "write-frozen", message: "Cannot modify frozen data: setting an object's property on a frozen database, object or collection."),
        Misuse(name: "write-frozen-database", message: "Cannot modify frozen data: beginWrite() on a frozen database"),
        Misuse(name: "refresh-frozen", message: "Cannot refresh a frozen database: frozen data never changes. Use thaw() to get a live database"),
        Misuse(name: "autorefresh-frozen", message: "Auto-refresh cannot be enabled on a frozen database"),
        Misuse(name: "append-frozen-to-thawed",
               message: "Cannot add or link a frozen 'Dog' object to live data. Thaw both: call thaw() on the object and on the list or object you add it to"),
        Misuse(name: "append-to-frozen-list", message: "Cannot modify frozen data: adding or linking an object on a frozen database"),
        // Notifications.
        Misuse(name: "observe-in-write",
               message: "Results.observe(keyPaths:on:_:) cannot be called inside a write transaction: register observers before beginWrite()"),
        Misuse(name: "observe-read-only",
               message: "Results.observe(keyPaths:on:_:): a read-only database never changes, so it cannot be observed"),
        Misuse(name: "observe-outside-actor", message: wrongActor),
        Misuse(name: "observe-unmanaged", message: "Only managed objects can be observed: add the object to a database first."),
        Misuse(name: "observe-bad-key-path",
               message: "Cannot observe key path 'name.first': 'Dog.name' is not a link, so the path cannot go on past it."),
        // Embedded objects.
        Misuse(name: "embedded-add",
               message: "'Flat' is an EmbeddedObject: it cannot be added on its own. Assign it to a property (a link or a list) of the object it belongs to."),
        Misuse(name: "embedded-objects", message: "'Flat' is an EmbeddedObject, which cannot be queried on its own"),
        Misuse(name: "sections-block-on-actor",
               message: "Sections made with a key function cannot be observed on another actor: the function may not be called there."),
        Misuse(name: "embedded-second-parent",
               message: "'Flat' objects are embedded, and this one already belongs to an object; an embedded object has one parent."),
        // Maps.
        Misuse(name: "map-key-with-dot", message: "The Map key \"level.1\" contains a '.'; map keys cannot contain '.'."),
        Misuse(name: "map-key-with-dollar", message: "The Map key \"$top\" starts with '$'; map keys cannot start with '$'."),
        // Custom-persistable types.
        Misuse(name: "custom-persistable-unconvertible",
               message: "The stored value 3 of 'Parity.number' cannot be converted to EvenNumber (init(persistedValue:) returned nil); declare the property optional (EvenNumber?)"),
        // Mixed values.
        Misuse(name: "mixed-embedded", message: "A MixedValue cannot hold an embedded 'Flat' object"),
        Misuse(name: "mixed-too-deep", message: "collections in a mixed value may nest at most 50 levels deep"),
        Misuse(name: "mixed-nested-invalidated", message: "nested in an AnyRealmValue/MixedValue is invalidated: its object was deleted, or the place it was read from no longer holds a dictionary"),
        Misuse(name: "mixed-set-nested", message: "cannot hold a nested list or dictionary (RealmSwift refuses them too)"),
        // The dynamic API.
        Misuse(name: "dynamic-unknown-type", message: "The database has no type named 'Nope'."),
        Misuse(name: "dynamic-create-embedded", message: "dynamicCreate: 'Flat' is an embedded type"),
        Misuse(name: "objects-of-dynamic-object", message: "DynamicObject names no type: use dynamicObjects(_:)"),
        Misuse(name: "typed-query-on-dynamic-objects", message: "Key paths cannot name a DynamicObject's properties"),
        Misuse(name: "dynamic-list-wrong-type", message: "Object of type 'Person' does not match the list's type 'Dog'"),
        Misuse(name: "dynamic-list-of-values", message: "dynamicList(_:): 'Person.name' is string, not a List of objects."),
        Misuse(name: "dynamic-list-unmanaged", message: "dynamicList(_:) can only be used on an object managed by a database"),
        // Values.
        Misuse(name: "create-long-array",
               message: "Invalid array input: 4 values given for 'Person', which has 3 properties; an array gives at most one value per property"),
    ]

    @Test(arguments: misuses)
    func misuseStopsTheProcessWithItsMessage(_ misuse: Misuse) async throws {
        let run = try await MisuseChild.run(misuse.name)
        #expect(!run.output.contains("survived"), "the misuse did not stop the process (a missing check)")
        #expect(run.output.contains("misusing"), "the child stopped before the misuse; stderr: \(run.errors)")
        #expect(run.signalled, "expected death by a signal, got exit status \(run.status); stderr: \(run.errors)")
        #expect(run.errors.contains(misuse.message), "stderr: \(run.errors)")
    }
}

/// Runs StrataMisuseChild once, in a fresh directory, and collects how it ended.
enum MisuseChild {
    struct Run {
        let signalled: Bool
        let status: Int32
        let output: String
        let errors: String
    }

    /// `directory` is the child's DIR argument (a fresh folder when nil). Waits without
    /// holding a thread: the test runner's cooperative pool has one thread per core, and
    /// dozens of children waited for synchronously starved every other async test of it.
    static func run(_ misuse: String, in directory: URL? = nil, limit: Duration = .seconds(30)) async throws -> Run {
        let folder = TemporaryFolder()
        let outputURL = folder.url.appendingPathComponent("stdout")
        let errorsURL = folder.url.appendingPathComponent("stderr")
        try Data().write(to: outputURL)
        try Data().write(to: errorsURL)
        let output = try FileHandle(forWritingTo: outputURL)
        let errors = try FileHandle(forWritingTo: errorsURL)
        defer {
            try? output.close()
            try? errors.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [misuse, (directory ?? folder.url).path]
        // The backtracer would spend a second or more symbolicating each crash; the runtime
        // still prints the message and its own short stack trace.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        // Files, not pipes: nothing to drain while the child runs.
        process.standardOutput = output
        process.standardError = errors
        let ending = ChildEnding()
        process.terminationHandler = { _ in ending.finish() }
        try process.run()
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: limit)
            if ending.timeOut() { _ = kill(pid, SIGKILL) }
        }
        await ending.wait()
        watchdog.cancel()
        if ending.timedOut {
            Issue.record("StrataMisuseChild \(misuse) did not end within \(limit)")
        }
        return Run(signalled: process.terminationReason == .uncaughtSignal,
                   status: process.terminationStatus,
                   output: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
                   errors: (try? String(contentsOf: errorsURL, encoding: .utf8)) ?? "")
    }

    /// The StrataMisuseChild executable built with the tests (the test target depends on it); STRATA_MISUSE_CHILD overrides.
    static let executable: String = {
        guard let path = locateProductExecutable(named: "StrataMisuseChild", override: "STRATA_MISUSE_CHILD") else {
            fatalError("StrataMisuseChild not found near the test bundle; build it or set STRATA_MISUSE_CHILD")
        }
        return path
    }()
}

/// A child's end, awaited without blocking a thread: `finish()` (the termination handler)
/// resumes `wait()`; `timeOut()` marks a child the watchdog kills.
private final class ChildEnding: Sendable {
    private struct State {
        var ended = false
        var timedOut = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Marks the child as timed out unless it has ended; returns whether it had not.
    func timeOut() -> Bool {
        state.withLock { state in
            if state.ended { return false }
            state.timedOut = true
            return true
        }
    }

    var timedOut: Bool { state.withLock { $0.timedOut } }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state -> Bool in
                if state.ended { return true }
                state.waiter = continuation
                return false
            }
            if ended { continuation.resume() }
        }
    }
}
