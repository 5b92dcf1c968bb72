// Page 0: the file header, written once when the file is created.
//
//   offset size field
//        0    8 signature "STRATADB"
//        8    4 format version
//       12    4 page size
//       16    4 crc32c of bytes 0 ..< 16
//       20    8 the length the commit log was preallocated to when the database was created
//               (0, or a failing check below: not preallocated, or a file whose header predates the field)
//       28    4 crc32c of bytes 20 ..< 28, xor "SLEN"
//
// Bytes 20 ..< 32 are outside the checksum of the first 16, so builds that predate them read
// the header as before. The log never shrinks below its preallocated length (CommitLog.swift),
// so a log beside the database that is shorter than this was cut: open reports it as damage
// (CommitLogDamage.swift). A missing log is not: a database may be copied without its log
// after a checkpoint.
//
// Pages 1 and 2 are the meta slots (MetaPage.swift); data pages start at 3.
//
// Unsafe: `encode` writes the first 20 bytes of a page image the caller owns; `decode` reads the
// mapping's first bytes only once the file is known to hold at least `size` of them (a shorter
// file is compared with `memcmp` over what it has); the log-length field is read from a buffer
// whose length `decodeLogLength` checks.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum FileHeader {
    static let signature: UInt64 = 0x4244_4154_4152_5453  // "STRATADB" little-endian
    /// 2: a meta may keep the free list (MetaPage.flagFreeListInMeta); version 1 files are
    /// refused, not converted.
    static let formatVersion: UInt32 = 2
    static let size = 20
    static let firstDataPage: PageNumber = 3

    static func encode(pageSize: Int, into page: UnsafeMutableRawPointer) {
        page.setUInt64(signature, at: 0)
        page.setUInt32(formatVersion, at: 8)
        page.setUInt32(UInt32(pageSize), at: 12)
        page.setUInt32(crc32c(page, count: 16), at: 16)
    }

    /// Where the log's preallocated length is kept, and how many bytes with its check.
    static let logLengthOffset = 20
    static let logLengthFieldSize = 12
    private static let logLengthSeal: UInt32 = 0x4E45_4C53  // "SLEN"

    /// The 12 bytes that say the log was preallocated to `length` (0: it was not).
    static func encodeLogLength(_ length: UInt64) -> [UInt8] {
        var field = [UInt8](repeating: 0, count: logLengthFieldSize)
        field.withUnsafeMutableBytes { raw in
            raw.setUInt64(length.littleEndian, at: 0)
            let check = crc32c(UnsafeRawPointer(raw.baseAddress!), count: 8) ^ logLengthSeal
            raw.setUInt32(check.littleEndian, at: 8)
        }
        return field
    }

    /// The log's preallocated length the header records: 0 when it records none (an older
    /// file, a log that was not preallocated, or a field that fails its check).
    static func decodeLogLength(_ field: UnsafeRawBufferPointer) -> UInt64 {
        guard field.count >= logLengthFieldSize else { return 0 }
        let check = UInt32(littleEndian: field.uint32(at: 8))
        guard check == crc32c(field.baseAddress!, count: 8) ^ logLengthSeal else { return 0 }
        return UInt64(littleEndian: field.uint64(at: 0))
    }

    /// The log's preallocated length recorded in `file`'s header (0 when none).
    static func logLength(of file: any StorageFile) throws -> UInt64 {
        guard try file.size() >= UInt64(logLengthOffset + logLengthFieldSize) else { return 0 }
        var field = [UInt8](repeating: 0, count: logLengthFieldSize)
        try field.withUnsafeMutableBytes { try file.read(into: $0, at: UInt64(logLengthOffset)) }
        return field.withUnsafeBytes { decodeLogLength($0) }
    }

    /// Records in `file`'s header that its log was preallocated to `length` (0: it is not),
    /// durably. Only for the first opener, while no one else has the database open.
    static func recordLogLength(_ length: UInt64, in file: any StorageFile) throws {
        let field = encodeLogLength(length)
        try field.withUnsafeBytes { try file.write([$0], at: UInt64(logLengthOffset)) }
        try file.synchronize()
    }

    /// Validates the header bytes and returns the page size.
    static func decode(_ bytes: UnsafeRawPointer, fileSize: UInt64, path: String) throws -> Int {
        if fileSize < UInt64(size) {
            // Too short to hold a header: foreign unless what is there matches our signature.
            var expected = signature
            let prefix = Int(min(fileSize, 8))
            let matches = withUnsafeBytes(of: &expected) { memcmp($0.baseAddress!, bytes, prefix) == 0 }
            if !matches { throw StorageError.notADatabase(path: path) }
            throw StorageError.truncated(expectedBytes: UInt64(size), actualBytes: fileSize)
        }
        guard bytes.uint64(at: 0) == signature else { throw StorageError.notADatabase(path: path) }
        guard bytes.uint32(at: 16) == crc32c(bytes, count: 16) else {
            throw StorageError.corrupted(page: 0, reason: "file header checksum mismatch")
        }
        let version = bytes.uint32(at: 8)
        guard version == formatVersion else {
            throw StorageError.unsupportedFormatVersion(found: version, supported: formatVersion)
        }
        let pageSize = Int(bytes.uint32(at: 12))
        guard StorageOptions.validPageSizes.contains(pageSize) else {
            throw StorageError.corrupted(page: 0, reason: "invalid page size \(pageSize)")
        }
        return pageSize
    }
}
