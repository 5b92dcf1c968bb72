// A write transaction acquired away from the session that will use it: async writes wait for
// the write lock on a background task, then hand the transaction to the session's context.

import StrataStorage

/// A write transaction begun on the store's engine, not yet given to a session. Sendable so
/// that it can travel from the task that waited for the lock to the session's context; it is
/// used by one of them at a time (the hand-off orders the two).
package final class AcquiredWrite: @unchecked Sendable {
    fileprivate var transaction: WriteTransaction?

    private init(_ transaction: WriteTransaction) { self.transaction = transaction }

    /// Waits (suspending, blocking no thread) for the write lock of `store`.
    package static func acquire(_ store: Store) async throws -> AcquiredWrite {
        AcquiredWrite(try await store.engine.beginWrite())
    }

    /// Calls `completion` with the write transaction of `store` once the lock is ours; nothing
    /// waits meanwhile (no thread, no task).
    package static func acquire(_ store: Store, then completion: @escaping @Sendable (Result<AcquiredWrite, any Error>) -> Void) {
        store.engine.beginWrite { result in
            completion(result.map { AcquiredWrite($0.transaction) })
        }
    }

    /// Releases the transaction unused, handing the lock on.
    package func release() {
        transaction?.rollback()
        transaction = nil
    }
}

extension StoreSession {
    /// Makes an acquired transaction the session's write transaction.
    package func adoptWrite(_ acquired: AcquiredWrite) {
        guard let transaction = acquired.transaction else { fatalError("internal error: the acquired write was already used") }
        acquired.transaction = nil
        adoptWrite(transaction)
    }
}
