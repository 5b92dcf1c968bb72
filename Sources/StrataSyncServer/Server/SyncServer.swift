import Hummingbird
import HummingbirdWebSocket
public import Logging
import NIOCore
public import ServiceLifecycle
import StrataSyncProtocol
import Synchronization

/// The sync server: login (the `/apps/{appID}/auth` WebSocket and HTTP), the `/sync/{appID}`
/// WebSocket, and a store.
///
/// In a process of its own (the `strata-sync-server` tool) call ``runUntilSignalled(onListening:)``,
/// which serves until SIGINT or SIGTERM. Inside an app's own swift-service-lifecycle
/// `ServiceGroup` add it as a `Service`: ``run()`` serves until the group shuts down gracefully.
/// In-process (tests, demos) call ``start()``, which returns once the server listens and
/// reports its port, then ``shutdown()``:
///
/// ```swift
/// let server = SyncServer(configuration: .init(port: 0, storage: .embedded(directory: folder)))
/// let port = try await server.start()
/// // … clients connect to ws://127.0.0.1:\(port)/sync/myapp …
/// await server.shutdown()
/// ```
public final class SyncServer: Service {
    /// Where the server keeps its data.
    public enum Storage: Sendable {
        /// A Strata engine file in this folder (created if needed).
        case embedded(directory: String)
        /// A PostgreSQL database, `postgres://user[:password]@host[:port]/database`.
        case postgres(url: String)
        /// A store made by the caller.
        case custom(any SyncStorage)
    }

    /// How to run the server.
    public struct Configuration: Sendable {
        /// The address to listen on.
        public var host: String
        /// The port; 0 picks a free one (``start()`` returns it).
        public var port: Int
        /// The store.
        public var storage: Storage
        /// The apps served and their logins.
        public var apps: AppsConfiguration

        /// A configuration; by default `127.0.0.1:9090`, any app.
        public init(host: String = "127.0.0.1", port: Int = 9090, storage: Storage, apps: AppsConfiguration = .open) {
            self.host = host
            self.port = port
            self.storage = storage
            self.apps = apps
        }
    }

    /// The configuration the server was made with.
    public let configuration: Configuration
    private let logger: Logger
    private let running = Mutex<Running?>(nil)

    private struct Running: Sendable {
        let serviceGroup: ServiceGroup
        let serverTask: Task<Void, any Error>
        let storageTask: Task<Void, any Error>
        let port: Int
    }

    /// A server, not yet listening.
    public init(configuration: Configuration, logger: Logger = Logger(label: "strata.sync.server")) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The port the server listens on, once started.
    public var port: Int? { running.withLock { $0?.port } }

    /// Opens the store, starts listening and returns the port. Throws when the store cannot be
    /// opened or the address is taken.
    @discardableResult
    public func start() async throws -> Int {
        try await start(handlingSignals: false)
    }

    /// Serves until SIGINT or SIGTERM, then shuts down cleanly. `onListening` is called with the
    /// port once the server accepts connections.
    public func runUntilSignalled(onListening: @Sendable (Int) -> Void = { _ in }) async throws {
        onListening(try await start(handlingSignals: true))
        guard let task = running.withLock({ $0?.serverTask }) else { return }
        let outcome = await task.result
        await shutdown()
        try outcome.get()
    }

    /// The `Service` entry point: serves until the enclosing `ServiceGroup` shuts down
    /// gracefully (or the task is cancelled), then shuts down cleanly.
    public func run() async throws {
        _ = try await start(handlingSignals: false)
        guard let task = running.withLock({ $0?.serverTask }) else { return }
        let outcome = await withTaskCancellationOrGracefulShutdownHandler {
            await task.result
        } onCancelOrGracefulShutdown: {
            Task { await self.shutdown() }
        }
        await shutdown()
        try outcome.get()
    }

    /// Stops accepting connections, closes the sessions and the store. Does nothing when the
    /// server is not running.
    public func shutdown() async {
        guard let current = running.withLock({ value -> Running? in defer { value = nil }; return value }) else { return }
        await current.serviceGroup.triggerGracefulShutdown()
        _ = await current.serverTask.result
        current.storageTask.cancel()
        // postgres-nio's pool ends once its connections have closed; a shutdown must return
        // even if one of them never does.
        do {
            try await withDeadline(Self.storageShutdownLimit, "closing the store") { _ = await current.storageTask.result }
        } catch {
            logger.warning("shutting down without waiting for the store: \(error)")
        }
    }

    /// How long ``shutdown()`` waits for the store's background work to end.
    static let storageShutdownLimit: Duration = .seconds(10)

    private func start(handlingSignals: Bool) async throws -> Int {
        let storage: any SyncStorage
        switch configuration.storage {
        case .embedded(let directory): storage = try EmbeddedSyncStorage(directory: directory)
        case .postgres(let url): storage = try PostgresSyncStorage(url: url, logger: logger)
        case .custom(let custom): storage = custom
        }
        let notifier = CommitNotifier()
        let history = HistoryCache()
        let storageTask = Task {
            try await storage.run { app, sequence in
                history.noteLatest(app: app, sequence: sequence)
                notifier.notifyFromStore(app: app, sequence: sequence)
            }
        }
        let tokens: TokenIssuer
        do {
            try await storage.prepare()
            tokens = TokenIssuer(secret: try await storage.serverSecret(),
                                 accessLifetime: .seconds(Int64(clamping: configuration.apps.accessTokenLifetime ?? 30 * 60)))
        } catch {
            storageTask.cancel()
            throw SyncServerError.storageUnavailable("\(error)")
        }

        let apps = configuration.apps
        let router = Router(context: BasicWebSocketRequestContext.self)
        let authenticator = Authenticator(storage: storage, tokens: tokens, apps: apps)
        LoginRoutes(authenticator: authenticator).add(to: router)
        AuthWebSocketRoute(authenticator: authenticator).add(to: router)
        let logger = self.logger
        router.ws("sync/:appID") { request, context in
            guard let appID = context.parameters.get("appID"), AppsConfiguration.isValidAppID(appID) else { return .dontUpgrade }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let appID = context.requestContext.parameters.get("appID") ?? ""
            let handler = SyncSessionHandler(app: appID, storage: storage, tokens: tokens, apps: apps, notifier: notifier,
                                             history: history, logger: logger)
            await handler.run(inbound: inbound, outbound: outbound)
        }

        let (ports, portContinuation) = AsyncStream<Result<Int, any Error>>.makeStream()
        let webSocket = WebSocketServerConfiguration(maxFrameSize: SyncProtocol.maximumFrameSize + 64 * 1024,
                                                     autoPing: .enabled(timePeriod: .seconds(30)))
        let application = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(ws: webSocket)),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            onServerRunning: { channel in portContinuation.yield(.success(channel.localAddress?.port ?? 0)) },
            logger: logger)
        let serviceGroup = ServiceGroup(configuration: .init(services: [application],
                                                             gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [],
                                                             logger: logger))
        let serverTask = Task {
            do { try await serviceGroup.run() } catch {
                portContinuation.yield(.failure(error))
                throw error
            }
            portContinuation.yield(.failure(CancellationError()))
        }
        var iterator = ports.makeAsyncIterator()
        guard let outcome = await iterator.next() else { throw CancellationError() }
        do {
            let port = try outcome.get()
            running.withLock { $0 = Running(serviceGroup: serviceGroup, serverTask: serverTask, storageTask: storageTask, port: port) }
            return port
        } catch {
            storageTask.cancel()
            throw SyncServerError.storageUnavailable("the server could not listen on \(configuration.host):\(configuration.port): \(error)")
        }
    }
}
