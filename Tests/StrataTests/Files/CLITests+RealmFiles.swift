import Foundation
import Testing

/// `strata import-realm`, and `inspect` / `dump` given a Realm file, run as a separate process
/// on the Realm fixtures (Tests/StrataRealmFileTests/Fixtures).
extension CLITests {
    static let realmFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("StrataRealmFileTests/Fixtures")

    static func realmFixture(_ name: String) -> String { realmFixtures.appendingPathComponent(name).path }

    @Test func importRealmCopiesTheFileAndTheStrataDumpMatchesTheRealmDump() throws {
        let folder = TemporaryFolder()
        let destination = folder.url.appendingPathComponent("items.strata").path
        let result = try runStrata("import-realm", Self.realmFixture("schema-v3.realm"), destination)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("7 objects in 2 classes, schema version 3"), "\(result.output)")
        // Not a terminal: plain progress lines, one per class.
        #expect(result.errors.contains("[1/2] Item 5/5"), "\(result.errors)")
        #expect(!result.errors.contains("\r"))

        let fromStrata = try runStrata("dump", destination, "--json")
        let fromRealm = try runStrata("dump", Self.realmFixture("schema-v3.realm"), "--json")
        #expect(fromStrata.status == 0 && fromRealm.status == 0, "\(fromStrata.errors) \(fromRealm.errors)")
        #expect(fromRealm.output == fromStrata.output)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(fromRealm.output.utf8)) as? [String: [[String: Any]]])
        #expect(document["Item"]?.map { $0["name"] as? String } == ["apple", "bolt", "cable", "drill", "eraser"])
        #expect(document["Note"]?.last?["item"] as? String == "Item#2")

        let again = try runStrata("import-realm", Self.realmFixture("schema-v3.realm"), destination)
        #expect(again.status == 1)
        #expect(again.errors.contains("already exists"), "\(again.errors)")
    }

    @Test func importRealmOfAFileWithNestedCollectionsInMixedValuesImportsThemUnlessAskedToSkip() throws {
        let folder = TemporaryFolder()
        let destination = folder.url.appendingPathComponent("all.strata").path
        let imported = try runStrata("import-realm", Self.realmFixture("all-types.realm"), destination)
        #expect(imported.status == 0, "\(imported.errors)")
        #expect(!imported.output.contains("left out"), "\(imported.output)")
        let skippedDestination = folder.url.appendingPathComponent("skipped.strata").path
        let skipped = try runStrata("import-realm", Self.realmFixture("all-types.realm"), skippedDestination, "--skip-nested-collections")
        #expect(skipped.status == 0, "\(skipped.errors)")
        #expect(skipped.output.contains("left out: 8 mixed value(s)"), "\(skipped.output)")
    }

    @Test func importRealmOfAnEncryptedFileTakesTheKeyAsHex() throws {
        let folder = TemporaryFolder()
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.realmFixtures.appendingPathComponent("encrypted.json"))) as? [String: Any])
        let key = try #require(manifest["encryption_key_hex"] as? String)
        let destination = folder.url.appendingPathComponent("e.strata").path
        let withoutKey = try runStrata("import-realm", Self.realmFixture("encrypted.realm"), destination)
        #expect(withoutKey.status == 1)
        #expect(withoutKey.errors.contains("64-byte key"), "\(withoutKey.errors)")
        let badKey = try runStrata("import-realm", Self.realmFixture("encrypted.realm"), destination, "--key", "abc")
        #expect(badKey.status == 1)
        #expect(badKey.errors.contains("128 hex digits"), "\(badKey.errors)")
        let imported = try runStrata("import-realm", Self.realmFixture("encrypted.realm"), destination, "--key", key)
        #expect(imported.status == 0, "\(imported.errors)")
        let inspect = try runStrata("inspect", Self.realmFixture("encrypted.realm"), "--key", key)
        #expect(inspect.status == 0, "\(inspect.errors)")
        #expect(inspect.output.contains("Realm file, file format 24, encrypted"), "\(inspect.output)")
    }

    @Test func inspectRecognisesARealmFileByItsHeaderNotItsName() throws {
        let folder = TemporaryFolder()
        let renamed = folder.url.appendingPathComponent("data.strata")
        try FileManager.default.copyItem(atPath: Self.realmFixture("schema-v3.realm"), toPath: renamed.path)
        let result = try runStrata("inspect", renamed.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("Realm file, file format 24"), "\(result.output)")
        #expect(result.output.contains("schema version 3, 2 classes"), "\(result.output)")
        #expect(result.output.contains("  Item: 5 objects"), "\(result.output)")
        #expect(result.output.contains("      id: int (primary key)"), "\(result.output)")
    }

    @Test func importRealmKilledPartWayLeavesNoDestinationAndTheNextImportSucceeds() throws {
        let folder = TemporaryFolder()
        let destination = folder.url.appendingPathComponent("people.strata")
        let temporary = folder.url.appendingPathComponent(".people.strata.importing")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.executable, "the strata executable was not found beside the tests"))
        process.arguments = ["import-realm", Self.realmFixture("people-50k.realm"), destination.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait (on the file, not the clock) until the import has started writing, then kill it.
        while process.isRunning && !FileManager.default.fileExists(atPath: temporary.path) { usleep(1_000) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // The temporary file appears as the import starts, and copying 44,961 objects takes far
        // longer than the millisecond the loop above may lag: the kill lands part way.
        #expect(process.terminationReason == .uncaughtSignal, "the import was killed before it finished")
        #expect(!FileManager.default.fileExists(atPath: destination.path), "a killed import leaves no destination")
        let again = try runStrata("import-realm", Self.realmFixture("people-50k.realm"), destination.path)
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output.contains("44961 objects"), "\(again.output)")
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
        let inspect = try runStrata("inspect", destination.path)
        #expect(inspect.status == 0, "\(inspect.errors)")
        #expect(inspect.output.contains("Person: 44961 objects"), "\(inspect.output)")
    }

    @Test func twoProcessesImportingOneFileAtOnceLeaveOneCompleteDestination() throws {
        let folder = TemporaryFolder()
        let destination = folder.url.appendingPathComponent("people.strata")
        let temporary = folder.url.appendingPathComponent(".people.strata.importing")
        let executable = URL(fileURLWithPath: try #require(Self.executable, "the strata executable was not found beside the tests"))
        func importer() throws -> (Process, Pipe) {
            let process = Process()
            let errors = Pipe()
            process.executableURL = executable
            process.arguments = ["import-realm", Self.realmFixture("people-50k.realm"), destination.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            return (process, errors)
        }
        let (first, firstErrors) = try importer()
        // The second starts once the first is writing its temporary file: without the import
        // lock it would remove that file and write its own under the same name.
        while first.isRunning && !FileManager.default.fileExists(atPath: temporary.path) { usleep(1_000) }
        let (second, secondErrors) = try importer()
        let secondMessage = String(decoding: secondErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        second.waitUntilExit()
        let firstMessage = String(decoding: firstErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        first.waitUntilExit()
        #expect(first.terminationStatus == 0, "\(firstMessage)")
        #expect(second.terminationStatus != 0, "the second import waited, then found the destination")
        #expect(secondMessage.contains("exists"), "\(secondMessage)")
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
        let inspect = try runStrata("inspect", destination.path)
        #expect(inspect.status == 0, "\(inspect.errors)")
        #expect(inspect.output.contains("Person: 44961 objects"), "\(inspect.output)")
    }
}
