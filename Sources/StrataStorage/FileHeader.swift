// Page 0: the file header, written once when the file is created.
//
//   offset size field
//        0    8 signature "STRATADB"
//        8    4 format version
//       12    4 page size
//       16    4 crc32c of bytes 0 ..< 16
//
// Pages 1 and 2 are the meta slots (MetaPage.swift); data pages start at 3.

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
        page.storeBytes(of: signature, as: UInt64.self)
        page.storeBytes(of: formatVersion, toByteOffset: 8, as: UInt32.self)
        page.storeBytes(of: UInt32(pageSize), toByteOffset: 12, as: UInt32.self)
        page.storeBytes(of: crc32c(page, count: 16), toByteOffset: 16, as: UInt32.self)
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
        guard bytes.loadUnaligned(as: UInt64.self) == signature else { throw StorageError.notADatabase(path: path) }
        guard bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self) == crc32c(bytes, count: 16) else {
            throw StorageError.corrupted(page: 0, reason: "file header checksum mismatch")
        }
        let version = bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        guard version == formatVersion else {
            throw StorageError.unsupportedFormatVersion(found: version, supported: formatVersion)
        }
        let pageSize = Int(bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        guard StorageOptions.validPageSizes.contains(pageSize) else {
            throw StorageError.corrupted(page: 0, reason: "invalid page size \(pageSize)")
        }
        return pageSize
    }
}
