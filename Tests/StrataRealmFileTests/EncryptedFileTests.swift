import Foundation
import Testing
@testable import StrataRealmFile

/// Encrypted Realm files: the fixture with its key, a wrong key, and the HMAC it rests on.
@Suite("RealmFile encryption")
struct EncryptedFileTests {
    private func key() throws -> Data {
        let manifest = try Fixtures.manifest("encrypted")
        let hex = try #require(manifest["encryption_key_hex"] as? String)
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        return Data(bytes)
    }

    @Test("SHA-224 and HMAC-SHA224 match published and reference values")
    func sha224() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA224.hash(Array("abc".utf8))) == "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7")
        #expect(hex(SHA224.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000))) == "4e8f0ce90b64661a2b5e84be6d93a7d9b76871062f1814433d04a03d")
        #expect(hex(SHA224.authenticationCode(for: [UInt8](repeating: UInt8(ascii: "x"), count: 4_096), key: Array(0..<64)))
                == "b628446264f928e20c383bb56bc6736a256c3928e72bc15693873e2f")
    }

    @Test("the encrypted fixture decrypts with its key to the all-types data, every value matching the manifest")
    func decryptsWithKey() throws {
        let file = try RealmFile(url: Fixtures.url("encrypted.realm"), encryptionKey: try key())
        let manifest = try Fixtures.manifest("encrypted")
        #expect(file.fileFormatVersion == 24)
        #expect(file.schemaVersion == 1)
        let comparison = try ManifestComparison(file: file, manifest: manifest)
        for objectClass in file.schema.classes where !objectClass.isEmbedded {
            try comparison.compareClass(objectClass.name)
        }
        let plain = try Fixtures.open("all-types")
        #expect(file.schema == plain.schema)
        #expect(try file.objects(ofClass: "Links") == plain.objects(ofClass: "Links"))
    }

    @Test("a wrong key, a short key and a plain file given a key are typed errors")
    func wrongKey() throws {
        var wrong = [UInt8](try key())
        wrong[40] ^= 1
        #expect(throws: RealmFileError.wrongEncryptionKey) {
            try RealmFile(url: Fixtures.url("encrypted.realm"), encryptionKey: Data(wrong))
        }
        #expect(throws: RealmFileError.invalidEncryptionKey(length: 32)) {
            try RealmFile(url: Fixtures.url("encrypted.realm"), encryptionKey: Data(wrong.prefix(32)))
        }
        #expect(throws: RealmFileError.wrongEncryptionKey) {
            try RealmFile(url: Fixtures.url("all-types.realm"), encryptionKey: try key())
        }
    }

    /// Compares every object of every top-level class of `file` (reading every page the data
    /// lies in) with the encrypted fixture's manifest.
    private func compareWithManifest(_ file: RealmFile) throws {
        let comparison = try ManifestComparison(file: file, manifest: try Fixtures.manifest("encrypted"))
        for objectClass in file.schema.classes where !objectClass.isEmbedded {
            try comparison.compareClass(objectClass.name)
        }
    }

    @Test("with a cache of a few decrypted pages the file still reads exactly, never holding more than the bound")
    func boundedPageCache() throws {
        for limit in [1, 3, 16] {
            let file = try RealmFile(url: Fixtures.url("encrypted.realm"), encryptionKey: try key(), decryptedPageLimit: limit)
            try compareWithManifest(file)
            let held = try #require(file.heldDecryptedPageCount)
            #expect(held <= limit)
            #expect(held == limit, "the file has more pages than the limit, so the cache is full")
        }
        // The default bound: the file's 512 data pages all fit, and no more than them are held.
        let file = try RealmFile(url: Fixtures.url("encrypted.realm"), encryptionKey: try key())
        try compareWithManifest(file)
        #expect(try #require(file.heldDecryptedPageCount) <= 512)
        #expect(try Fixtures.open("all-types").heldDecryptedPageCount == nil)
    }

    @Test("a flipped byte in an encrypted block is reported with that block's offset when its data is read")
    func damagedPage() throws {
        let original = [UInt8](try Data(contentsOf: Fixtures.url("encrypted.realm")))
        var generator = SplitMix64(seed: 33)
        var failures = 0
        // Data blocks only (every 65th block, from 0, holds the IVs and codes of the next 64).
        let dataBlocks = (1..<(original.count / 4_096)).filter { $0 % 65 != 0 }
        for block in stride(from: 1, to: dataBlocks.count, by: 41).map({ dataBlocks[$0] }) {
            var bytes = original
            bytes[block * 4_096 + Int(generator.next() % 4_096)] ^= 0x10
            let url = try Fixtures.temporaryFile(bytes)
            defer { try? FileManager.default.removeItem(at: url) }
            do {
                // A block the current version does not use is never read: the data is intact.
                try compareWithManifest(try RealmFile(url: url, encryptionKey: try key()))
            } catch let error as RealmFileError {
                #expect(error == .damagedEncryptedBlock(fileOffset: block * 4_096))
                #expect(error.description.contains("byte \(block * 4_096)"))
                failures += 1
            }
        }
        #expect(failures > 0, "some damaged block holds data the objects are read from")
        // A damaged first block cannot be told from a wrong key.
        var first = original
        first[4_096 + 7] ^= 1
        let url = try Fixtures.temporaryFile(first)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(throws: RealmFileError.wrongEncryptionKey) { try RealmFile(url: url, encryptionKey: try key()) }
    }
}
