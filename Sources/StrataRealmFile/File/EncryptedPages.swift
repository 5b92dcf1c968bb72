internal import Crypto
internal import CryptoExtras

/// The plain bytes of a Realm file encrypted with a 64-byte key (Realm's AES-256-CBC +
/// HMAC-SHA224 page scheme), decrypted a 4 KiB page at a time as they are read.
///
/// Layout: the file is a sequence of 4 KiB blocks in groups of 65: one metadata block, then 64
/// data pages. The metadata block holds 64 entries of 64 bytes, one per data page of its
/// group: a 4-byte IV, the page's 28-byte HMAC, and the same again for the page's previous
/// version (Realm writes the new IV before the page, so after a crash the old one may still
/// be the valid one). A page is AES-256-CBC encrypted with key bytes 0–31 and the IV made of
/// its 4-byte IV, its plain file offset (8 bytes, little-endian) and 4 zero bytes; its HMAC
/// is taken over the ciphertext with key bytes 32–63. A page whose entry is all zeros was
/// never written and reads as zeros.
///
/// Invariants: the encrypted file stays mapped read-only (its pages are the kernel's page
/// cache, not this process's memory); at most ``cachedPageLimit`` decrypted pages are held,
/// the least recently used going first (a clock), so reading a file of any size takes bounded
/// memory beyond the bytes the caller keeps. Every page is authenticated before it is
/// decrypted: a page that fails is ``RealmFileError/damagedEncryptedBlock(fileOffset:)``
/// naming where it lies in the file, never wrong bytes.
final class EncryptedPages {
    static let pageSize = 4_096
    static let pagesPerGroup = 64
    /// 4 MiB of decrypted pages: a cluster's worth of nodes, many times over.
    static let cachedPageLimit = 1_024
    private static let entrySize = 64

    /// The plain file's size: its number of data pages times the page size.
    let plainCount: Int
    /// The most decrypted pages held at once.
    let pageLimit: Int
    private let file: FileMapping
    private let cipherKey: SymmetricKey
    private let macKey: [UInt8]

    /// The cache: decrypted pages in slots, found by page index, evicted by a clock hand that
    /// spares a slot used since it last passed.
    private var slotOfPage: [Int: Int] = [:]
    private var slots: [(page: Int, bytes: [UInt8], used: Bool)] = []
    private var hand = 0

    /// Reads the encrypted `file` with `key`, holding at most `pageLimit` (at least 1)
    /// decrypted pages: `invalidEncryptionKey` for a key that is not 64 bytes,
    /// `wrongEncryptionKey` if the first page does not authenticate under it.
    init(file: FileMapping, key: [UInt8], pageLimit: Int = EncryptedPages.cachedPageLimit) throws {
        guard key.count == 64 else {
            throw RealmFileError.invalidEncryptionKey(length: key.count)
        }
        let blockCount = file.count / Self.pageSize
        let groupCount = (blockCount + Self.pagesPerGroup) / (Self.pagesPerGroup + 1)
        let pageCount = blockCount - groupCount
        guard file.count % Self.pageSize == 0, pageCount > 0 else {
            throw RealmFileError.notARealmFile(reason: "an encrypted Realm file is a whole number of 4 KiB pages, and this one is \(file.count) bytes")
        }
        self.file = file
        self.pageLimit = max(pageLimit, 1)
        plainCount = pageCount * Self.pageSize
        cipherKey = SymmetricKey(data: key[0..<32])
        macKey = Array(key[32..<64])
        // The header page decides between "wrong key" and "damaged file".
        do {
            _ = try page(0)
        } catch RealmFileError.damagedEncryptedBlock {
            throw RealmFileError.wrongEncryptionKey
        }
    }

    /// The number of decrypted pages held now (never more than `pageLimit`).
    var heldPageCount: Int { slots.count }

    /// Copies the plain bytes `offset..<offset + destination.count` into `destination`. The
    /// caller has checked the range against ``plainCount``.
    func copy(from offset: Int, into destination: UnsafeMutableRawBufferPointer) throws {
        var copied = 0
        while copied < destination.count {
            let position = offset + copied
            let pageIndex = position / Self.pageSize
            let start = position % Self.pageSize
            let length = min(Self.pageSize - start, destination.count - copied)
            let plain = try page(pageIndex)
            plain.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: destination[copied..<(copied + length)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + length)]))
            }
            copied += length
        }
    }

    /// The decrypted data page `index`, from the cache or decrypted now.
    private func page(_ index: Int) throws -> [UInt8] {
        if let slot = slotOfPage[index] {
            slots[slot].used = true
            return slots[slot].bytes
        }
        let bytes = try decrypt(page: index)
        if slots.count < pageLimit {
            slotOfPage[index] = slots.count
            slots.append((index, bytes, true))
            return bytes
        }
        while slots[hand].used {
            slots[hand].used = false
            hand = (hand + 1) % slots.count
        }
        slotOfPage[slots[hand].page] = nil
        slots[hand] = (index, bytes, true)
        slotOfPage[index] = hand
        hand = (hand + 1) % slots.count
        return bytes
    }

    private func decrypt(page: Int) throws -> [UInt8] {
        let group = page / Self.pagesPerGroup
        let metadataOffset = group * (Self.pagesPerGroup + 1) * Self.pageSize
        let blockOffset = metadataOffset + (1 + page % Self.pagesPerGroup) * Self.pageSize
        let entry = try file.bytes(at: metadataOffset + (page % Self.pagesPerGroup) * Self.entrySize, count: Self.entrySize).array
        if entry.allSatisfy({ $0 == 0 }) {
            return [UInt8](repeating: 0, count: Self.pageSize)
        }
        let ciphertext = try file.bytes(at: blockOffset, count: Self.pageSize).array
        let code = SHA224.authenticationCode(for: ciphertext, key: macKey)
        var iv: [UInt8]
        if code.elementsEqual(entry[4..<32]) {
            iv = Array(entry[0..<4])
        } else if code.elementsEqual(entry[36..<64]) {
            iv = Array(entry[32..<36])
        } else {
            throw RealmFileError.damagedEncryptedBlock(fileOffset: blockOffset)
        }
        let plainOffset = UInt64(page * Self.pageSize)
        for shift in stride(from: 0, to: 64, by: 8) { iv.append(UInt8(truncatingIfNeeded: plainOffset >> UInt64(shift))) }
        iv += [0, 0, 0, 0]
        let decrypted: [UInt8]
        do {
            decrypted = [UInt8](try AES._CBC.decrypt(ciphertext, using: cipherKey, iv: try AES._CBC.IV(ivBytes: iv), noPadding: true))
        } catch {
            throw RealmFileError.corrupted(reason: "the encrypted block at byte \(blockOffset) of the file cannot be decrypted: \(error)")
        }
        guard decrypted.count == Self.pageSize else {
            throw RealmFileError.corrupted(reason: "the encrypted block at byte \(blockOffset) of the file decrypts to \(decrypted.count) bytes")
        }
        return decrypted
    }
}
