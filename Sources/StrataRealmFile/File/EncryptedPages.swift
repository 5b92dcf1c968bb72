internal import Crypto
internal import CryptoExtras
import Foundation

/// Decrypts a Realm file encrypted with a 64-byte key (Realm's AES-256-CBC + HMAC-SHA224 page
/// scheme) into the plain file it stands for.
///
/// Layout: the file is a sequence of 4 KiB blocks in groups of 65: one metadata block, then 64
/// data pages. The metadata block holds 64 entries of 64 bytes, one per data page of its
/// group: a 4-byte IV, the page's 28-byte HMAC, and the same again for the page's previous
/// version (Realm writes the new IV before the page, so after a crash the old one may still
/// be the valid one). A page is AES-256-CBC encrypted with key bytes 0–31 and the IV made of
/// its 4-byte IV, its plain file offset (8 bytes, little-endian) and 4 zero bytes; its HMAC
/// is taken over the ciphertext with key bytes 32–63. A page whose entry is all zeros was
/// never written and reads as zeros.
enum EncryptedFile {
    static let pageSize = 4_096
    static let pagesPerGroup = 64
    private static let entrySize = 64

    /// The plain file of the encrypted `file`, or `wrongEncryptionKey` if the first page does
    /// not authenticate under `key`.
    static func decrypt(_ file: FileMapping, key: [UInt8]) throws -> [UInt8] {
        guard key.count == 64 else {
            throw RealmFileError.invalidEncryptionKey(length: key.count)
        }
        let blockCount = file.count / pageSize
        let groupCount = (blockCount + pagesPerGroup) / (pagesPerGroup + 1)
        let pageCount = blockCount - groupCount
        guard file.count % pageSize == 0, pageCount > 0 else {
            throw RealmFileError.notARealmFile(reason: "an encrypted Realm file is a whole number of 4 KiB pages, and this one is \(file.count) bytes")
        }
        let cipherKey = SymmetricKey(data: key[0..<32])
        let macKey = Array(key[32..<64])
        var plain = [UInt8]()
        plain.reserveCapacity(pageCount * pageSize)
        for page in 0..<pageCount {
            let group = page / pagesPerGroup
            let metadataOffset = group * (pagesPerGroup + 1) * pageSize
            let entry = try file.bytes(at: metadataOffset + (page % pagesPerGroup) * entrySize, count: entrySize)
            let ciphertext = try file.bytes(at: metadataOffset + (1 + page % pagesPerGroup) * pageSize, count: pageSize)
            if entry.allSatisfy({ $0 == 0 }) {
                plain.append(contentsOf: repeatElement(0, count: pageSize))
                continue
            }
            let code = SHA224.authenticationCode(for: ciphertext, key: macKey)
            let iv: [UInt8]
            if code.elementsEqual(entry[4..<32]) {
                iv = Array(entry[0..<4])
            } else if code.elementsEqual(entry[36..<64]) {
                iv = Array(entry[32..<36])
            } else if page == 0 {
                throw RealmFileError.wrongEncryptionKey
            } else {
                throw RealmFileError.corrupted(reason: "encrypted page \(page) fails its authentication code")
            }
            var blockIV = iv
            let offset = UInt64(page * pageSize)
            for shift in stride(from: 0, to: 64, by: 8) { blockIV.append(UInt8(truncatingIfNeeded: offset >> UInt64(shift))) }
            blockIV += [0, 0, 0, 0]
            do {
                let decrypted = try AES._CBC.decrypt(Array(ciphertext), using: cipherKey, iv: try AES._CBC.IV(ivBytes: blockIV), noPadding: true)
                guard decrypted.count == pageSize else {
                    throw RealmFileError.corrupted(reason: "encrypted page \(page) decrypts to \(decrypted.count) bytes")
                }
                plain.append(contentsOf: decrypted)
            } catch let error as RealmFileError {
                throw error
            } catch {
                throw RealmFileError.corrupted(reason: "encrypted page \(page) cannot be decrypted: \(error)")
            }
        }
        return plain
    }
}
