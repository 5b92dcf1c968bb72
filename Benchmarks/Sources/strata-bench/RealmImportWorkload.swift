// `realm-import`: the Realm Core 14 fixture `people-50k.realm` imported into a new Strata file
// through the entry point `strata import-realm` uses, objects per second. Strata only (no peer
// reads Realm's file format), beside `bulk-insert` in the same run so that their ratio comes
// from one machine in one state.

#if !NO_STRATA
import Foundation
import StrataRealmFile

/// The fixture and what importing it must produce.
enum RealmImportFixture {
    /// The number of `Person` objects in `people-50k.realm` (its manifest's `object_counts`).
    static let personCount = 44_961

    /// The fixture in the repository's test fixtures, found from this source file's place (the
    /// benchmarks are built from a checkout, which holds the tests), else from the working
    /// directory (`Benchmarks/` or the repository's root).
    static func url() throws -> URL {
        let relative = "Tests/StrataRealmFileTests/Fixtures/people-50k.realm"
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let working = FileManager.default.currentDirectoryPath
        let candidates = [repository.appendingPathComponent(relative).path, working + "/../" + relative, working + "/" + relative]
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw BenchError("realm-import: the fixture \(relative) is not at \(candidates.joined(separator: " or "))")
        }
        return URL(fileURLWithPath: found)
    }
}

/// Imports the fixture into a new file in `directory`, timed from opening the Realm file to the
/// import's last synced commit and the renamed file (what `strata import-realm` does after
/// parsing its arguments); returns objects per second. Checks the count imported.
func measureRealmImport(directory: String) throws -> Double {
    let source = try RealmImportFixture.url()
    let destination = URL(fileURLWithPath: directory).appendingPathComponent("imported.strata")
    let start = monotonicNanos()
    let file = try RealmFile(url: source)
    let report = try RealmImport.importFile(file, to: destination)
    let elapsed = monotonicNanos() - start
    let imported = report.objectCounts["Person"] ?? 0
    guard imported == RealmImportFixture.personCount else {
        throw BenchError("realm-import: imported \(imported) Person objects, the fixture holds \(RealmImportFixture.personCount)")
    }
    return Double(imported) / (Double(max(elapsed, 1)) / 1e9)
}
#endif
