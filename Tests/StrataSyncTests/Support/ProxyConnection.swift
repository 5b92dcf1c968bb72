import NIOCore
import NIOPosix

/// One client connection through a `FaultProxy`: the accepted channel, the channel to the
/// target, and the two lanes of bytes between them.
///
/// Confined to the accepted channel's event loop (the target channel is opened on the same
/// loop), so its state needs no lock; other threads reach it through `ProxyConnectionHandle`.
/// Both channels read all the time; bytes that may not be forwarded yet (no target channel
/// yet, a delay, a stall) wait in their lane. Tests move little data, so the lanes need no
/// back-pressure.
final class ProxyConnection {
    /// Which way bytes go.
    enum Direction {
        case toTarget
        case toClient
    }

    /// Bytes of one direction waiting for their time. Deadlines never decrease along the queue,
    /// so a held-back chunk holds back every later chunk of its direction: order is kept.
    private struct Lane {
        var queue: [(deadline: NIODeadline, bytes: ByteBuffer)] = []
        var drainScheduled = false
        var lastDeadline = NIODeadline.uptimeNanoseconds(0)
    }

    let number: Int
    let inbound: any Channel
    private let target: SocketAddress
    private var plan: ConnectionFaultPlan
    private let proxy: FaultProxy
    private var outbound: (any Channel)?
    private var connecting = false
    private var stalled = false
    private var closed = false
    private var closeWhenDrained = false
    private var chunks = 0
    private var toTarget = Lane()
    private var toClient = Lane()

    init(number: Int, inbound: any Channel, target: SocketAddress, plan: ConnectionFaultPlan, proxy: FaultProxy) {
        self.number = number
        self.inbound = inbound
        self.target = target
        self.plan = plan
        self.proxy = proxy
    }

    private var eventLoop: any EventLoop { inbound.eventLoop }

    /// Attaches to the accepted channel and connects to the target unless stalled.
    func start(stalled: Bool) {
        eventLoop.preconditionInEventLoop()
        self.stalled = stalled
        do {
            try inbound.pipeline.syncOperations.addHandler(ForwardHandler(connection: self, direction: .toTarget))
        } catch {
            close()
            return
        }
        if !stalled { connect() }
    }

