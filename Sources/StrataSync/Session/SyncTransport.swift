package import Foundation
package import StrataSyncProtocol

/// How a session reaches the server: opens one connection per attempt. `WebSocketTransport`
/// is the real one; tests pass an in-memory transport that plays the server.
package protocol SyncTransport: Sendable {
    /// Opens a connection to `url`, returning once it can carry messages; throws when it cannot
    /// be opened (refused, unreachable, the upgrade declined).
    func connect(to url: URL) async throws -> any SyncConnection
}

/// One open connection: messages in both directions until either side closes it.
package protocol SyncConnection: Sendable {
    /// The server's messages in order. Ends when the connection closes; ends with an error when
    /// it breaks or a frame does not decode.
    var incoming: AsyncThrowingStream<SyncMessage, any Error> { get }
    /// Sends one message (one frame). Throws when the connection is closed.
    func send(_ message: SyncMessage) async throws
    /// Closes the connection; `incoming` then ends. Calling it again does nothing.
    func close()
}
