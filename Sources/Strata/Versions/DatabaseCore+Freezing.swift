// What a frozen instance does differently: it refuses writes, serialises its reads under its
// lock (see Database+Freezing.swift), and thaws into the live instance of the caller's context.

import Foundation

extension DatabaseCore {
    /// Stops a write to a frozen instance.
    func frozenWrite(_ operation: String) -> Never {
        fatalError("""
            Cannot modify frozen data: \(operation) on a frozen database, object or collection. Frozen data never \
            changes; call thaw() to get the live version in this context, and write to that in a write transaction.
            """)
    }

    /// Runs a read of a frozen instance under its lock; a live instance's reads take no lock.
    @inline(__always)
    func withReadLock<R>(_ body: () throws -> R) rethrows -> R {
        guard let frozenLock else { return try body() }
        return try frozenLock.withLock(body)
    }

    /// The live instance for this instance's configuration in the caller's context: the
    /// current thread, or `isolation` when the caller is isolated to an actor.
    func liveCore(isolation: (any Actor)?) -> DatabaseCore {
        let confinement: Confinement
        if let isolation {
            confinement = .isolated(to: isolation)
        } else {
            confinement = .callingThread
        }
        do {
            return try DatabaseCore.open(configuration, confinement)
        } catch {
            fatalError("thaw(): could not open \(configuration.path) in this context: \(error)")
        }
    }
}
