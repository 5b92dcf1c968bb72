// A disk under an operating-system page cache, in memory, for crash and I/O-error tests
// (after SQLite's test VFS, which loses unsynced writes to simulate a power failure).
//
// Two images:
// - the durable image: what the platters hold; it changes only when `synchronize()` runs.
// - the volatile image: what the page cache shows (every write, synced or not). `map` and
//   `read` see it, so reads through the mapping see writes at once, as with Linux's unified
//   page cache.
// Writes since the last sync are kept as pending 4 KiB chunks (the unit the kernel writes
// back in), so a crash can keep any subset of them, in any order, one of them torn.
//
// Invariants:
// - The volatile image lives in one anonymous mapping reserved at init (`capacity` bytes), so
//   `map` returns the same base address for the disk's whole life, however far the file grows.
//   Whole pages past the end of the file are PROT_NONE: touching them faults, as touching a
//   mapped file past its end raises SIGBUS. The durable image is a second such mapping (bytes
//   past its size are zero); both are copied with memcpy, never element by element.
// - Everything mutable is guarded by `state`. Copies into the mapping happen under the lock;
//   readers read the mapping without it (as they read the page cache without one).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@testable import StrataStorage

final class SimulatedDisk: StorageFile, @unchecked Sendable {
    // @unchecked: `mapping` and `capacity` are immutable; everything else is inside `state`.

    /// The granularity of write-back: a crash keeps or loses each chunk of this size on its own.
    static let chunkSize = 4096
    /// The granularity of a torn write: a torn chunk keeps a prefix of these.
    static let sectorSize = 512

    /// Bytes the file may grow to (the size of the reserved mapping).
    let capacity: Int
    private let mapping: UnsafeMutableRawPointer
    private let durable: UnsafeMutableRawPointer

    private struct PendingChunk {
        var offset: Int
        var bytes: [UInt8]
    }

    private struct State {
        var volatileSize = 0
        var accessibleBytes = 0
        var durableSize = 0
        var pending: [PendingChunk] = []
        var operations = 0
        var operationsBeforePowerFailure: Int?
        var poweredOff = false
        var writeBudget: (bytes: Int, code: Int32)?
        var failingSync: Int32?
        var failingGrowth: Int32?
        /// How far `allocate` has set blocks aside (past the end of the file too).
        var allocatedEnd = 0
        /// What `availableSpace()` reports (nil: unknown).
        var freeSpace: UInt64?
        var allocations = 0
        var writes = 0
        var syncs = 0
        var bytesWritten = 0
        var sizeQueries = 0
    }
    private let state = Locked(State())

