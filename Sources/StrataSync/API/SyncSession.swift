import Foundation
import StrataSyncProtocol
import Synchronization

/// The connection between one synced file and the server: uploads the file's local changes,
/// downloads the server's, and keeps reconnecting (with backoff) until suspended, stopped by
/// a fatal error, or its user logs out. One per file per process; `Database.syncSession`
/// returns it.
///
/// ```swift
/// let session = db.syncSession!
/// try await session.wait(for: .upload)        // every local change so far is on the server
/// for await state in session.connectionStates { print(state) }
/// ```
///
/// All members may be called from any thread or actor; the session's work runs on its own
/// task and never on the caller's actor.
public final class SyncSession: Sendable {
    let engine: SessionEngine
    /// The file's subscriptions: what the server sends this file.
    public let subscriptions: SyncSubscriptionSet

    package init(ledger: any SessionLedger, settings: SessionEngine.Settings) {
        engine = SessionEngine(ledger: ledger, settings: settings)
        subscriptions = SyncSubscriptionSet(engine: engine)
    }

    /// Whether the session is running (`.active`) or suspended, stopped or logged out
    /// (`.inactive`).
    public var state: State { engine.status.read { $0.isActive ? .active : .inactive } }

    /// The network connection's state now.
    public var connectionState: ConnectionState { engine.status.read { $0.connectionState } }

    /// The connection's states as they change, starting with the current one. Ends when the
    /// session stops for good.
    public var connectionStates: AsyncStream<ConnectionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: ConnectionState.self, bufferingPolicy: .unbounded)
        let id = engine.status.update { status -> UInt64? in
            continuation.yield(status.connectionState)
            guard status.stopError == nil else { return nil }
            let id = status.makeID()
            status.connectionObservers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        let status = engine.status
        continuation.onTermination = { _ in status.update { $0.connectionObservers[id] = nil } }
        return stream
    }

    /// Called with every error the session meets (the server's refusals, failed connections,
    /// a download the file could not take), on the session's task. Fatal ones
    /// (``SyncError/Code/isFatal``) also stop the session.
    public var errorHandler: (@Sendable (SyncError) -> Void)? {
        get { engine.status.read { $0.errorHandler } }
        set { engine.status.update { $0.errorHandler = newValue } }
    }

    /// The most recent error the session met, nil if none.
    public var lastError: SyncError? { engine.status.read { $0.lastError } }

    /// Disconnects and stays disconnected until `resume()`. Local writes keep being recorded
    /// and upload after `resume()`.
    public func suspend() { engine.post(.suspend) }

    /// Connects again after `suspend()`. Does nothing on a running or stopped session.
    public func resume() { engine.post(.resume) }

    /// Returns once the transfer in `direction` caught up with where it was when called:
    /// `.upload`, every local change committed so far is acknowledged by the server;
    /// `.download`, every server change that existed at the call is applied locally (the
    /// session asks the server for its newest sequence; while disconnected, the next
    /// connection's greeting tells it), and the subscriptions current at the call are
    /// bootstrapped. Waits through disconnections and
    /// suspension; throws ``SyncError`` if the session stops (its user logs out, a fatal
    /// error), and `CancellationError` if the task is cancelled.
    public func wait(for direction: ProgressDirection) async throws {
        switch direction {
        case .upload:
            let recorded = (try? engine.ledger.lastRecordedSequence()) ?? engine.status.read { $0.lastRecorded }
            try await engine.await(.upload(through: recorded))
        case .download:
            try await engine.await(nil)
        }
    }

    /// Calls `block` with the progress of transfers in `direction` whenever it changes (on the
    /// session's task), first with the current progress if known. With
    /// `.forCurrentlyOutstandingWork` it reports only the work outstanding now and stops after
    /// reporting it complete. Keep the token: the notifications stop when it is invalidated
    /// or released. Returns nil when the session has stopped.
    public func addProgressNotification(for direction: ProgressDirection, mode: ProgressMode,
                                        block: @escaping @Sendable (Progress) -> Void) -> ProgressNotificationToken? {
        let status = engine.status
        let id = status.update { status -> UInt64? in
            guard status.stopError == nil else { return nil }
            var observer = SessionStatus.ProgressObserver(direction: direction, mode: mode, baseline: 0, target: nil, block: block)
            if mode == .forCurrentlyOutstandingWork {
                switch direction {
                case .upload:
                    observer.baseline = status.lastAcknowledged
                    observer.target = max(status.lastRecorded, status.lastAcknowledged)
                case .download:
                    observer.baseline = status.checkpoint
                    observer.target = status.connectionState == .connected ? status.knownLatest.map { max($0, status.checkpoint) } : nil
                }
            }
            let id = status.makeID()
            status.progressObservers[id] = observer
            return id
        }
        guard let id else { return nil }
        return ProgressNotificationToken { status.update { $0.progressObservers[id] = nil } }
    }

    /// Whether the session stopped for good (a fatal error, or its user logged out).
    var isStopped: Bool { engine.status.read { $0.stopError != nil } }

    /// Stops the session for good with `error` (its user logged out).
    func stop(_ error: SyncError) { engine.post(.stop(error)) }
}

extension SessionEngine {
    /// Suspends until `goal` is reached (nil: a download goal fixed now), throwing the
    /// session's stop error or `CancellationError`.
    func await(_ goal: SessionStatus.Waiter.Goal?) async throws {
        let status = self.status
        let id = status.update { $0.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                status.update { status in
                    guard !Task.isCancelled else { return continuation.resume(throwing: CancellationError()) }
                    status.waiters[id] = SessionStatus.Waiter(goal: goal ?? status.downloadGoal(), continuation: continuation)
                }
                if goal == nil { post(.requestLatestSequence) }
            }
        } onCancel: {
            let waiter = status.update { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
