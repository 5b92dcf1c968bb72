import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy on a loopback port that forwards to one loopback target and injects the faults of
/// a seeded `FaultSchedule` (delays, drops, mid-stream cuts), plus the partitions a test asks
/// for (`partition(_:)`, `heal()`, `cutAll()`). It counts what it did (`counters`) so a test can
/// check its faults really happened.
///
/// Bounded: it stops itself after `lifetime`, closing every connection, so a test that forgets
/// it or fails halfway leaves nothing listening.
final class FaultProxy: Sendable {
    /// What a partition does to connections.
    enum PartitionMode: Sendable {
        /// Existing connections are closed; new ones are accepted and closed at once.
        case refuse
        /// Existing and new connections stall: nothing is forwarded until `heal()`, as when
        /// packets are lost and retransmitted later.
        case blackHole
    }

    /// What the proxy has done so far.
    struct Counters: Sendable, Equatable {
        /// Connections accepted and forwarded (or stalled).
        var accepted = 0
        /// Connections closed at once because of a `.refuse` partition or after `stop()`.
        var refused = 0
        /// Connections closed by the schedule's drops.
        var dropped = 0
        /// Connections closed mid-chunk by the schedule's cuts.
        var cut = 0
        /// Connections closed by `cutAll()` or by a `.refuse` partition.
        var closedByTest = 0
        /// Chunks the schedule held back.
        var delayedChunks = 0
        /// Times a connection was stalled by a `.blackHole` partition.
        var stalled = 0
        /// Bytes forwarded from clients to the target.
        var bytesToTarget = 0
        /// Bytes forwarded from the target to clients.
        var bytesToClient = 0
        /// Partitions begun.
        var partitions = 0
    }

    /// Why the proxy could not start.
    enum StartError: Error, Equatable, CustomStringConvertible {
        /// The target is not a loopback address: the proxy only ever forwards on this machine.
        case targetNotLoopback(host: String)
        var description: String {
            switch self {
            case .targetNotLoopback(let host): "FaultProxy forwards to loopback addresses only, not \(host)"
            }
        }
    }

    private struct State {
        var counters = Counters()
        var partition: PartitionMode?
        var connections: [Int: ProxyConnectionHandle] = [:]
        var nextConnection = 0
        var stopped = false
        var listener: (any Channel)?
        var lifetimeLimit: Scheduled<Void>?
    }

    /// The loopback port clients connect to.
    let port: Int
    /// The target's address.
    let target: SocketAddress
    private let schedule: FaultSchedule
    private let state = Mutex(State())

    private init(port: Int, target: SocketAddress, schedule: FaultSchedule) {
        self.port = port
        self.target = target
        self.schedule = schedule
    }

    /// Starts a proxy on 127.0.0.1 (a free port) in front of `targetHost:targetPort`.
    static func start(targetHost: String = "127.0.0.1", targetPort: Int, schedule: FaultSchedule,
                      lifetime: Duration = .seconds(300)) async throws -> FaultProxy {
        guard ["127.0.0.1", "::1", "localhost"].contains(targetHost) else {
            throw StartError.targetNotLoopback(host: targetHost)
        }
        let target = try SocketAddress.makeAddressResolvingHost(targetHost == "localhost" ? "127.0.0.1" : targetHost,
                                                                port: targetPort)
        let group = MultiThreadedEventLoopGroup.singleton
        // The proxy exists only once the port is known; connections that arrive before it is
        // set are refused by `accept` (there are none: nobody knows the port yet).
        let box = ProxyBox()
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                guard let proxy = box.proxy.withLock({ $0 }) else { return channel.close() }
                proxy.accept(channel)
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = listener.localAddress?.port else {
            try? await listener.close()
            throw ChannelError.inappropriateOperationForState
        }
        let proxy = FaultProxy(port: port, target: target, schedule: schedule)
        box.proxy.withLock { $0 = proxy }
        let limit = group.next().scheduleTask(in: .nanoseconds(Int64(lifetime.components.seconds) * 1_000_000_000)) {
            _ = proxy.closeEverything()
        }
        proxy.state.withLock {
            $0.listener = listener
            $0.lifetimeLimit = limit
        }
        return proxy
    }

