// Realm files given to the commands that read files: recognising one by its header (not its
// extension), its encryption key from the command line, and a Strata copy of it for the
// commands that read Strata files.

import Foundation
import StrataRealmFile

/// Whether the file at `path` starts with a Realm file header: the mark `T-DB` at byte 16.
/// An encrypted Realm file does not show it; the commands treat a file as a Realm file then
/// when a key is given.
func hasRealmHeader(_ path: String) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: path) else { return false }
    defer { try? handle.close() }
    guard let header = try? handle.read(upToCount: 24), header.count == 24 else { return false }
    return Array(header[16..<20]) == Array("T-DB".utf8)
}

/// A Realm encryption key written as 128 hex digits (64 bytes).
func realmKey(fromHex text: String) throws(CommandFailure) -> Data {
    let digits = Array(text.utf8)
    guard digits.count == 128 else {
        throw CommandFailure("--key takes a Realm encryption key as 128 hex digits (64 bytes); this one has \(digits.count) characters")
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(64)
    for index in stride(from: 0, to: 128, by: 2) {
        guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else {
            throw CommandFailure("--key takes 128 hex digits (0-9, a-f); it holds something else")
        }
        bytes.append(high << 4 | low)
    }
    return Data(bytes)
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
    default: return nil
    }
}

/// Opens a Realm file, with its key if one is given.
func openRealmFile(_ path: String, key: Data?) throws(CommandFailure) -> RealmFile {
    do {
        if let key { return try RealmFile(url: URL(fileURLWithPath: path), encryptionKey: key) }
        return try RealmFile(url: URL(fileURLWithPath: path))
    } catch {
        throw CommandFailure(path: path, error)
    }
}

/// A Strata copy of a Realm file in a fresh temporary folder, for `dump` to read as it reads
/// any Strata file (so the output has the same shape), nested collections in mixed values
/// included.
struct RealmCopy {
    let folder: URL
    let path: String

    init(of source: String, key: Data?) throws(CommandFailure) {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-realm-\(UUID().uuidString)")
        let destination = folder.appendingPathComponent("copy.strata")
        path = destination.path
        let file = try openRealmFile(source, key: key)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            _ = try RealmImport.importFile(file, to: destination)
        } catch {
            remove()
            throw CommandFailure(path: source, error)
        }
    }

    /// Deletes the copy.
    func remove() { try? FileManager.default.removeItem(at: folder) }
}
