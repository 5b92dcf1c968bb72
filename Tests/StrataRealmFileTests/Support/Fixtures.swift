import Foundation
import Testing
@testable import StrataRealmFile

/// The Realm files written by Realm Core 14.14 and their JSON manifests (see Fixtures/README.md).
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func url(_ name: String) -> URL {
        directory.appendingPathComponent(name)
    }

    static func open(_ name: String) throws -> RealmFile {
        try RealmFile(url: url(name + ".realm"))
    }

    static func manifest(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: url(name + ".json"))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ManifestError.malformed("\(name).json is not an object")
        }
        return object
    }

    /// The encrypted fixture's 64-byte key, from its manifest.
    static func encryptionKey() throws -> Data {
        let hex = try #require(try manifest("encrypted")["encryption_key_hex"] as? String)
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        return Data(bytes)
    }

    /// A copy of fixture `name` in a fresh temporary file, changed by `change`.
    static func damagedCopy(of name: String, _ change: (inout [UInt8]) -> Void) throws -> URL {
        var bytes = [UInt8](try Data(contentsOf: url(name + ".realm")))
        change(&bytes)
        return try temporaryFile(bytes)
    }

    static func temporaryFile(_ bytes: [UInt8]) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-realmfile-\(UUID().uuidString).realm")
        try Data(bytes).write(to: url)
        return url
    }
}

enum ManifestError: Error {
    case malformed(String)
}
