extension SyncSession {
    /// Which way data moves: local changes going up, or the server's changes coming down.
    public enum ProgressDirection: Sendable, Hashable {
        /// Local changes to the server.
        case upload
        /// The server's changes (and subscription bootstraps) to this file.
        case download
    }

    /// How long a progress notification keeps reporting.
    public enum ProgressMode: Sendable, Hashable {
        /// Reports every change of the totals for as long as the token lives.
        case reportIndefinitely
        /// Reports the work outstanding when the notification was added, then stops once that
        /// work is done (the last report has `isTransferComplete`).
        case forCurrentlyOutstandingWork
    }

    /// How far a transfer has come. The units are changesets for uploads (local commits that
    /// changed synced objects) and server sequence numbers for downloads, not bytes: they are
    /// what the session can count without encoding. `transferredBytes` and
    /// `transferrableBytes` are the same numbers under RealmSwift's names.
    public struct Progress: Sendable, Hashable {
        /// The units done.
        public var transferred: UInt64
        /// The units to do (at least `transferred`).
        public var transferrable: UInt64

        /// Progress with `transferred` of `transferrable` units done.
        public init(transferred: UInt64, transferrable: UInt64) {
            self.transferred = min(transferred, transferrable)
            self.transferrable = transferrable
        }

        /// Whether everything known has been transferred.
        public var isTransferComplete: Bool { transferred >= transferrable }

        /// `transferred / transferrable`, 1 when there is nothing to transfer.
        public var fractionTransferred: Double {
            transferrable == 0 ? 1 : Double(transferred) / Double(transferrable)
        }

        /// RealmSwift's name for `transferred` (units, not bytes: see the type's comment).
        public var transferredBytes: Int { Int(clamping: transferred) }

        /// RealmSwift's name for `transferrable` (units, not bytes: see the type's comment).
        public var transferrableBytes: Int { Int(clamping: transferrable) }
    }

    /// Whether the session is running: RealmSwift's `SyncSession.State`.
    public enum State: Sendable, Hashable {
        /// Connected, connecting, or waiting to reconnect.
        case active
        /// Suspended, logged out, or stopped by a fatal error.
        case inactive
        /// Kept for RealmSwift's `switch` statements: a Strata session stops at once and is
        /// never reported as dying.
        case dying
    }

    /// The state of the session's network connection.
    public enum ConnectionState: Sendable, Hashable {
        /// No connection: suspended, stopped, or waiting to reconnect.
        case disconnected
        /// Opening the connection or waiting for the server's `welcome`.
        case connecting
        /// The server welcomed the session; changes flow both ways.
        case connected
    }
}

/// Keeps a progress notification alive; `invalidate()` (or releasing the last reference) stops
/// it. RealmSwift's `SyncSession.ProgressNotificationToken`.
public final class ProgressNotificationToken: Sendable {
    private let cancel: @Sendable () -> Void

    init(cancel: @escaping @Sendable () -> Void) { self.cancel = cancel }

    /// Stops the notifications. Calling it again does nothing.
    public func invalidate() { cancel() }

    deinit { cancel() }
}