    private func connect() {
        guard !connecting, outbound == nil, !closed else { return }
        connecting = true
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        ClientBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ForwardHandler(connection: bound.value, direction: .toClient))
                }
            }
            .connect(to: target)
            .assumeIsolated()
            .whenComplete { result in
                let connection = bound.value
                connection.connecting = false
                switch result {
                case .success(let channel):
                    connection.connected(channel)
                case .failure:
                    connection.close()
                }
            }
    }

    private func connected(_ channel: any Channel) {
        guard !closed else {
            channel.close(promise: nil)
            return
        }
        outbound = channel
        drain(.toTarget)
        drain(.toClient)
    }

    /// Bytes read from one side, to forward to the other.
    func received(_ bytes: ByteBuffer, going direction: Direction) {
        guard !closed else { return }
        chunks += 1
        var bytes = bytes
        switch plan.nextChunkFault(length: bytes.readableBytes) {
        case .cut(let forwardedBytes):
            bytes = bytes.getSlice(at: bytes.readerIndex, length: forwardedBytes) ?? ByteBuffer()
            enqueue(bytes, going: direction, delay: 0)
            proxy.count { $0.cut += 1 }
            closeWhenDrained = true
        case .delay(let milliseconds):
            if milliseconds > 0 { proxy.count { $0.delayedChunks += 1 } }
            enqueue(bytes, going: direction, delay: milliseconds)
        }
        if let dropAfter = plan.dropAfterChunks, chunks >= dropAfter, !closeWhenDrained {
            proxy.count { $0.dropped += 1 }
            close()
        }
        drain(direction)
    }

    private func enqueue(_ bytes: ByteBuffer, going direction: Direction, delay milliseconds: Int64) {
        let requested = NIODeadline.now() + .milliseconds(milliseconds)
        switch direction {
        case .toTarget:
            toTarget.lastDeadline = max(requested, toTarget.lastDeadline)
            toTarget.queue.append((toTarget.lastDeadline, bytes))
        case .toClient:
            toClient.lastDeadline = max(requested, toClient.lastDeadline)
            toClient.queue.append((toClient.lastDeadline, bytes))
        }
    }

    private func drain(_ direction: Direction) {
        guard !closed, !stalled else { return }
        let destination: (any Channel)?
        var lane: Lane
        switch direction {
        case .toTarget: destination = outbound; lane = toTarget
        case .toClient: destination = inbound; lane = toClient
        }
        guard let destination else { return }
        let now = NIODeadline.now()
        var written = 0
        while let first = lane.queue.first, first.deadline <= now {
            lane.queue.removeFirst()
            written += first.bytes.readableBytes
            destination.write(first.bytes, promise: nil)
        }
        if written > 0 {
            // Counted before the flush sends them, so a peer that has the bytes sees them counted.
            proxy.count {
                switch direction {
                case .toTarget: $0.bytesToTarget += written
                case .toClient: $0.bytesToClient += written
                }
            }
            destination.flush()
        }
        if let next = lane.queue.first, !lane.drainScheduled {
            lane.drainScheduled = true
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            eventLoop.scheduleTask(deadline: next.deadline) {
                let connection = bound.value
                switch direction {
                case .toTarget: connection.toTarget.drainScheduled = false
                case .toClient: connection.toClient.drainScheduled = false
                }
                connection.drain(direction)
            }
        }
        switch direction {
        case .toTarget: toTarget = lane
        case .toClient: toClient = lane
        }
        if closeWhenDrained, toTarget.queue.isEmpty, toClient.queue.isEmpty {
            // Let the last slice leave before the close.
            destination.writeAndFlush(ByteBuffer()).assumeIsolated().whenComplete { _ in
                self.close()
            }
            closeWhenDrained = false
        }
    }

    /// Stops forwarding until `resume()`: what arrives meanwhile waits in the lanes, as
    /// packets a partition holds up would be retransmitted after it heals.
    func stall() {
        guard !closed, !stalled else { return }
        stalled = true
        proxy.count { $0.stalled += 1 }
    }

    /// Forwards again after `stall()`: connects if it never did, sends what waited.
    func resume() {
        guard !closed, stalled, !proxy.isBlackHoled else { return }
        stalled = false
        if outbound == nil {
            connect()
        } else {
            drain(.toTarget)
            drain(.toClient)
        }
    }

    /// Closes both sides; what is still queued is lost, as in a dropped connection.
    func close() {
        guard !closed else { return }
        closed = true
        toTarget.queue.removeAll()
        toClient.queue.removeAll()
        inbound.close(promise: nil)
        outbound?.close(promise: nil)
        proxy.connectionClosed(number)
    }
}

/// A `ProxyConnection` reachable from any thread: each call hops to its event loop.
struct ProxyConnectionHandle: Sendable {
    private let connection: NIOLoopBound<ProxyConnection>
    private let eventLoop: any EventLoop

    init(_ connection: ProxyConnection) {
        self.eventLoop = connection.inbound.eventLoop
        self.connection = NIOLoopBound(connection, eventLoop: eventLoop)
    }

    func close() -> EventLoopFuture<Void> {
        eventLoop.submit { connection.value.close() }
    }

    func stall() -> EventLoopFuture<Void> {
        eventLoop.submit { connection.value.stall() }
    }

    func resume() -> EventLoopFuture<Void> {
        eventLoop.submit { connection.value.resume() }
    }
}

/// Hands what one side of a `ProxyConnection` reads to the connection.
private final class ForwardHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let connection: ProxyConnection
    private let direction: ProxyConnection.Direction

    init(connection: ProxyConnection, direction: ProxyConnection.Direction) {
        self.connection = connection
        self.direction = direction
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection.received(unwrapInboundIn(data), going: direction)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.close()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.close()
    }
}
