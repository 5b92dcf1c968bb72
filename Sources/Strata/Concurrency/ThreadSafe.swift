// `@ThreadSafe`: a variable holding an object, results or a list that any context can read.

import StrataStorage
import StrataStore

/// A property wrapper that holds a managed object, `Results` or `List` so that it can be read
/// from any thread, queue or actor: each read finds the value again in the reader's own
/// database instance, live. It reads nil once the object (or a list's owner) was deleted.
///
/// Use it for a stored property, a local variable or a function parameter:
///
/// ```swift
/// @ThreadSafe var person = db.objects(Person.self).first
/// Task { @MyActor in
///     print(person?.name ?? "deleted")  // resolved in MyActor's Database
/// }
///
/// actor Worker {
///     func rename(@ThreadSafe person: Person?) async throws { ... }
/// }
/// try await worker.rename($person: $person)  // pass the wrapper: it is Sendable
/// ```
///
/// `ThreadSafe` is `Sendable`: it holds only the file's configuration and the value's key (or
/// query), behind a lock. Across actors in Swift 6, pass the wrapper (`$person`), not the
/// object; a parameter declared `@ThreadSafe` accepts it as `$name:`.
///
/// The reader's instance is the one open in its context: a thread-confined instance opened on
/// the reading thread, the queue-confined instance of the reading queue, the instance an actor
/// opened with `Database(configuration:actor:)`, or the main actor's. When there is none, one
/// is opened on the main thread or on a plain thread; inside an actor or task that opened no
/// instance of the file, reading stops with a message asking you to open one first (or use
/// `value(in:)`).
@propertyWrapper
public final class ThreadSafe<Value: ThreadConfined>: Sendable {
    private struct Stored: Sendable {
        let configuration: Database.Configuration
        let handover: Handover
    }
    private let stored: Locked<Stored?>

    /// Holds `wrappedValue` (nil, or a managed value), in its own context.
    public init(wrappedValue: Value?) {
        stored = Locked(Self.capture(wrappedValue))
    }

    /// Shares the state of another wrapper: what a `@ThreadSafe` parameter receives when called
    /// as `f($value: $value)`.
    public init(projectedValue: ThreadSafe<Value>) {
        stored = Locked(projectedValue.stored.withLock { $0 })
    }

    /// The wrapper itself, to pass to another context (it is `Sendable`).
    public var projectedValue: ThreadSafe<Value> { self }

    /// The value, live in the reader's database instance; nil if none was set or the object
    /// was deleted. Setting it captures the new value in the setter's context.
    public var wrappedValue: Value? {
        get {
            guard let stored = stored.withLock({ $0 }) else { return nil }
            guard let confinement = CurrentContext.confinement(for: stored.configuration) else {
                fatalError("""
                    @ThreadSafe was read in an actor or task that has no Database of \(stored.configuration.identity) \
                    open: open one there first (try await Database(configuration:actor:)), or read it with value(in:).
                    """)
            }
            let core: DatabaseCore
            do { core = try DatabaseCore.open(stored.configuration, confinement) } catch {
                fatalError("@ThreadSafe could not open \(stored.configuration.identity) to read its value: \(error)")
            }
            return Database(core: core).value(of: stored.handover)
        }
        set {
            let captured = Self.capture(newValue)
            stored.withLock { $0 = captured }
        }
    }

    /// The value, live in `database` (which must be an instance of the same file, used in its
    /// own context); nil if none was set or the object was deleted.
    public func value(in database: Database) -> Value? {
        guard let stored = stored.withLock({ $0 }) else { return nil }
        database.verify("ThreadSafe.value(in:)")
        require(stored.handover.fileIdentity == database.configuration.identity, """
            The @ThreadSafe value belongs to \(stored.handover.fileIdentity), not \
            \(database.configuration.identity); read it with an instance of the same file.
            """)
        return database.value(of: stored.handover)
    }

    private static func capture(_ value: Value?) -> Stored? {
        guard let value else { return nil }
        guard let database = value._confinedDatabase else {
            fatalError("@ThreadSafe holds managed values only: add the object to a database first.")
        }
        database.verify("@ThreadSafe")
        return Stored(configuration: database.configuration, handover: value._handover)
    }
}
