// An instance's write transactions: begin (blocking or suspending), commit (in place or with
// the I/O on a background thread), cancel, and the write { } scaffolding.

import Foundation
import StrataStore

extension DatabaseCore {
    func beginWrite() throws(Database.Error) {
        if isFrozen { frozenWrite("beginWrite()") }
        verify("beginWrite()")
        require(!session.isInWriteTransaction, "The database is already in a write transaction; write transactions cannot be nested. Make the changes inside the open transaction's block.")
        guard !configuration.readOnly else { throw readOnlyWrite() }
        if asyncWrites.isBusy { asyncWrites.drain() }
        advanceToLatestBeforeWrite()
        let old = session.version
        writeDamage = nil
        do { try session.beginWrite() } catch { throw Database.Error.wrap(error, path: configuration.path) }
        DatabaseLogger.report(.trace, "Began a write transaction on \(configuration.path) at version \(old)")
        try didBeginWrite(from: old)
    }

    /// Begins a write transaction without blocking a thread: suspends until the write lock is
    /// the instance's. Throws `CancellationError` when the task is cancelled while it waits
    /// (`WriteLockRequest`).
    func beginWriteAsync(isolation: isolated (any Actor)? = #isolation) async throws {
        if isFrozen { frozenWrite("asyncWrite()") }
        guard !configuration.readOnly else { throw readOnlyWrite() }
        if hasReleasedVersion { resumeReading() }
        advanceToLatestBeforeWrite()
        let acquired: AcquiredWrite
        do {
            acquired = try await WriteLockRequest.acquire(session.store, isolation: isolation)
        } catch let cancellation as CancellationError {
            throw cancellation
        } catch {
            throw Database.Error.wrap(error, path: configuration.path)
        }
        // Another use of the instance may have run on the actor while this one waited.
        if hasReleasedVersion { resumeReading() }
        let old = session.version
        writeDamage = nil
        session.adoptWrite(acquired)
        DatabaseLogger.report(.trace, "Began an async write transaction on \(configuration.path) at version \(old)")
        try didBeginWrite(from: old)
    }

    /// Runs `block` in a new write transaction and ends what it leaves open with `commit`; if
    /// the block throws, the transaction is rolled back and the error rethrown. The body of
    /// `write { }` and `write(withoutNotifying:_:)`.
    func write<Result>(_ block: () throws -> Result, committing commit: () throws -> Void) throws -> Result {
        try beginWrite()
        let result = try runInWriteTransaction(block)
        if session.isInWriteTransaction { try commit() }
        return result
    }

    /// Runs `block` in the open write transaction; if it throws, rolls the transaction back (when
    /// the block left it open) and rethrows. A block that committed or cancelled itself is left
    /// as it is.
    func runInWriteTransaction<Result>(_ block: () throws -> Result) rethrows -> Result {
        do {
            return try block()
        } catch {
            if session.isInWriteTransaction { session.rollback() }
            releaseWriteHold()
            throw error
        }
    }

    private func readOnlyWrite() -> Database.Error {
        Database.Error(.fileAccess, "Cannot write to a read-only database (\(configuration.path)); open it with readOnly = false to write.",
                       path: configuration.path)
    }

    func commitWrite() throws(Database.Error) {
        defer { releaseWriteHold() }
        verify("commitWrite()")
        require(session.isInWriteTransaction, "commitWrite() called outside a write transaction.")
        try throwWriteDamage()
        let old = session.version
        let target = ownCommit()
        defer { target?.committing(0) }
        do { try session.commit(reportingChanges: false) } catch { throw Database.Error.wrap(error, path: configuration.path) }
        DatabaseLogger.report(.trace, "Committed version \(session.version) of \(configuration.path)")
        notifyObservers(advancedFrom: old, to: session.version)
    }

    /// Commits with the I/O on a background thread; the caller (on the instance's actor) is
    /// suspended meanwhile and the instance keeps reading the version it started from.
    func commitWriteAsync(isolation: isolated (any Actor)? = #isolation) async throws(Database.Error) {
        defer { releaseWriteHold() }
        try throwWriteDamage()
        let pending: PendingCommit
        let old = session.version
        let target = ownCommit()
        defer { target?.committing(0) }
        do { pending = try session.prepareCommit() } catch { throw Database.Error.wrap(error, path: configuration.path) }
        let path = configuration.path
        let outcome: Database.Error? = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    try pending.perform()
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: Database.Error.wrap(error, path: path))
                }
            }
        }
        do { try session.finishCommit(pending, succeeded: outcome == nil) } catch { throw Database.Error.wrap(error, path: path) }
        if let outcome { throw outcome }
        DatabaseLogger.report(.trace, "Committed version \(session.version) of \(path)")
        if !session.isInWriteTransaction { notifyObservers(advancedFrom: old, to: session.version) }
    }

    /// Tells the instance's auto-refresh target that the version about to be committed is the
    /// instance's own (it moves there itself); returns the target, to be told when it is over.
    private func ownCommit() -> RefreshTarget? {
        guard let target = refreshTarget, let version = session.committingVersion else { return nil }
        target.committing(version)
        return target
    }

    func cancelWrite() {
        verify("cancelWrite()")
        require(session.isInWriteTransaction, "cancelWrite() called outside a write transaction.")
        writeDamage = nil
        session.rollback()
        releaseWriteHold()
        DatabaseLogger.report(.trace, "Cancelled a write transaction on \(configuration.path)")
    }
}
