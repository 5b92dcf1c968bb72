// All access to the database file goes through `StorageFile`, so tests can put a simulated
// disk underneath the engine (one that loses or tears writes that were never synced, or fails
// with ENOSPC/EIO) and so the engine never reaches the file any other way.
//
// Invariants of `PosixFile`:
// - The read-only mapping is one reserved range of virtual memory (`maximumFileSize` long,
//   PROT_NONE; shorter when the process has no room that large, see `reserveAddressSpace`,
//   and then `mappableLength` is the file's limit) into which the file is mapped in growing
//   sections with MAP_FIXED. The base address never changes and sections are never unmapped
//   before `close()`, so a pointer a reader holds stays valid however far the file grows.
// - Only pages below the file's size are ever touched through the mapping (the engine checks
//   the size before it lets a snapshot use a page), so no access can fault with SIGBUS.
// - The engine writes with pwrite, or, where `writeInPlace` accepts the range, by storing
//   through a second, writable shared mapping of the file (never the readers' mapping, which
//   stays read-only). Linux and Darwin keep one page cache, so writes either way are visible
//   through the read-only mapping at once, and `fdatasync` makes both durable (a store into a
//   shared mapping dirties the page cache page as a write does).
// - `writeInPlace` stores only into 4 KiB units this instance has itself written whole with
//   pwrite, and only on tmpfs: the pages under such a unit are allocated and the file never
//   shrinks, so a store there needs no allocation and cannot fault for want of space or past
//   the end of the file. Not on ext4, which also overwrites in place: its page cache holds
//   large folios, a store through a mapping dirties its whole folio, and the next sync then
//   writes the folio back whole: a checkpoint after many small commits writes back many
//   times the bytes they changed.
//
// Unsafe: `PosixFile` hands out raw memory and fills callers' buffers.
// - The mapping (`map(length:)`) is read-only shared memory the instance owns from `init` to
//   `close()`; see the invariants above for why a pointer into it stays valid and never faults.
// - `read(into:)` and `write` pass callers' buffer addresses to pread/pwrite/pwritev, which touch
//   exactly `buffer.count` bytes of each; the caller owns the buffers for the call.
// - `writeInPlace` stores through the writable mapping sections this instance owns (unmapped only
//   in `close()`), only over ranges it checked lie in units it wrote whole.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CStrataSystem

/// The file operations the engine needs. Implementations must be safe to call from several
/// threads at once: readers map, the writer writes and syncs.
public protocol StorageFile: AnyObject, Sendable {
    /// Reads exactly `buffer.count` bytes at `offset`; bytes past the end of the file read as zero.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws
    /// Writes the buffers one after another starting at `offset` (a gathering write).
    func write(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) throws
    /// Writes one buffer at `offset`, as `write([buffer], at:)` does (the default calls it);
    /// an implementation may write it without making an array.
    func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws
    /// Makes every write so far durable (`fdatasync`).
    func synchronize() throws
    /// The file's current size in bytes.
    func size() throws -> UInt64
    /// A read-only view of at least the first `length` bytes. The returned base address is the
    /// same on every call and stays valid until `close()`.
    func map(length: UInt64) throws -> UnsafeRawPointer
    /// Releases the file and its mapping.
    func close()
    /// Starts writing the range's written bytes to the disk without waiting, so that a later
    /// `synchronize()` has less left to wait for. A hint only: it makes nothing durable, and
    /// an implementation may ignore it (the default does).
    func startWriting(at offset: UInt64, length: UInt64)
    /// Writes the buffers one after another starting at `offset`, as `write` does, but without
    /// a system call when the implementation can store them straight into the file's pages
    /// safely; returns false, having written nothing, when it cannot (the caller then calls
    /// `write`). What was stored is visible and made durable exactly as written bytes are. The
    /// default never can.
    func writeInPlace(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) -> Bool
    /// Has the volume set aside the blocks of bytes `range` of the file without changing its
    /// size, so that writes there (past the end too) need no new space: false when the
    /// implementation cannot (nothing set aside; the default). Throws
    /// `StorageError.ioFailure` with ENOSPC (or EDQUOT) when the volume refuses.
    func allocate(_ range: Range<UInt64>) throws -> Bool
    /// Bytes free on the file's volume for an unprivileged writer, or nil when unknown (the
    /// default).
    func availableSpace() -> UInt64?
    /// Cuts the file to `size` bytes (or extends it with zeros), giving its blocks past there
    /// back to the volume. The default throws ENOTSUP.
    func truncate(to size: UInt64) throws
    /// How many bytes `map(length:)` can ever cover, when less than the engine's
    /// `maximumFileSize` allows: the engine never grows the file past it. Nil (the default):
    /// no limit of the file's own.
    var mappableLength: UInt64? { get }
}

