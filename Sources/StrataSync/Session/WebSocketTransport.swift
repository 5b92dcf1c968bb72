package import Foundation
import HummingbirdWSClient
package import Logging
import NIOCore
import NIOPosix
import StrataSyncProtocol
import Synchronization

/// The session's transport over a WebSocket (hummingbird-websocket's client): every binary
/// message is one `SyncFrameCodec` frame; text messages are refused as malformed.
package struct WebSocketTransport: SyncTransport {
    package var logger: Logger

    package init(logger: Logger = Logger(label: "strata.sync.websocket")) {
        self.logger = logger
    }

    /// Opens a connection to `url`. Each connection runs on an event loop group of its own
    /// (one thread), shut down when the connection ends or the attempt fails: the WebSocket
    /// client keeps a socket the server half-closed before answering the upgrade open, and
    /// cancelling it does not close it, so shutting the group down is what closes it. A failed
    /// or cancelled attempt returns only once its socket is closed.
    package func connect(to url: URL) async throws -> any SyncConnection {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            return try await connect(to: url, on: group)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private func connect(to url: URL, on group: MultiThreadedEventLoopGroup) async throws -> any SyncConnection {
        let connection = WebSocketConnection()
        let opened = OpenSignal()
        let logger = logger
        let configuration = WebSocketClientConfiguration(maxFrameSize: SyncProtocol.maximumFrameSize,
                                                         autoPing: .enabled(timePeriod: .seconds(30)))
        let attempt = Mutex<Task<Void, Never>?>(nil)
        // Cancelling the caller (the session gave up on this attempt) cancels the attempt's
        // task too (and the caller then shuts its group down, closing the socket).
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<any SyncConnection, any Error>) in
                opened.set(continuation)
                guard !Task.isCancelled else { return opened.resume(throwing: CancellationError()) }
                // The client's `connect` returns only when the connection closes, so it runs in a
                // task of its own; the handler hands the open connection back through `opened`.
                let task = Task {
                    do {
                        try await WebSocketClient.connect(url: url.absoluteString, configuration: configuration, eventLoopGroup: group,
                                                          logger: logger) { inbound, outbound, _ in
                            connection.attach(outbound)
                            opened.resume(returning: connection)
                            do {
                                for try await message in inbound.messages(maxSize: SyncProtocol.maximumFrameSize) {
                                    connection.deliver(try await Self.decode(message, replyingTo: outbound))
                                }
                                connection.finish(throwing: nil)
                            } catch {
                                connection.finish(throwing: error)
                                try? await outbound.close(.protocolError, reason: nil)
                            }
                        }
                        opened.resume(throwing: SyncError(connectionFailed: "the server closed the connection before it opened", url: url))
                        connection.finish(throwing: nil)
                    } catch {
                        opened.resume(throwing: SyncError(connectionFailed: String(describing: error), url: url))
                        connection.finish(throwing: error)
                    }
                    // The connection ended: its thread is no longer needed.
                    try? await group.shutdownGracefully()
                }
                attempt.withLock { $0 = task }
            }
        } onCancel: {
            opened.resume(throwing: CancellationError())
            attempt.withLock { $0 }?.cancel()
        }
    }
}

extension WebSocketTransport {
    /// The message in a WebSocket message; one that is not a frame is answered with
    /// `error(.malformedFrame)` and thrown as a `SyncError`, which ends the connection.
    fileprivate static func decode(_ message: WebSocketMessage, replyingTo outbound: WebSocketOutboundWriter) async throws -> SyncMessage {
        let problem: String
        switch message {
        case .binary(let buffer):
            do { return try SyncFrameCodec.decode(Array(buffer.readableBytesView)) } catch {
                problem = "a frame from the server did not decode: \(error)"
            }
        case .text:
            problem = "the server sent a text message; sync frames are binary"
        }
        let frame = SyncFrameCodec.encode(.error(code: .malformedFrame, message: problem))
        try? await outbound.writeBinaryMessage(ByteBuffer(bytes: frame))
        throw SyncError(.malformedFrame, problem)
    }
}

/// Resumes the continuation of `connect` once, with the first outcome.
private final class OpenSignal: Sendable {
    private let continuation = Mutex<CheckedContinuation<any SyncConnection, any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<any SyncConnection, any Error>) { self.continuation.withLock { $0 = continuation } }

    func resume(returning connection: any SyncConnection) {
        continuation.withLock { $0.take() }?.resume(returning: connection)
    }

    func resume(throwing error: any Error) {
        continuation.withLock { $0.take() }?.resume(throwing: error)
    }
}

/// One WebSocket connection as a `SyncConnection`.
private final class WebSocketConnection: SyncConnection {
    let incoming: AsyncThrowingStream<SyncMessage, any Error>
    private let continuation: AsyncThrowingStream<SyncMessage, any Error>.Continuation
    private let outbound = Mutex<WebSocketOutboundWriter?>(nil)

    init() {
        (incoming, continuation) = AsyncThrowingStream.makeStream(of: SyncMessage.self, throwing: (any Error).self)
    }

    func attach(_ writer: WebSocketOutboundWriter) { outbound.withLock { $0 = writer } }
    func deliver(_ message: SyncMessage) { continuation.yield(message) }
    func finish(throwing error: (any Error)?) { continuation.finish(throwing: error) }

    func send(_ message: SyncMessage) async throws {
        guard let writer = outbound.withLock({ $0 }) else { throw SyncError(.connectionClosed, "the connection is closed") }
        try await writer.writeBinaryMessage(ByteBuffer(bytes: SyncFrameCodec.encode(message)))
    }

    func close() {
        guard let writer = outbound.withLock({ $0.take() }) else { return }
        Task { try? await writer.close(.normalClosure, reason: nil) }
    }
}
