import Foundation
import Testing
@testable import StrataRealmFile

/// The file header: Realm's mark, the format version, the selected top ref and the
/// streaming-form footer.
@Suite("RealmFile header")
struct HeaderTests {
    private func emptyFixtureBytes() throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Fixtures.url("empty.realm")))
    }

    @Test("a file without Realm's T-DB mark is not a Realm file")
    func badMark() throws {
        var bytes = try emptyFixtureBytes()
        bytes[16] = UInt8(ascii: "X")
        #expect(throws: RealmFileError.notARealmFile(reason: "the header lacks Realm's T-DB mark")) {
            try RealmFile(bytes: bytes)
        }
    }

    @Test("files shorter than the header are not Realm files", arguments: [0, 1, 16, 23])
    func tooShort(length: Int) throws {
        let bytes = Array(try emptyFixtureBytes().prefix(length))
        #expect {
            try RealmFile(bytes: bytes)
        } throws: { error in
            guard case .notARealmFile = error as? RealmFileError else { return false }
            return true
        }
    }

    @Test("a format other than 24 is a typed error naming the version and what to do", arguments: [9, 20, 22, 23, 25])
    func otherFormats(version: UInt8) throws {
        var bytes = try emptyFixtureBytes()
        let select = Int(bytes[23] & 1)
        bytes[20 + select] = version
        #expect(throws: RealmFileError.unsupportedFileFormat(version: Int(version))) {
            try RealmFile(bytes: bytes)
        }
        let message = RealmFileError.unsupportedFileFormat(version: Int(version)).description
        #expect(message.contains("format \(version)") && message.contains("RealmSwift"))
    }

    @Test("the flags byte selects which top ref and format byte are current")
    func selectBitPicksTopRef() throws {
        var bytes = try emptyFixtureBytes()
        let original = try RealmFile(bytes: bytes)
        // Move the current top ref to the other slot and flip the select bit.
        let select = Int(bytes[23] & 1)
        let current = Array(bytes[(8 * select)..<(8 * select + 8)])
        bytes.replaceSubrange((8 * (1 - select))..<(8 * (1 - select) + 8), with: current)
        bytes.storeLittleEndian(0xDEAD_BEEF, at: 8 * select)
        bytes[20 + (1 - select)] = 24
        bytes[23] ^= 1
        let moved = try RealmFile(bytes: bytes)
        #expect(moved.schema == original.schema)
    }

    @Test("a streaming-form file reads its top ref from the footer")
    func streamingForm() throws {
        var bytes = try emptyFixtureBytes()
        let original = try RealmFile(bytes: bytes)
        let select = Int(bytes[23] & 1)
        var topRef: UInt64 = 0
        for index in 0..<8 { topRef |= UInt64(bytes[8 * select + index]) << (8 * UInt64(index)) }
        bytes.storeLittleEndian(UInt64.max, at: 0)
        bytes[20] = 24
        bytes[23] &= ~1
        var footer = [UInt8](repeating: 0, count: 16)
        footer.storeLittleEndian(topRef, at: 0)
        footer.storeLittleEndian(0x3034_1252_37E5_26C8, at: 8)
        let streaming = try RealmFile(bytes: bytes + footer)
        #expect(streaming.isStreamingForm)
        #expect(streaming.schema == original.schema)
        #expect(streaming.schemaVersion == original.schemaVersion)

        var badCookie = footer
        badCookie[15] ^= 0xFF
        #expect(throws: RealmFileError.self) { try RealmFile(bytes: bytes + badCookie) }
    }

    @Test("a top ref outside the file is damage, not a crash")
    func topRefPastEnd() throws {
        var bytes = try emptyFixtureBytes()
        let select = Int(bytes[23] & 1)
        bytes.storeLittleEndian(UInt64(bytes.count + 8), at: 8 * select)
        #expect {
            try RealmFile(bytes: bytes)
        } throws: { error in
            guard case .corrupted = error as? RealmFileError else { return false }
            return true
        }
    }

    @Test("a file with no commit yet (top ref 0) has an empty schema")
    func noCommit() throws {
        var bytes = try emptyFixtureBytes()
        let select = Int(bytes[23] & 1)
        bytes.storeLittleEndian(0, at: 8 * select)
        let file = try RealmFile(bytes: bytes)
        #expect(file.schema.classes.isEmpty)
        #expect(file.schemaVersion == nil)
    }

    @Test("opening a missing file or a directory is a typed error")
    func cannotOpen() throws {
        #expect(throws: RealmFileError.self) { try RealmFile(path: "/nonexistent/strata/none.realm") }
        #expect(throws: RealmFileError.self) { try RealmFile(path: FileManager.default.temporaryDirectory.path) }
    }

    @Test("the reader never changes the file")
    func fileIsUntouched() throws {
        let url = Fixtures.url("all-types.realm")
        let before = try Data(contentsOf: url)
        let attributesBefore = try FileManager.default.attributesOfItem(atPath: url.path)
        let file = try RealmFile(url: url)
        for objectClass in file.schema.classes where !objectClass.isEmbedded {
            _ = try file.objects(ofClass: objectClass.name)
        }
        #expect(try Data(contentsOf: url) == before)
        let attributesAfter = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect(attributesBefore[.modificationDate] as? Date == attributesAfter[.modificationDate] as? Date)
    }
}
