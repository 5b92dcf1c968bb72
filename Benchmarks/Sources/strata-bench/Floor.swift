#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The physical floor of a durable commit: one `pwrite` of one 4096-byte page followed by
/// `fdatasync`, `count` times, to a file in the same directory the engines use. The file is
/// written and synced once before timing, so the timed rounds overwrite an allocated page and
/// need no metadata update. Returns rounds per second.
func measureFloor(directory: String, count: Int) throws -> Double {
    let path = directory + "/floor.dat"
    let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw BenchError("floor: cannot create \(path): errno \(errno)") }
    defer { close(fd) }
    let page = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 4096)
    defer { page.deallocate() }
    page.initializeMemory(as: UInt8.self, repeating: 0xA5)

    func round(_ i: Int) throws {
        page.storeBytes(of: UInt64(bitPattern: Int64(i)), as: UInt64.self)   // new content every round
        guard pwrite(fd, page.baseAddress, 4096, 0) == 4096 else { throw BenchError("floor: pwrite: errno \(errno)") }
        guard fdatasync(fd) == 0 else { throw BenchError("floor: fdatasync: errno \(errno)") }
    }
    try round(-1)
    guard fsync(fd) == 0 else { throw BenchError("floor: fsync: errno \(errno)") }

    let start = monotonicNanos()
    for i in 0..<count { try round(i) }
    let elapsed = monotonicNanos() - start
    return Double(count) / (Double(elapsed) / 1e9)
}
