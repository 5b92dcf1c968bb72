import Glibc

/// A loopback TCP port nothing listens on now: the kernel's pick for a socket bound to port 0,
/// released again. Another process may take it before the caller binds it, which is rare on a
/// test machine; the caller's bind then fails loudly.
func freeLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw LoopbackSocket.Failure.failed(operation: "socket", errno: errno) }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
            guard bind(descriptor, pointer, length) == 0 else { return -1 }
            return getsockname(descriptor, pointer, &length)
        }
    }
    guard bound == 0 else { throw LoopbackSocket.Failure.failed(operation: "bind", errno: errno) }
    return Int(UInt16(bigEndian: address.sin_port))
}
