#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The physical floor of a durable commit: one `pwrite` of one 4096-byte page followed by
/// `fdatasync`, to a file in the same directory the engines use. The file is written and
/// synced once when it is made, so the rounds overwrite an allocated page and need no
/// metadata update.
final class FloorFile {
    private let fd: Int32
    private let page: UnsafeMutableRawBufferPointer

    init(directory: String) throws {
        let path = directory + "/floor.dat"
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw BenchError("floor: cannot create \(path): errno \(errno)") }
        page = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 4096)
        page.initializeMemory(as: UInt8.self, repeating: 0xA5)
        do {
            try round(-1)
            guard fsync(fd) == 0 else { throw BenchError("floor: fsync: errno \(errno)") }
        } catch {
            close(fd)
            page.deallocate()
            throw error
        }
    }

    deinit {
        close(fd)
        page.deallocate()
    }

    /// One round: new content (from `i`) written over the page, then `fdatasync`.
    func round(_ i: Int) throws {
        page.storeBytes(of: UInt64(bitPattern: Int64(i)), as: UInt64.self)
        guard pwrite(fd, page.baseAddress, 4096, 0) == 4096 else { throw BenchError("floor: pwrite: errno \(errno)") }
        guard fdatasync(fd) == 0 else { throw BenchError("floor: fdatasync: errno \(errno)") }
    }

    /// One round per element of `range`; returns the nanoseconds they took.
    func rounds(_ range: Range<Int>) throws -> UInt64 {
        let start = monotonicNanos()
        for i in range { try round(i) }
        return monotonicNanos() - start
    }
}

/// The floor as an engine of `kv-durable-commit`: `count` rounds; returns rounds per second.
func measureFloor(directory: String, count: Int) throws -> Double {
    let floor = try FloorFile(directory: directory)
    let elapsed = try floor.rounds(0..<count)
    return Double(count) / (Double(elapsed) / 1e9)
}

/// How many commits, and floor rounds, each block of the paired workloads has.
private let floorBlock = 50

/// The paired workloads (`kv-durable-floor`, `durable-floor`): `count` commits made by
/// `commit` in blocks of `floorBlock`, each block after as many rounds of the floor, so that
/// both see the disk in the same state (this machine's disk changes speed from minute to
/// minute). Returns the commits' time over the floor rounds' time: how many times the floor's
/// time a commit takes, 1 being the floor itself.
func pairedWithFloor(_ floor: FloorFile, count: Int, _ commit: (Range<Int>) async throws -> Void) async throws -> Double {
    var engineTime: UInt64 = 0, floorTime: UInt64 = 0
    for block in stride(from: 0, to: count, by: floorBlock) {
        let range = block..<min(block + floorBlock, count)
        floorTime += try floor.rounds(range)
        let start = monotonicNanos()
        try await commit(range)
        engineTime += monotonicNanos() - start
    }
    return Double(engineTime) / Double(max(floorTime, 1))
}