    /// An empty disk whose file may grow to `capacity` bytes.
    init(capacity: Int = 64 << 20) {
        self.capacity = capacity
        let base = mmap(nil, capacity, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        let second = mmap(nil, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        precondition(base != nil && base != MAP_FAILED && second != nil && second != MAP_FAILED,
                     "SimulatedDisk: cannot reserve \(capacity) bytes of address space")
        mapping = base!
        durable = second!
    }

    /// A disk holding `image`, all of it durable.
    convenience init(image: [UInt8], capacity: Int = 64 << 20) {
        self.init(capacity: capacity)
        image.withUnsafeBytes { self.restore($0) }
    }

    private func restore(_ image: UnsafeRawBufferPointer) {
        state.withLock { state in
            growVolatile(&state, to: image.count)
            if !image.isEmpty {
                mapping.copyMemory(from: image.baseAddress!, byteCount: image.count)
                durable.copyMemory(from: image.baseAddress!, byteCount: image.count)
            }
            state.durableSize = image.count
        }
    }

    deinit {
        munmap(mapping, capacity)
        munmap(durable, capacity)
    }

    // MARK: StorageFile

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        guard buffer.count > 0 else { return }
        let size = state.withLock { $0.volatileSize }
        let start = Int(min(offset, UInt64(size)))
        let available = min(buffer.count, size - start)
        if available > 0 { buffer.baseAddress!.copyMemory(from: mapping + start, byteCount: available) }
        if available < buffer.count {
            (buffer.baseAddress! + max(available, 0)).initializeMemory(as: UInt8.self, repeating: 0, count: buffer.count - max(available, 0))
        }
    }

    func write(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) throws {
        try state.withLock { state in
            try startOperation(&state, "write")
            state.writes += 1
            let total = buffers.reduce(0) { $0 + $1.count }
            let end = Int(offset) + total
            guard end <= capacity else { throw StorageError.ioFailure(operation: "write", code: EFBIG) }
            // Blocks set aside by `allocate` need no new space, past the end too.
            if let code = state.failingGrowth, end > max(state.volatileSize, state.allocatedEnd) {
                throw StorageError.ioFailure(operation: "write", code: code)
            }
            // A full disk accepts what fits, then fails: the caller sees an error after a short write.
            var allowed = total
            if let budget = state.writeBudget {
                allowed = min(total, budget.bytes)
                state.writeBudget!.bytes -= allowed
            }
            var position = Int(offset)
            for buffer in buffers where position < Int(offset) + allowed {
                let count = min(buffer.count, Int(offset) + allowed - position)
                apply(&state, UnsafeRawBufferPointer(start: buffer.baseAddress, count: count), at: position)
                position += count
                state.bytesWritten += count
            }
            if allowed < total, let budget = state.writeBudget {
                throw StorageError.ioFailure(operation: "write", code: budget.code)
            }
        }
    }

    func synchronize() throws {
        try state.withLock { state in
            try startOperation(&state, "fdatasync")
            state.syncs += 1
            if let code = state.failingSync {
                // Linux (since 4.13) marks the pages clean after a failed write-back: they stay
                // visible in the cache but will never reach the disk, and the next fsync succeeds.
                state.failingSync = nil
                state.pending.removeAll()
                throw StorageError.ioFailure(operation: "fdatasync", code: code)
            }
            makeDurable(&state)
        }
    }

    /// Sets blocks aside up to `range`'s end without changing the file's size: refused
    /// (ENOSPC, nothing set aside) while writes that grow the file fail, or when a full-disk
    /// budget is set that the new blocks exceed (they use it up). A model of
    /// `fallocate(FALLOC_FL_KEEP_SIZE)`; it is neither a write nor a sync, and survives crashes.
    func allocate(_ range: Range<UInt64>) throws -> Bool {
        try state.withLock { state in
            let end = Int(range.upperBound)
            let new = end - max(state.volatileSize, state.allocatedEnd)
            guard new > 0 else { return true }
            if let code = state.failingGrowth { throw StorageError.ioFailure(operation: "allocate", code: code) }
            if let budget = state.writeBudget {
                guard budget.bytes >= new else { throw StorageError.ioFailure(operation: "allocate", code: budget.code) }
                state.writeBudget!.bytes -= new
            }
            state.allocatedEnd = end
            state.allocations += 1
            return true
        }
    }

    /// Successful `allocate` calls that set new blocks aside.
    var allocationCount: Int { state.withLock { $0.allocations } }

    func availableSpace() -> UInt64? { state.withLock { $0.freeSpace } }

    /// Makes `availableSpace()` report `bytes` (nil: unknown).
    func reportFreeSpace(_ bytes: UInt64?) { state.withLock { $0.freeSpace = bytes } }

    /// Cuts the file (a metadata change: durable at once, as a model): bytes past `size` are
    /// gone from both images and from the writes not yet synced.
    func truncate(to size: UInt64) throws {
        state.withLock { state in
            let size = Int(size)
            guard size < state.volatileSize else { return }
            (mapping + size).initializeMemory(as: UInt8.self, repeating: 0, count: state.volatileSize - size)
            if state.durableSize > size {
                (durable + size).initializeMemory(as: UInt8.self, repeating: 0, count: state.durableSize - size)
                state.durableSize = size
            }
            state.pending = state.pending.compactMap { chunk in
                guard chunk.offset < size else { return nil }
                var chunk = chunk
                if chunk.offset + chunk.bytes.count > size { chunk.bytes.removeLast(chunk.offset + chunk.bytes.count - size) }
                return chunk
            }
            state.volatileSize = size
            state.allocatedEnd = min(state.allocatedEnd, size)
        }
    }

    func size() throws -> UInt64 {
        UInt64(state.withLock { state in
            state.sizeQueries += 1
            return state.volatileSize
        })
    }

    func map(length: UInt64) throws -> UnsafeRawPointer {
        guard length <= UInt64(capacity) else { throw StorageError.fileTooLarge(limit: UInt64(capacity)) }
        return UnsafeRawPointer(mapping)
    }

    /// Closing releases nothing: tests crash or inspect the disk after the engine is gone.
    func close() {}

    // MARK: Crashes

    /// The disk after a power failure now: the durable image plus a random subset of the
    /// writes since the last sync, applied in random order, one of them possibly torn after
    /// some 512-byte sectors. The same seed gives the same disk.
    func crash(seed: UInt64) -> SimulatedDisk {
        var random = SplitMix64(seed: seed)
        let (durableSize, pending, allocatedEnd) = state.withLock { ($0.durableSize, $0.pending, $0.allocatedEnd) }
        let disk = SimulatedDisk(capacity: capacity)
        disk.restore(UnsafeRawBufferPointer(start: durable, count: durableSize))
        disk.state.withLock { $0.allocatedEnd = allocatedEnd }
        // How much of the cache reached the disk varies from crash to crash: sometimes nearly
        // nothing, sometimes nearly everything.
        let keepPercent = Bool.random(using: &random) ? 100 : Int.random(in: 0...100, using: &random)
        var kept = pending.filter { _ in Int.random(in: 0..<100, using: &random) < keepPercent }
        kept.shuffle(using: &random)
        let torn = !kept.isEmpty && Bool.random(using: &random) ? Int.random(in: kept.indices, using: &random) : nil
        disk.state.withLock { state in
            for (index, chunk) in kept.enumerated() {
                var count = chunk.bytes.count
                var end = chunk.offset + count
                if index == torn {
                    let sectors = (count + Self.sectorSize - 1) / Self.sectorSize
                    count = min(count, Int.random(in: 0..<max(sectors, 1), using: &random) * Self.sectorSize)
                    // The file's new size may have reached the disk without all of its data.
                    if !Bool.random(using: &random) { end = chunk.offset + count }
                }
                chunk.bytes.withUnsafeBytes { disk.apply(&state, UnsafeRawBufferPointer(rebasing: $0.prefix(count)), at: chunk.offset) }
                disk.growVolatile(&state, to: end)
            }
            disk.makeDurable(&state)
        }
        return disk
    }

    /// The disk after the process died but the operating system kept running: the page
    /// cache (every write, synced or not) survives.
    func crashProcess() -> SimulatedDisk {
        let disk = SimulatedDisk(capacity: capacity)
        state.withLock { state in
            disk.state.withLock { copy in
                disk.growVolatile(&copy, to: state.volatileSize)
                disk.mapping.copyMemory(from: mapping, byteCount: state.volatileSize)
                disk.durable.copyMemory(from: durable, byteCount: state.durableSize)
                copy.durableSize = state.durableSize
                copy.pending = state.pending
                copy.allocatedEnd = state.allocatedEnd
            }
        }
        return disk
    }

    /// The durable image: what a power failure right now would leave if no unsynced write
    /// reached the disk.
    var durableImage: [UInt8] {
        state.withLock { [UInt8](UnsafeRawBufferPointer(start: durable, count: $0.durableSize)) }
    }

    /// The volatile image: what the page cache shows now.
    var volatileImage: [UInt8] {
        let size = state.withLock { $0.volatileSize }
        return [UInt8](UnsafeRawBufferPointer(start: mapping, count: size))
    }

    // MARK: Fault injection

    /// The power fails after `count` more write or sync calls: that call and every later one
    /// throws EIO and changes nothing.
    func losePower(afterOperations count: Int) {
        state.withLock { $0.operationsBeforePowerFailure = count }
    }

    /// The power fails now: every later write or sync throws EIO and changes nothing.
    func losePower() {
        state.withLock { $0.poweredOff = true }
    }

    var isPoweredOff: Bool { state.withLock { $0.poweredOff } }

    /// Write and sync calls accepted so far.
    var operationCount: Int { state.withLock { $0.operations } }
    var writeCount: Int { state.withLock { $0.writes } }
    var syncCount: Int { state.withLock { $0.syncs } }
    /// Bytes written so far (short writes count what they wrote).
    var bytesWritten: Int { state.withLock { $0.bytesWritten } }
    /// Calls of `size()` so far.
    var sizeQueries: Int { state.withLock { $0.sizeQueries } }

    /// The disk fills up: `bytes` more bytes are written, then writes fail with `code` (the
    /// write that crosses the limit writes what fits first, like a short `pwrite`).
    func failWrites(after bytes: Int, code: Int32 = ENOSPC) {
        state.withLock { $0.writeBudget = (bytes, code) }
    }

    /// The next sync fails with `code`, and the writes it should have made durable are lost
    /// to the disk (though still visible in the cache).
    func failNextSync(code: Int32 = EIO) {
        state.withLock { $0.failingSync = code }
    }

    /// Writes that would make the file longer fail with `code` and write nothing.
    func failWritesExtendingFile(code: Int32 = ENOSPC) {
        state.withLock { $0.failingGrowth = code }
    }

    /// The disk works again: space freed, errors cleared (power stays as it is).
    func clearFaults() {
        state.withLock { state in
            state.writeBudget = nil
            state.failingSync = nil
            state.failingGrowth = nil
        }
    }

    // MARK: Internals

    private func startOperation(_ state: inout State, _ operation: String) throws {
        if let remaining = state.operationsBeforePowerFailure {
            if remaining == 0 {
                state.poweredOff = true
                state.operationsBeforePowerFailure = nil
            } else {
                state.operationsBeforePowerFailure = remaining - 1
            }
        }
        if state.poweredOff { throw StorageError.ioFailure(operation: "\(operation) (power lost)", code: EIO) }
        state.operations += 1
    }

    private func apply(_ state: inout State, _ bytes: UnsafeRawBufferPointer, at offset: Int) {
        guard !bytes.isEmpty else { return }
        growVolatile(&state, to: offset + bytes.count)
        (mapping + offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        var position = offset
        while position < offset + bytes.count {
            let chunkEnd = min((position / Self.chunkSize + 1) * Self.chunkSize, offset + bytes.count)
            let piece = UnsafeRawBufferPointer(start: bytes.baseAddress! + (position - offset), count: chunkEnd - position)
            state.pending.append(PendingChunk(offset: position, bytes: [UInt8](unsafeUninitializedCapacity: piece.count) { buffer, count in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: piece)
                count = piece.count
            }))
            position = chunkEnd
        }
    }

    /// Applies the pending writes to the durable image; the file's size becomes durable too.
    private func makeDurable(_ state: inout State) {
        for chunk in state.pending {
            chunk.bytes.withUnsafeBytes { (durable + chunk.offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
        if state.volatileSize > state.durableSize {
            // Bytes between the old end and the new one that no surviving write covered read as zero.
            state.durableSize = state.volatileSize
        }
        state.pending.removeAll()
    }

    private func growVolatile(_ state: inout State, to size: Int) {
        guard size > state.volatileSize else { return }
        state.volatileSize = size
        let pageSize = Int(getpagesize())
        let accessible = (size + pageSize - 1) / pageSize * pageSize
        if accessible > state.accessibleBytes {
            let result = mprotect(mapping + state.accessibleBytes, accessible - state.accessibleBytes, PROT_READ | PROT_WRITE)
            precondition(result == 0, "SimulatedDisk: mprotect failed (errno \(errno))")
            state.accessibleBytes = accessible
        }
    }
}
