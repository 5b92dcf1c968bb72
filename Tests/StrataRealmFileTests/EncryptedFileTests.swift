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

    @Test("a flipped byte in a later encrypted page is reported as damage")
    func damagedPage() throws {
        var bytes = [UInt8](try Data(contentsOf: Fixtures.url("encrypted.realm")))
        bytes[20 * 4_096 + 100] ^= 0x10
        let url = try Fixtures.temporaryFile(bytes)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect {
            try RealmFile(url: url, encryptionKey: try key())
        } throws: { error in
            guard case .corrupted = error as? RealmFileError else { return false }
            return true
        }
    }
}