    /// What the proxy has done so far.
    var counters: Counters {
        state.withLock { $0.counters }
    }

    /// Begins a partition: see `PartitionMode`. Lasts until `heal()`. Returns once every open
    /// connection is closed or stalled.
    func partition(_ mode: PartitionMode = .refuse) async {
        let affected = state.withLock { state -> [ProxyConnectionHandle] in
            state.partition = mode
            state.counters.partitions += 1
            if mode == .refuse { state.counters.closedByTest += state.connections.count }
            return Array(state.connections.values)
        }
        for connection in affected {
            switch mode {
            case .refuse: try? await connection.close().get()
            case .blackHole: try? await connection.stall().get()
            }
        }
    }

    /// Ends a partition: stalled connections resume, new connections are forwarded again.
    func heal() async {
        let affected = state.withLock { state -> [ProxyConnectionHandle] in
            state.partition = nil
            return Array(state.connections.values)
        }
        for connection in affected { try? await connection.resume().get() }
    }

    /// Closes every open connection (both sides) and returns once they are closed; new
    /// connections are still forwarded.
    func cutAll() async {
        let affected = state.withLock { state -> [ProxyConnectionHandle] in
            state.counters.closedByTest += state.connections.count
            return Array(state.connections.values)
        }
        for connection in affected { try? await connection.close().get() }
    }

    /// Stops listening and closes every connection.
    func stop() async {
        let listener = closeEverything()
        try? await listener?.closeFuture.get()
    }

    @discardableResult
    private func closeEverything() -> (any Channel)? {
        let (listener, connections) = state.withLock { state -> ((any Channel)?, [ProxyConnectionHandle]) in
            state.stopped = true
            state.lifetimeLimit?.cancel()
            state.lifetimeLimit = nil
            let connections = Array(state.connections.values)
            state.connections.removeAll()
            return (state.listener, connections)
        }
        listener?.close(promise: nil)
        for connection in connections { _ = connection.close() }
        return listener
    }

    /// Called on the accepted channel's event loop. The decision and the registration happen
    /// under one lock, so a partition begun at any moment either refuses or stalls the
    /// connection, or finds it registered and affects it (its call queues behind `start`).
    private func accept(_ channel: any Channel) {
        let accepted = state.withLock { state -> (ProxyConnection, stalled: Bool)? in
            if state.stopped || state.partition == .refuse {
                state.counters.refused += 1
                return nil
            }
            let number = state.nextConnection
            state.nextConnection += 1
            state.counters.accepted += 1
            let stalled = state.partition == .blackHole
            if stalled { state.counters.stalled += 1 }
            let connection = ProxyConnection(number: number, inbound: channel, target: target,
                                             plan: schedule.plan(forConnection: number), proxy: self)
            state.connections[number] = ProxyConnectionHandle(connection)
            return (connection, stalled)
        }
        guard let (connection, stalled) = accepted else {
            channel.close(promise: nil)
            return
        }
        connection.start(stalled: stalled)
    }

    /// A connection has closed (from either side or by a fault).
    func connectionClosed(_ number: Int) {
        _ = state.withLock { $0.connections.removeValue(forKey: number) }
    }

    /// Records what a connection did.
    func count(_ update: (inout Counters) -> Void) {
        state.withLock { update(&$0.counters) }
    }

    /// Whether new stalls should happen: a connection resumed by `heal()` must not be stalled
    /// again, one started during a black hole must.
    var isBlackHoled: Bool {
        state.withLock { $0.partition == .blackHole }
    }
}

/// The proxy, for the listener's initializer, which exists before the proxy does.
private final class ProxyBox: Sendable {
    let proxy = Mutex<FaultProxy?>(nil)
}
