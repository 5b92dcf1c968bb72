import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix

/// A server that offers the login's WebSocket route (`/apps/{appID}/auth`) and misbehaves as
/// told, in this process on a free loopback port: the faults a real server, a proxy or a
/// load balancer can show a client mid-login.
final class FakeAuthServer: Sendable {
    /// What the route does once the WebSocket is open.
    enum Behaviour: Sendable {
        /// Reads the request and closes without answering.
        case closeWithoutAnswer
        /// Reads the request and never answers, holding the connection open.
        case neverAnswer
        /// Answers with this text.
        case answerText(String)
        /// Answers with these bytes in a binary message.
        case answerBinary([UInt8])
    }

    let port: Int
    private let task: Task<Void, any Error>

    var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(port: Int, task: Task<Void, any Error>) {
        self.port = port
        self.task = task
    }

    /// Starts serving; `webSocket: false` refuses every upgrade, as a plain HTTP server does.
    static func start(_ behaviour: Behaviour, webSocket: Bool = true) async throws -> FakeAuthServer {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("apps/:appID/auth") { _, _ in
            webSocket ? .upgrade([:]) : .dontUpgrade
        } onUpgrade: { inbound, outbound, _ in
            var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            _ = try await messages.next()
            switch behaviour {
            case .closeWithoutAnswer:
                return
            case .neverAnswer:
                // Waits for the client to go away (its close ends the inbound stream).
                while try await messages.next() != nil {}
            case .answerText(let text):
                try await outbound.write(.text(text))
            case .answerBinary(let bytes):
                try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
            }
        }
        return try await start(router: router)
    }

    /// Starts serving `router` (HTTP and WebSocket upgrades).
    static func start(router: Router<BasicWebSocketRequestContext>) async throws -> FakeAuthServer {
        var logger = Logger(label: "fake-auth-server")
        logger.logLevel = .critical
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(ws: .init(maxFrameSize: 1 << 21))),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger)
        let task = Task {
            defer { portContinuation.finish() }
            try await application.runService(gracefulShutdownSignals: [])
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port != 0 else {
            task.cancel()
            throw ServerTestFailure("the in-process server did not start")
        }
        return FakeAuthServer(port: port, task: task)
    }

    /// Stops serving and waits until it has.
    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// A TCP server on a free loopback port that accepts every connection and closes it as soon as
/// the request arrives, before any HTTP answer: a proxy or a crashed backend cutting it off.
final class HangUpServer: Sendable {
    let port: Int
    private let listener: any Channel
    /// One element per connection the server hung up on.
    let hangUps: AsyncStream<Void>

    var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(port: Int, listener: any Channel, hangUps: AsyncStream<Void>) {
        self.port = port
        self.listener = listener
        self.hangUps = hangUps
    }

    static func start() async throws -> HangUpServer {
        let (hangUps, hungUp) = AsyncStream<Void>.makeStream()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HangUpHandler(hungUp: hungUp))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = listener.localAddress?.port else {
            try? await listener.close()
            throw ChannelError.inappropriateOperationForState
        }
        return HangUpServer(port: port, listener: listener, hangUps: hangUps)
    }

    func stop() async {
        try? await listener.close()
    }
}

/// Closes the connection when the first bytes of a request arrive.
private final class HangUpHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let hungUp: AsyncStream<Void>.Continuation

    private var closing = false

    init(hungUp: AsyncStream<Void>.Continuation) { self.hungUp = hungUp }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        closing = true
        let hungUp = hungUp
        context.close().whenComplete { _ in hungUp.yield() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