extension StorageFile {
    /// Writes one buffer through the gathering `write(_:at:)` (an implementation without a
    /// single-buffer path of its own).
    public func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws { try write([buffer], at: offset) }

    /// Does nothing: files that cannot start a write-back early leave it to `synchronize()`.
    public func startWriting(at offset: UInt64, length: UInt64) {}

    /// Returns false: the caller writes with `write`.
    public func writeInPlace(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) -> Bool { false }

    /// Returns false: nothing is set aside, and writes find space as they go.
    public func allocate(_ range: Range<UInt64>) throws -> Bool { false }

    /// Nil: the file maps as far as the engine's options allow.
    public var mappableLength: UInt64? { nil }

    /// Returns nil: the free space is unknown.
    public func availableSpace() -> UInt64? { nil }

    /// Throws ENOTSUP: the file cannot be cut.
    public func truncate(to size: UInt64) throws { throw StorageError.ioFailure(operation: "truncate", code: ENOTSUP) }
}

/// A `StorageFile` over a real file descriptor.
public final class PosixFile: StorageFile, @unchecked Sendable {
    // @unchecked: `descriptor` and `reservation` are set once in init; `mapped` is guarded by `lock`.
    let descriptor: Int32
    /// The path the file was opened at.
    public let path: String
    /// Whether opening it created the file.
    let created: Bool
    private let reservation: UnsafeMutableRawPointer
    private let reservationLength: Int
    private let lock = Locked<Int>(0)  // bytes mapped so far
    private static let sectionSize = 64 << 20
    /// The writable mapping and what may be stored through it; nil when in-place writes are off.
    private let inPlace: Locked<InPlaceWrites>?

    /// Opens (creating when `create` is true) the file at `path`, reserving `maximumSize` bytes of
    /// address space for its mapping. With `writesInPlace`, `writeInPlace` stores into ranges
    /// this instance has already written whole, when the file system allows it (tmpfs on
    /// Linux: see `strata_supports_in_place_writes`); otherwise it always declines.
    ///
    /// Only a regular file is opened: a symbolic link at `path` is not followed, and a device,
    /// FIFO, socket or directory is refused with `StorageError.notARegularFile` (see
    /// DatabasePath.swift).
    public init(path: String, create: Bool, readOnly: Bool = false, maximumSize: UInt64, writesInPlace: Bool = false) throws {
        let (fd, created) = try DatabasePath.openRegularFile(path, readOnly: readOnly, create: create)
        self.created = created
        let reserved: (base: UnsafeMutableRawPointer, length: Int)
        do {
            reserved = try Self.reserveAddressSpace(maximumSize, descriptor: fd)
        } catch {
            Glibc_close(fd)
            throw error
        }
        self.descriptor = fd
        self.path = path
        self.reservation = reserved.base
        self.reservationLength = reserved.length
        let inPlace = writesInPlace && !readOnly && strata_supports_in_place_writes(fd) != 0
        self.inPlace = inPlace ? Locked(InPlaceWrites(sectionSize: Self.sectionSize)) : nil
    }

