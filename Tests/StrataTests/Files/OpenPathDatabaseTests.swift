// Opening a database through `Database(configuration:)` where its file URL names something
// that is not a database file: a typed error, and nothing there replaced (StorageEngine's
// OpenPathTests cover each kind in detail).

import Foundation
import Testing
@testable import Strata
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct OpenPathDatabaseTests {
    let folder = TemporaryFolder()

    private func configuration(_ name: String) -> Database.Configuration {
        folder.configuration(name, objectTypes: [Bookmark.self])
    }

    private func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.url.path)) ?? []).sorted()
    }

    private func path(_ name: String) -> String { folder.url.appendingPathComponent(name).path }

    private func kind(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    @Test func aLinkToDevNullIsAFileAccessErrorAndNothingIsReplaced() throws {
        #expect(symlink("/dev/null", path("db.strata")) == 0)
        let error = #expect(throws: Database.Error.self) { try Database(configuration: configuration("db.strata")) }
        #expect(error?.code == .fileAccess)
        #expect(error?.message.contains("character device") == true)
        #expect(kind(path("db.strata")) == S_IFLNK)
        #expect(kind("/dev/null") == S_IFCHR)
        #expect(names() == ["db.strata"])
    }

    @Test func aFIFOIsAFileAccessErrorWithoutBlocking() throws {
        #expect(mkfifo(path("db.strata"), 0o644) == 0)
        let error = #expect(throws: Database.Error.self) { try Database(configuration: configuration("db.strata")) }
        #expect(error?.code == .fileAccess)
        #expect(kind(path("db.strata")) == S_IFIFO)
        #expect(names() == ["db.strata"])
    }

    @Test func aDanglingLinkIsRefusedAndNoSeedIsCopiedThroughIt() throws {
        // A seed file, to be copied only where nothing is.
        let seed = folder.url.appendingPathComponent("seed.strata")
        do {
            let db = try Database(configuration: configuration("seed.strata"))
            try db.write { db.create(Bookmark.self, value: ["url": "https://seed", "title": "seed"]) }
        }
        #expect(symlink(path("target.strata"), path("db.strata")) == 0)
        var linked = configuration("db.strata")
        linked.seedFilePath = seed
        let before = names()
        let error = #expect(throws: Database.Error.self) { try Database(configuration: linked) }
        #expect(error?.code == .fileAccess)
        #expect(error?.message.contains("dangling symbolic link") == true)
        #expect(kind(path("target.strata")) == nil, "the link's target is not created")
        #expect(names() == before)
    }

    @Test func aZeroLengthFileWhoseLogHoldsCommitsIsAnInvalidDatabase() throws {
        // Copies of a file and its log taken while commits are still only in the log.
        let source = try Database(configuration: configuration("source.strata"))
        for i in 0..<10 {
            try source.write { source.create(Bookmark.self, value: ["url": "https://e/\(i)", "title": "\(i)"]) }
        }
        try FileManager.default.copyItem(atPath: path("source.strata"), toPath: path("db.strata"))
        try FileManager.default.copyItem(atPath: path("source.strata-log"), toPath: path("db.strata-log"))
        #expect(truncate(path("db.strata"), 0) == 0)
        let log = try Data(contentsOf: URL(fileURLWithPath: path("db.strata-log")))
        let error = #expect(throws: Database.Error.self) { try Database(configuration: configuration("db.strata")) }
        #expect(error?.code == .invalidDatabase)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path("db.strata-log"))) == log)
        var info = stat()
        #expect(stat(path("db.strata"), &info) == 0 && info.st_size == 0)
        #expect(!names().contains("db.strata-lock"))
    }

    @Test func aLinkToADatabaseOpensIt() throws {
        do {
            let db = try Database(configuration: configuration("real.strata"))
            try db.write { db.create(Bookmark.self, value: ["url": "https://a", "title": "a"]) }
        }
        #expect(symlink(path("real.strata"), path("db.strata")) == 0)
        let db = try Database(configuration: configuration("db.strata"))
        #expect(db.object(ofType: Bookmark.self, forPrimaryKey: "https://a")?.title == "a")
        try db.write { db.create(Bookmark.self, value: ["url": "https://b", "title": "b"]) }
        #expect(kind(path("db.strata")) == S_IFLNK)
        #expect(!names().contains("db.strata-lock") && !names().contains("db.strata-log"))
    }
}
