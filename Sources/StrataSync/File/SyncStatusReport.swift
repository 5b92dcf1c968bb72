/// Where one file stands with sync: its client, what waits to upload, what was downloaded.
package struct SyncStatusReport: Sendable, Hashable {
    /// The file's client id (made when it was first synced).
    package var clientID: UInt64
    /// Changesets recorded and not yet acknowledged by the server.
    package var pendingUploads: Int
    /// The highest client sequence the server acknowledged (0: none).
    package var lastAcknowledged: UInt64
    /// The last server sequence applied (0: none).
    package var checkpoint: UInt64

    /// A report of these values.
    package init(clientID: UInt64, pendingUploads: Int, lastAcknowledged: UInt64, checkpoint: UInt64) {
        self.clientID = clientID
        self.pendingUploads = pendingUploads
        self.lastAcknowledged = lastAcknowledged
        self.checkpoint = checkpoint
    }
}
