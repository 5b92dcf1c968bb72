import NIOCore
import NIOPosix
import Synchronization

/// A loopback TCP server that sends back every byte it receives: the target of the proxy's own
/// tests. Counts the bytes it has received.
final class EchoServer: Sendable {
    /// The loopback port it listens on.
    let port: Int
    private let listener: any Channel
    private let received: ReceivedBytes

    private init(port: Int, listener: any Channel, received: ReceivedBytes) {
        self.port = port
        self.listener = listener
        self.received = received
    }

    /// Starts listening on 127.0.0.1 (a free port).
    static func start() async throws -> EchoServer {
        let received = ReceivedBytes()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(EchoHandler(received: received))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = listener.localAddress?.port else {
            try? await listener.close()
            throw ChannelError.inappropriateOperationForState
        }
        return EchoServer(port: port, listener: listener, received: received)
    }

    /// Bytes received so far, over all connections.
    var receivedBytes: Int {
        received.count.withLock { $0 }
    }

    /// Stops listening.
    func stop() async {
        try? await listener.close()
    }
}

private final class ReceivedBytes: Sendable {
    let count = Mutex(0)
}

private final class EchoHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let received: ReceivedBytes

    init(received: ReceivedBytes) {
        self.received = received
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        received.count.withLock { $0 += bytes.readableBytes }
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
