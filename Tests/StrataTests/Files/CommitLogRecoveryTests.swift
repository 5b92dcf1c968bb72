// A damaged commit log through the public API: opening refuses with `.invalidDatabase`, naming
// the log, the last good version and the way out; `Configuration.commitLogRecovery` opens at
// that version and says what it gave up.

import Foundation
import Testing
import Strata

@Suite struct CommitLogRecoveryTests {
    /// A database whose writer died after six small (logged) writes of one dog each, its log's
    /// second block zeroed: the second logged commit's record (or the first's, if it took two
    /// blocks), with valid records after it.
    static func damagedCopy(in folder: TemporaryFolder) throws -> Database.Configuration {
        let config = folder.configuration("original.strata", objectTypes: [Dog.self])
        let copy = folder.configuration("copy.strata", objectTypes: [Dog.self])
        let db = try Database(configuration: config)
        try db.write { db.create(Dog.self, value: ["name": "first", "age": 0]) }
        try db.checkpoint()
        for age in 1...6 { try db.write { db.create(Dog.self, value: ["name": "dog \(age)", "age": age]) } }
        // As a killed process leaves them: the files copied while the database is open.
        for suffix in ["", "-log"] {
            try FileManager.default.copyItem(atPath: config.fileURL!.path + suffix, toPath: copy.fileURL!.path + suffix)
        }
        let logURL = URL(fileURLWithPath: copy.fileURL!.path + "-log")
        var log = try Data(contentsOf: logURL)
        log.replaceSubrange(4096..<8192, with: Data(count: 4096))
        try log.write(to: logURL)
        return copy
    }

    @Test func aDamagedLogIsRefusedUntilTheRecoveryOptionGivesItsCommitsUp() throws {
        let folder = TemporaryFolder()
        var copy = try Self.damagedCopy(in: folder)
        do {
            _ = try Database(configuration: copy)
            Issue.record("a damaged commit log opened silently")
        } catch let error as Database.Error {
            #expect(error.code == .invalidDatabase)
            #expect(error.message.contains("copy.strata-log") && error.message.contains("is damaged"), "\(error.message)")
            #expect(error.message.contains("strata recover") && error.message.contains("commitLogRecovery"), "\(error.message)")
        }
        copy.commitLogRecovery = .openAtLastGoodVersion
        do {
            let db = try Database(configuration: copy)
            let report = try #require(db.commitLogRecoveryReport)
            #expect(report.lostCommits >= 5 && report.version == db.version, "\(report)")
            // One dog per lost commit is gone; the rest are exactly the ones written first.
            let ages = db.objects(Dog.self).map(\.age).sorted()
            #expect(ages == Array(0...(6 - Int(report.lostCommits))), "\(ages), \(report)")
        }
        // The damage is gone: the file opens without the option, at the same version.
        copy.commitLogRecovery = .refuse
        let db = try Database(configuration: copy)
        #expect(db.commitLogRecoveryReport == nil)
        #expect(db.objects(Dog.self).count <= 2)
    }
}
