// A one-shot, Sendable hand-over of an object, results or a list to another context.
//
// Design: the reference carries no version pin. It records the object's class and key (or the
// list's owner and property, or the query) and the version the source read. Object keys are
// never reused, so the destination finds the same object at any version at least as new as the
// source's. A destination reading an older version is refreshed first (outside a write
// transaction; a write transaction already reads the newest version). So an unresolved
// reference holds nothing that needs releasing, and no reference can make the file grow.

import StrataStorage
import StrataStore

/// A reference to a managed object, `Results`, `List` or `LinkingObjects` that can be sent to
/// another thread, queue or actor and resolved there, exactly once, with `Database.resolve(_:)`.
///
/// ```swift
/// let reference = ThreadSafeReference(to: person)
/// Task { @MyActor in
///     let db = try await Database(configuration: config, actor: MyActor.shared)
///     guard let person = db.resolve(reference) else { return }  // nil: deleted meanwhile
///     try await db.asyncWrite { person.name = "Ann" }
/// }
/// ```
///
/// A reference made inside a write transaction to an object, a list or linking objects (or to
/// results of a list) resolves to nil wherever it is resolved: the object may exist only in
/// that transaction, and until the commit no other instance can tell it from an object a later
/// transaction makes if this one is rolled back. Make the reference after committing. A
/// reference to results of a query made there resolves normally (the query runs again where it
/// is resolved). Resolving a reference twice stops the program with a message.
public struct ThreadSafeReference<Confined: ThreadConfined>: Sendable {
    let handover: Handover
    private let state: ResolutionState
    /// Set for a reference made inside a write transaction that finds its value by object
    /// keys: it resolves to nil (see the type's documentation).
    let isUnresolvable: Bool

    /// Creates a reference to `threadConfined`, in its own context.
    public init(to threadConfined: Confined) {
        guard let database = threadConfined._confinedDatabase else {
            fatalError("Cannot make a ThreadSafeReference to an unmanaged value: it is not confined to any thread, so pass it directly (or add it to a database first).")
        }
        database.verify("ThreadSafeReference(to:)")
        handover = threadConfined._handover
        isUnresolvable = database.isInWriteTransaction && handover.namesObjectKeys
        state = ResolutionState()
    }

    /// Whether the reference can no longer be resolved: true once it (or any copy of it) has
    /// been resolved, since a reference resolves only once. A value deleted since the reference
    /// was made does not make it invalidated; resolving it then returns nil.
    public var isInvalidated: Bool { state.isResolved }

    /// Whether the reference was made from a value of a database with this file.
    var fileIdentity: String { handover.fileIdentity }

    /// Marks the reference resolved; stops if it already was.
    func claim() {
        require(state.claim(), """
            This ThreadSafeReference to \(handover.summary) was already resolved. A reference can be resolved \
            only once; make a new reference (or use @ThreadSafe, which can be read many times).
            """)
    }
}

/// Whether a reference has been resolved, shared by its copies.
final class ResolutionState: Sendable {
    private let resolved = Locked(false)

    /// Whether `claim()` has been called.
    var isResolved: Bool { resolved.withLock { $0 } }

    /// Returns true the first time only.
    func claim() -> Bool {
        resolved.withLock { resolved in
            defer { resolved = true }
            return !resolved
        }
    }
}

extension Database {
    /// Resolves a reference made in another context: returns the same object, results or list,
    /// live in this instance, or nil if the object (or a list's owner) was deleted.
    ///
    /// If this instance reads a version older than the one the reference was made at, it is
    /// refreshed first (unless it is in a write transaction, which always reads the newest
    /// version). Works inside and outside write transactions. A reference can be resolved only
    /// once, and only by an instance of the same file. A reference to an object, list or linking
    /// objects made inside a write transaction resolves to nil (in any instance).
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        core.verify("resolve(_:)")
        if reference.isUnresolvable {
            // Nothing of the file is read, so any instance may consume it (as in RealmSwift).
            reference.claim()
            return nil
        }
        require(reference.fileIdentity == configuration.identity, """
            The ThreadSafeReference was made from a database of \(reference.fileIdentity), not of \
            \(configuration.identity); resolve it with an instance of the same file.
            """)
        reference.claim()
        return value(of: reference.handover)
    }

    /// The value a hand-over describes, after moving to its version if this instance is older.
    func value<Confined: ThreadConfined>(of handover: Handover) -> Confined? {
        if version < handover.version && !isInWriteTransaction { refresh() }
        return Confined._resolve(handover, in: self)
    }
}
