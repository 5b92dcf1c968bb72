#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of the file the reader reads: a read-only memory mapping of a plain file, bytes
/// held in memory, or an encrypted file's plain bytes decrypted page by page
/// (``EncryptedPages``). With ``FileBytes`` and ``OwnedBytes``, the only place the reader
/// touches raw memory.
///
/// Invariants: the file is opened `O_RDONLY` and mapped `PROT_READ`, so nothing here can
/// change it; `count` is the size of the (plain) file, and every read goes through
/// `bytes(at:count:)` or the `load` helpers, which check the range against `count` first and
/// throw `RealmFileError.corrupted` instead of reading outside it, so no read allocates more
/// than the file's size. A file that another process shrinks while it is mapped could still
/// fault; Realm files are only ever grown.
final class FileMapping {
    /// The number of bytes the file holds (for an encrypted file, its plain bytes).
    let count: Int
    private let base: UnsafeRawPointer?
    /// Whether `base` came from `mmap` (else it was allocated by `init(bytes:)`, or is nil).
    private let isMapped: Bool
    /// The decrypting reader of an encrypted file (`base` is then nil).
    private let encrypted: EncryptedPages?

    /// Maps the file at `path`.
    init(path: String) throws {
        // Non-blocking, so a FIFO at the path is refused below instead of blocking the open.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
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
        encrypted = nil
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
        encrypted = nil
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        buffer.copyBytes(from: bytes)
        base = UnsafeRawPointer(buffer.baseAddress)
    }

    /// The plain bytes of the encrypted Realm file mapped by `file`, decrypted with `key` as
    /// they are read.
    ///
    /// - Throws: `invalidEncryptionKey` / `wrongEncryptionKey` (``EncryptedPages``).
    init(decrypting file: FileMapping, key: [UInt8], pageLimit: Int = EncryptedPages.cachedPageLimit) throws {
        let pages = try EncryptedPages(file: file, key: key, pageLimit: pageLimit)
        count = pages.plainCount
        base = nil
        isMapped = false
        encrypted = pages
    }

    /// For an encrypted file, the number of decrypted pages held now.
    var heldDecryptedPageCount: Int? { encrypted?.heldPageCount }

    deinit {
        guard let base else { return }
        if isMapped {
            munmap(UnsafeMutableRawPointer(mutating: base), count)
        } else {
            UnsafeMutableRawPointer(mutating: base).deallocate()
        }
    }

    /// The bytes `offset..<offset + length`, or `corrupted` if any of them lies outside the file
    /// (for an encrypted file, `damagedEncryptedBlock` if a page they lie in fails its
    /// authentication code).
    func bytes(at offset: Int, count length: Int) throws -> FileBytes {
        guard offset >= 0, length >= 0, offset <= count, length <= count - offset else {
            throw RealmFileError.corrupted(reason: "a read of \(length) bytes at offset \(offset) goes past the end of the \(count)-byte file")
        }
        if let encrypted {
            let copy = OwnedBytes(count: length)
            let destination = UnsafeMutableRawBufferPointer(rebasing: copy.buffer[0..<length])
            try encrypted.copy(from: offset, into: destination)
            return FileBytes(UnsafeRawBufferPointer(destination), owner: copy)
        }
        guard let base else { return FileBytes(UnsafeRawBufferPointer(start: nil, count: 0), owner: self) }
        return FileBytes(UnsafeRawBufferPointer(start: base + offset, count: length), owner: self)
    }

    /// The little-endian 64-bit word at `offset`.
    func loadUInt64(at offset: Int) throws -> UInt64 {
        let raw = try bytes(at: offset, count: 8)
        return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
    }
}
