#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only memory mapping of a whole file: the only place the reader touches raw memory.
///
/// Invariants: the file is opened `O_RDONLY` and mapped `PROT_READ`, so nothing here can
/// change it; `count` is the file's size when it was mapped, and every read goes through
/// `bytes(at:count:)` or the `load` helpers, which check the range against `count` first and
/// throw `RealmFileError.corrupted` instead of reading outside the mapping. A file that another
/// process shrinks while it is mapped could still fault; Realm files are only ever grown.
final class FileMapping {
    /// The number of bytes mapped (the file's size).
    let count: Int
    private let base: UnsafeRawPointer?
    /// Whether `base` came from `mmap` (else it was allocated by `init(bytes:)`).
    private let isMapped: Bool

    /// Maps the file at `path`.
    init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw RealmFileError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw RealmFileError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw RealmFileError.cannotOpen(path: path, reason: "not a regular file")
        }
        let size = Int(status.st_size)
        count = size
        isMapped = true
        if size == 0 {
            base = nil
            return
        }
        let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0)
        guard let address, address != MAP_FAILED else {
            throw RealmFileError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        base = UnsafeRawPointer(address)
    }

    /// A mapping of bytes already in memory (a copy is kept), for reading a file that was
    /// decrypted or built in memory.
    init(bytes: [UInt8]) {
        count = bytes.count
        isMapped = false
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        buffer.copyBytes(from: bytes)
        base = UnsafeRawPointer(buffer.baseAddress)
    }

    deinit {
        guard let base else { return }
        if isMapped {
            munmap(UnsafeMutableRawPointer(mutating: base), count)
        } else {
            UnsafeMutableRawPointer(mutating: base).deallocate()
        }
    }

    /// The bytes `offset..<offset + length`, or `corrupted` if any of them lies outside the file.
    func bytes(at offset: Int, count length: Int) throws -> UnsafeRawBufferPointer {
        guard offset >= 0, length >= 0, offset <= count, length <= count - offset else {
            throw RealmFileError.corrupted(reason: "a read of \(length) bytes at offset \(offset) goes past the end of the \(count)-byte file")
        }
        guard let base else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: base + offset, count: length)
    }

    /// The little-endian 64-bit word at `offset`.
    func loadUInt64(at offset: Int) throws -> UInt64 {
        let raw = try bytes(at: offset, count: 8)
        return UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
    }
}
