// RealmSwift's `Realm.Error`: each code Strata can produce, provoked as an application would
// meet it and caught the way RealmSwift code catches it (`catch Realm.Error.fileNotFound`,
// `error.code == .schemaMismatch`), with the file in `fileURL`.

import Foundation
import Testing
import StrataRealmCompat

class CompatLedgerEntry: Object {
    @Persisted var amount = 0
}

class CompatLedgerEntryWithNote: Object {
    @Persisted var amount = 0
    @Persisted var note = ""
    override class func className() -> String { "CompatLedgerEntry" }
}

@Suite struct RealmErrorCompatTests {
    let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
    var fileURL: URL { folder.appendingPathComponent("ledger.strata") }

    func configuration(_ url: URL? = nil, readOnly: Bool = false, types: [ObjectBase.Type] = [CompatLedgerEntry.self]) -> Realm.Configuration {
        var configuration = Realm.Configuration(fileURL: url ?? fileURL, readOnly: readOnly, objectTypes: types)
        configuration.maximumFileSize = 1 << 30
        return configuration
    }

    /// The error opening `configuration` throws.
    func openError(_ configuration: Realm.Configuration) throws -> Realm.Error {
        try #require(throws: Realm.Error.self) { _ = try Realm(configuration: configuration) }
    }

    @Test func theCodesHaveRealmSwiftsNumbers() {
        let codes: [(Realm.Error.Code, Int)] = [
            (.fail, 1), (.fileAccess, 2), (.filePermissionDenied, 3), (.fileExists, 4), (.fileNotFound, 5),
            (.fileFormatUpgradeRequired, 6), (.incompatibleLockFile, 8), (.addressSpaceExhausted, 9),
            (.schemaMismatch, 10), (.incompatibleSyncedFile, 11), (.alreadyOpen, 12), (.invalidInput, 13), (.outOfDiskSpace, 14),
            (.incompatibleSession, 15), (.unsupportedFileFormatVersion, 16), (.multipleSyncAgents, 17),
            (.subscriptionFailed, 18), (.fileOperationFailed, 19), (.invalidDatabase, 20),
            (.incompatibleHistories, 21), (.noSubscriptionForWrite, 22),
        ]
        for (code, number) in codes { #expect(code.rawValue == number, "\(code)") }
        #expect(Realm.Error(.fail).code == .fail && Realm.Error.callFailed.code == .fail)
    }

    @Test func aMissingFileOpenedReadOnlyIsFileNotFound() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            _ = try Realm(configuration: configuration(readOnly: true))
            Issue.record("opening a missing file read-only succeeded")
        } catch Realm.Error.fileNotFound {
            // RealmSwift's pattern.
        }
        let error = try openError(configuration(readOnly: true))
        #expect(error.code == .fileNotFound && error.fileURL?.path == fileURL.path)
    }

    @Test(.enabled(if: getuid() != 0, "root may write anywhere: permissions cannot be provoked"))
    func aFileInAFolderThisProcessMayNotWriteIsFilePermissionDenied() throws {
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path)
            try? FileManager.default.removeItem(at: folder)
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: folder.path)
        let error = try openError(configuration())
        #expect(error.code == .filePermissionDenied, "\(error)")
        #expect(error.fileURL != nil)
    }

    @Test func aClassThatDisagreesWithTheFileIsSchemaMismatch() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let realm = try Realm(configuration: configuration())
            try realm.write { realm.add(CompatLedgerEntry()) }
        }
        do {
            _ = try Realm(configuration: configuration(types: [CompatLedgerEntryWithNote.self]))
            Issue.record("a mismatched schema opened")
        } catch let error as Realm.Error where error.code == .schemaMismatch {
            #expect(error.fileURL?.path == fileURL.path)
        }
    }

    @Test func aFileThatIsNotADatabaseIsInvalidDatabase() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(repeating: 0x5A, count: 16384).write(to: fileURL)
        let error = try openError(configuration())
        #expect(error.code == .invalidDatabase, "\(error)")
        #expect(error.fileURL?.path == fileURL.path)
    }

    @Test func writingACopyOverAnExistingFileIsFileExists() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: configuration())
        let copy = folder.appendingPathComponent("copy.strata")
        try realm.writeCopy(toFile: copy)
        do {
            try realm.writeCopy(toFile: copy)
            Issue.record("a copy overwrote an existing file")
        } catch Realm.Error.fileExists {
        }
    }

    @Test func deletingTheFilesOfAnOpenRealmIsAlreadyOpen() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: configuration())
        do {
            try Realm.deleteFiles(for: realm.configuration)
            Issue.record("the files of an open realm were deleted")
        } catch let error as Realm.Error where error.code == .alreadyOpen {
            #expect(error.fileURL?.path == fileURL.path)
        }
    }

    @Test func deletingFilesThatCannotBeRemovedIsFileOperationFailed() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        // A folder where the database file should be: it is not removed (nor its contents).
        try FileManager.default.createDirectory(at: fileURL, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: fileURL.appendingPathComponent("inside.txt"))
        do {
            try Realm.deleteFiles(for: configuration())
            Issue.record("deleting a folder in place of the file succeeded")
        } catch Realm.Error.fileOperationFailed {
        }
        #expect(FileManager.default.fileExists(atPath: fileURL.appendingPathComponent("inside.txt").path))
    }

    @Test(.enabled(if: getuid() != 0, "root may write anywhere: permissions cannot be provoked"))
    func deletingFilesInAFolderThisProcessMayNotWriteIsFilePermissionDenied() throws {
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path)
            try? FileManager.default.removeItem(at: folder)
        }
        do {
            let realm = try Realm(configuration: configuration())
            try realm.write { realm.add(CompatLedgerEntry()) }
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: folder.path)
        let error = try #require(throws: Realm.Error.self) { try Realm.deleteFiles(for: configuration()) }
        #expect(error.code == .filePermissionDenied, "\(error)")
        #expect(error.fileURL?.path == fileURL.path)
    }

    @Test func writingToAReadOnlyRealmIsFileAccess() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        do { _ = try Realm(configuration: configuration()) }
        let realm = try Realm(configuration: configuration(readOnly: true))
        do {
            try realm.write { realm.add(CompatLedgerEntry()) }
            Issue.record("a read-only realm took a write")
        } catch Realm.Error.fileAccess {
        }
    }
}