    /// Reserves `maximumSize` bytes of address space (PROT_NONE) for the file's mapping, or,
    /// when the process has no free range that large, the largest power-of-two fraction of it
    /// that still holds the whole file as it is now. A process's address space is finite
    /// (128 TiB on x86-64 Linux, a few TiB of it under the thread sanitizer), and every open
    /// file holds its reservation until it is closed: with many files open, insisting on the
    /// full size would make an open fail though the file is small. A shorter reservation only
    /// lowers how far this file may grow while this instance has it open (`mappableLength`);
    /// the engine refuses a commit past it with `StorageError.fileTooLarge`.
    private static func reserveAddressSpace(_ maximumSize: UInt64, descriptor fd: Int32) throws
        -> (base: UnsafeMutableRawPointer, length: Int) {
        var length = Int(min(maximumSize, UInt64(Int.max / 2)))
        var info = stat()
        let fileSize = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        // Never shorter than the file (and one section): the open must be able to read it all.
        let floor = min(length, max(Self.sectionSize, (fileSize + Self.sectionSize - 1) / Self.sectionSize * Self.sectionSize))
        while true {
            let base = mmap(nil, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
            if let base, base != MAP_FAILED { return (base, length) }
            let code = errno
            guard code == ENOMEM, length / 2 >= floor else {
                throw StorageError.ioFailure(operation: "reserve \(length) bytes of address space to map the file", code: code)
            }
            length /= 2
        }
    }

    /// The bytes this instance reserved for the mapping: the file cannot grow past them while
    /// it is open.
    public var mappableLength: UInt64? { UInt64(reservationLength) }

    /// Whether `writeInPlace` may accept ranges (the option was asked for and the file is on
    /// a file system that allows it: tmpfs).
    public var writesInPlace: Bool { inPlace != nil }

    /// How many `writeInPlace` calls stored their bytes (for tests).
    var inPlaceStores: Int { inPlace?.withLock { $0.stores } ?? 0 }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw StorageError.ioFailure(operation: "read", code: errno)
            }
            if n == 0 {
                (buffer.baseAddress! + done).initializeMemory(as: UInt8.self, repeating: 0, count: buffer.count - done)
                return
            }
            done += n
        }
    }

    public func write(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) throws {
        if buffers.count == 1 { return try write(buffers[0], at: offset) }
        // One gathering write per call (in chunks of IOV_MAX), so a contiguous stretch of pages
        // reaches the disk as one request. The vector lives on the stack for a few buffers.
        try withUnsafeTemporaryAllocation(of: iovec.self, capacity: max(buffers.count, 1)) { storage in
            var total = 0
            for buffer in buffers where buffer.count > 0 {
                storage.initializeElement(at: total, to: iovec(iov_base: UnsafeMutableRawPointer(mutating: buffer.baseAddress), iov_len: buffer.count))
                total += 1
            }
            defer { storage.baseAddress!.deinitialize(count: total) }
            // The vectors' lengths before the write: it advances them past what it wrote.
            var length = 0
            if inPlace != nil { for index in 0..<total { length += storage[index].iov_len } }
            try writeVectors(storage.baseAddress!, count: total, at: offset)
            if let inPlace { inPlace.withLock { $0.markWritten(offset, length: length) } }
        }
    }

    private func writeVectors(_ vectors: UnsafeMutablePointer<iovec>, count total: Int, at offset: UInt64) throws {
        var position = off_t(offset)
        var first = 0
        while first < total {
            let count = min(total - first, 512)
            let written = pwritev(descriptor, vectors + first, Int32(count), position)
            if written < 0 {
                if errno == EINTR { continue }
                throw StorageError.ioFailure(operation: "write", code: errno)
            }
            // Advance past what was written (a short write resumes mid-vector).
            var remaining = written
            position += off_t(written)
            while remaining > 0 && first < total {
                if remaining >= vectors[first].iov_len {
                    remaining -= vectors[first].iov_len
                    first += 1
                } else {
                    vectors[first].iov_base = vectors[first].iov_base! + remaining
                    vectors[first].iov_len -= remaining
                    remaining = 0
                }
            }
        }
    }

    /// One buffer: `pwrite`, without building a vector.
    public func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < buffer.count {
            let n = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw StorageError.ioFailure(operation: "write", code: errno)
            }
            done += n
        }
        if let inPlace { inPlace.withLock { $0.markWritten(offset, length: buffer.count) } }
    }

    public func writeInPlace(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) -> Bool {
        guard let inPlace else { return false }
        var length = 0
        for buffer in buffers { length += buffer.count }
        return inPlace.withLock { $0.store(buffers, at: offset, length: length, descriptor: descriptor) }
    }

    public func synchronize() throws {
        let code = strata_sync_data(descriptor)
        if code != 0 { throw StorageError.ioFailure(operation: "fdatasync", code: code) }
    }

    /// `fallocate(FALLOC_FL_KEEP_SIZE)` on Linux, where the file system supports it (ext4,
    /// XFS, btrfs, tmpfs); false elsewhere. A copy-on-write file system (btrfs) may still need
    /// new space when the blocks are written.
    public func allocate(_ range: Range<UInt64>) throws -> Bool {
        guard !range.isEmpty else { return true }
        let code = strata_allocate_past_end(descriptor, Int64(range.lowerBound), Int64(range.count))
        if code == 0 { return true }
        if code == ENOTSUP { return false }
        throw StorageError.ioFailure(operation: "allocate bytes \(range.lowerBound)..<\(range.upperBound) of \(path)", code: code)
    }

    /// `fstatvfs`: the blocks available to an unprivileged writer.
    public func availableSpace() -> UInt64? {
        var info = statvfs()
        guard fstatvfs(descriptor, &info) == 0 else { return nil }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize)
    }

    /// `ftruncate`. The file must not be mapped past `size` (only the commit log, which is
    /// never mapped, is cut).
    public func truncate(to size: UInt64) throws {
        while ftruncate(descriptor, off_t(size)) != 0 {
            if errno == EINTR { continue }
            throw StorageError.ioFailure(operation: "truncate \(path)", code: errno)
        }
    }

    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)` on Linux; errors are ignored (the sync that
    /// follows reports them).
    public func startWriting(at offset: UInt64, length: UInt64) {
        _ = strata_start_writeback(descriptor, Int64(offset), Int64(length))
    }

    public func size() throws -> UInt64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw StorageError.ioFailure(operation: "fstat", code: errno) }
        return UInt64(info.st_size)
    }

    public func map(length: UInt64) throws -> UnsafeRawPointer {
        guard length <= UInt64(reservationLength) else {
            throw StorageError.fileTooLarge(limit: UInt64(reservationLength))
        }
        let wanted = Int(length)
        try lock.withLock { mapped in
            // Map whole sections ahead of need; MAP_FIXED over our own PROT_NONE reservation.
            while mapped < wanted {
                let section = min(Self.sectionSize, reservationLength - mapped)
                let result = mmap(reservation + mapped, section, PROT_READ, MAP_SHARED | MAP_FIXED, descriptor, off_t(mapped))
                guard result != MAP_FAILED else { throw StorageError.ioFailure(operation: "mmap", code: errno) }
                mapped += section
            }
        }
        return UnsafeRawPointer(reservation)
    }

    public func close() {
        munmap(reservation, reservationLength)
        inPlace?.withLock { $0.unmap() }
        Glibc_close(descriptor)
    }
}

/// `PosixFile`'s in-place writes: the writable mapping, mapped in sections as stores need
/// them, and which 4 KiB units of the file may be stored into (see the invariants at the top).
struct InPlaceWrites {
    static let unit = 4096
    let sectionSize: Int
    /// The writable mapping of each section of the file, mapped on first use.
    private var sections: [UnsafeMutableRawPointer?] = []
    /// One bit per 4 KiB unit of the file this instance has written whole with a write call.
    private var written: [UInt64] = []
    /// How many stores went through the mapping.
    private(set) var stores = 0

    init(sectionSize: Int) {
        self.sectionSize = sectionSize
    }

    /// Records the units `[offset, offset + length)` covers whole.
    mutating func markWritten(_ offset: UInt64, length: Int) {
        let unit = UInt64(Self.unit)
        let first = (offset + unit - 1) / unit
        let end = (offset + UInt64(length)) / unit
        guard end > first else { return }
        let words = Int((end + 63) / 64)
        if written.count < words { written.append(contentsOf: repeatElement(0, count: words - written.count)) }
        var index = first
        while index < end {
            written[Int(index / 64)] |= 1 << (index % 64)
            index += 1
        }
    }

    /// Whether every unit of `[offset, offset + length)` was written whole (both ends on unit
    /// boundaries).
    private func allWritten(_ offset: UInt64, length: Int) -> Bool {
        let unit = UInt64(Self.unit)
        guard length > 0, offset % unit == 0, UInt64(length) % unit == 0 else { return false }
        var index = offset / unit
        let end = (offset + UInt64(length)) / unit
        while index < end {
            let word = Int(index / 64)
            guard word < written.count, written[word] & (1 << (index % 64)) != 0 else { return false }
            index += 1
        }
        return true
    }

    /// Stores the buffers at `offset` through the writable mapping, if every unit they cover
    /// was written before; false (nothing stored) otherwise or when a section cannot be mapped.
    mutating func store(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64, length: Int, descriptor: Int32) -> Bool {
        guard allWritten(offset, length: length) else { return false }
        // Map every section the range touches before storing anything.
        let firstSection = Int(offset / UInt64(sectionSize))
        let lastSection = Int((offset + UInt64(length) - 1) / UInt64(sectionSize))
        if sections.count <= lastSection { sections.append(contentsOf: repeatElement(nil, count: lastSection + 1 - sections.count)) }
        for section in firstSection...lastSection where sections[section] == nil {
            let mapped = mmap(nil, sectionSize, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, off_t(section) * off_t(sectionSize))
            guard let mapped, mapped != MAP_FAILED else { return false }
            sections[section] = mapped
        }
        var position = offset
        for buffer in buffers {
            guard let source = buffer.baseAddress else { continue }  // empty
            var copied = 0
            while copied < buffer.count {
                let section = Int(position / UInt64(sectionSize))
                let within = Int(position % UInt64(sectionSize))
                let count = min(buffer.count - copied, sectionSize - within)
                guard let target = sections[section] else {
                    preconditionFailure("in-place store into section \(section), which was not mapped")
                }
                (target + within).copyMemory(from: source + copied, byteCount: count)
                copied += count
                position += UInt64(count)
            }
        }
        stores += 1
        return true
    }

    mutating func unmap() {
        for case let mapped? in sections { munmap(mapped, sectionSize) }
        sections = []
    }
}

@inline(__always)
func Glibc_close(_ fd: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(fd)
    #else
    _ = Darwin.close(fd)
    #endif
}
