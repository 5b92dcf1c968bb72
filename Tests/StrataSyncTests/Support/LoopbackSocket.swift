import Foundation
import Glibc

/// A TCP client socket to a loopback port, for tests that drive a server byte by byte.
///
/// Its calls block, so each runs on a thread of its own (`BlockingCall`), never on the
/// concurrency pool or an event loop, where a blocked receive would stop the very server it is
/// waiting for. Every receive gives up after `receiveLimitSeconds` (an error, not a result): a
/// hang guard.
final class LoopbackSocket: Sendable {
    /// Why a socket operation failed.
    enum Failure: Error, Equatable {
        /// `connect` failed with this errno (ECONNREFUSED when nothing listens).
        case connectFailed(errno: Int32)
        /// The peer closed (or reset) the connection; `received` is what arrived before.
        case closed(received: [UInt8])
        /// Nothing arrived within the receive limit.
        case receiveTimedOut
        /// Another socket error.
        case failed(operation: String, errno: Int32)
    }

    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Connects to 127.0.0.1:`port`.
    static func connect(port: Int, receiveLimitSeconds: Int = 30) async throws -> LoopbackSocket {
        try await BlockingCall.run {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw Failure.failed(operation: "socket", errno: errno) }
            var limit = timeval(tv_sec: receiveLimitSeconds, tv_usec: 0)
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard result == 0 else {
                let error = errno
                close(descriptor)
                throw Failure.connectFailed(errno: error)
            }
            return LoopbackSocket(descriptor: descriptor)
        }
    }

    /// Sends all of `bytes`; a closed peer is `.closed`.
    func send(_ bytes: [UInt8]) async throws {
        try await BlockingCall.run { try self.sendBlocking(bytes) }
    }

    /// Receives exactly `count` bytes; `.closed` with what arrived if the peer closes first.
    func receive(exactly count: Int) async throws -> [UInt8] {
        try await BlockingCall.run {
            var received: [UInt8] = []
            while received.count < count {
                received += try self.receiveSome(atMost: count - received.count, soFar: received)
            }
            return received
        }
    }

    /// Receives until the peer closes; returns everything that arrived.
    func receiveUntilClosed() async throws -> [UInt8] {
        try await BlockingCall.run {
            var received: [UInt8] = []
            while true {
                do {
                    received += try self.receiveSome(atMost: 65536, soFar: received)
                } catch Failure.closed(let all) {
                    return all
                }
            }
        }
    }

    private func sendBlocking(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE || errno == ECONNRESET { throw Failure.closed(received: []) }
                throw Failure.failed(operation: "send", errno: errno)
            }
            offset += sent
        }
    }

    private func receiveSome(atMost limit: Int, soFar: [UInt8]) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: limit)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { return Array(chunk[..<count]) }
            if count == 0 { throw Failure.closed(received: soFar) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: throw Failure.receiveTimedOut
            case ECONNRESET: throw Failure.closed(received: soFar)
            default: throw Failure.failed(operation: "recv", errno: errno)
            }
        }
    }
}
