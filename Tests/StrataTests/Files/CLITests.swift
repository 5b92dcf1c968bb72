import Foundation
import StrataTestWorkloads
import Testing
import Strata
import StrataStorage
@testable import StrataStore

/// The `strata` tool run as a separate process on small databases, its output parsed.
@Suite(.offThePool) struct CLITests {
    @Test func dumpJSONListsEveryObjectWithItsValues() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Person.self, Dog.self])
        do {
            let db = try Database(configuration: config)
            try db.write {
                let ann = db.create(Person.self, value: ["id": 1, "name": "Ann \"A\"\n", "city": "Oslo",
                                                         "dog": ["name": "Rex", "age": 3], "tags": ["x", "y"]])
                let bo = db.create(Person.self, value: ["id": 2, "name": "Bø 🎉", "friends": [ann]])
                bo.friends.append(bo)
            }
        }
        let result = try runStrata("dump", config.fileURL!.path, "--json")
        #expect(result.status == 0, "\(result.errors)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: [[String: Any]]])
        #expect(Set(document.keys) == ["Person", "Dog"])
        let people = try #require(document["Person"])
        #expect(people.map { $0["id"] as? Int } == [1, 2])
        #expect(people.map { $0["name"] as? String } == ["Ann \"A\"\n", "Bø 🎉"])
        #expect(people[0]["dog"] as? String == "Dog#\(try #require(document["Dog"]?.first?["_key"] as? Int))")
        #expect(people[0]["tags"] as? [String] == ["x", "y"])
        #expect(people[1]["dog"] is NSNull)
        #expect(people[1]["friends"] as? [String] == ["Person#\(people[0]["_key"] as? Int ?? -1)", "Person#\(people[1]["_key"] as? Int ?? -1)"])
        #expect(document["Dog"]?.first?["name"] as? String == "Rex")

        let dogs = try runStrata("dump", config.fileURL!.path, "--type", "Dog", "--json")
        let onlyDogs = try #require(try JSONSerialization.jsonObject(with: Data(dogs.output.utf8)) as? [String: [[String: Any]]])
        #expect(Array(onlyDogs.keys) == ["Dog"])
    }

    @Test func dumpWritesMapsAsObjects() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Player.self])
        do {
            let db = try Database(configuration: config)
            try db.write { db.create(Player.self, value: ["id": 1, "scores": ["b \"q\"": 2, "a": 1], "notes": ["n": NSNull()]]) }
        }
        let result = try runStrata("dump", config.fileURL!.path, "--json")
        #expect(result.status == 0, "\(result.errors)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: [[String: Any]]])
        let player = try #require(document["Player"]?.first)
        #expect(player["scores"] as? [String: Int] == ["a": 1, "b \"q\"": 2])
        #expect((player["notes"] as? [String: Any])?["n"] is NSNull)
        #expect((player["friends"] as? [String: Any])?.isEmpty == true)
        let text = try runStrata("dump", config.fileURL!.path)
        #expect(text.output.contains("scores: {\"a\": 1, \"b \\\"q\\\"\": 2}"), "\(text.output)")
    }

    @Test func dumpWritesMixedValuesAndVerifyAcceptsThem() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Setting.self, Appliance.self])
        do {
            let db = try Database(configuration: config)
            try db.write {
                let lamp = db.create(Appliance.self, value: ["id": 4, "name": "lamp"])
                db.create(Setting.self, value: ["id": 1, "value": MixedValue.object(lamp), "history": [1, "a", 2.5, NSNull()]])
            }
        }
        let result = try runStrata("dump", config.fileURL!.path, "--type", "Setting")
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("value: Appliance#0"), "\(result.output)")
        #expect(result.output.contains("history: [1, \"a\", 2.5, nil]"), "\(result.output)")
        let verify = try runStrata("verify", config.fileURL!.path)
        #expect(verify.status == 0, "\(verify.output) \(verify.errors)")
    }

    @Test func inspectShowsTheObjectCountsAndTheCommitLog() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        do {
            let db = try Database(configuration: config)
            try db.write { db.create(Dog.self, value: ["name": "Rex"]) }
            try db.write { db.create(Dog.self, value: ["name": "Fido"]) }
        }
        let path = config.fileURL!.path
        let logPath = path + "-log"
        #expect(FileManager.default.fileExists(atPath: logPath))
        let result = try runStrata("inspect", path)
        #expect(result.status == 0, "\(result.errors)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.trimmingCharacters(in: .whitespaces) == "Dog: 2 objects" }, "\(result.output)")
        #expect(lines.contains { $0.hasPrefix("commit log: \(logPath), ") && $0.contains(" bytes ") }, "\(result.output)")

        // After a checkpoint (the last close made one) the file stands alone.
        try FileManager.default.removeItem(atPath: logPath)
        let alone = try runStrata("inspect", path)
        #expect(alone.status == 0, "\(alone.errors)")
        #expect(alone.output.split(separator: "\n").contains("commit log: none"), "\(alone.output)")
        #expect(alone.output.contains("Dog: 2 objects"), "\(alone.output)")
    }

    @Test func verifyReadsEveryObjectAndReportsWhatChecksumsCannotSee() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Person.self, Dog.self])
        do {
            let db = try Database(configuration: config)
            try db.write {
                for id in 0..<30 { db.create(Person.self, value: ["id": id, "name": "P\(id)", "tags": ["a", "b"]]) }
                db.create(Dog.self, value: ["name": "Rex"])
            }
        }
        let path = config.fileURL!.path
        let healthy = try runStrata("verify", path)
        #expect(healthy.status == 0, "\(healthy.errors)")
        #expect(healthy.output.contains("objects: 31 read (Dog 1, Person 30), no problems"), "\(healthy.output)")

        // The first cluster of the first object table given one key too many, its checksums
        // valid: the engine's checks pass, the objects' do not.
        do {
            let engine = try StorageEngine.open(path: path, options: StorageOptions())
            defer { engine.close() }
            try engine.write { t in
                let name = try #require(try t.treeNames().filter { $0.hasPrefix("t") && $0.hasSuffix(".c") }.sorted().first)
                let tree = try #require(try t.tree(named: name))
                let cursor = try t.makeCursor(on: tree)
                #expect(try cursor.first())
                let first = Int64(bitPattern: TreeKey.readU64(cursor.key))
                let rows = Cluster.capacity + 1
                var keys: [UInt8] = [UInt8(rows & 0xFF), UInt8(rows >> 8), 0, 0, ChunkFormat.fixed, 8, 0, 0]
                for k in 0..<rows { withUnsafeBytes(of: (first + Int64(k)).littleEndian) { keys += $0 } }
                try t.put(keys, forKey: TreeKey.cluster(first, column: Cluster.keyColumn), in: tree)
            }
        }
        let damaged = try runStrata("verify", path)
        #expect(damaged.status == 2, "\(damaged.errors)")
        #expect(damaged.output.contains("more than the \(Cluster.capacity) a cluster can hold"), "\(damaged.output)")
        #expect(damaged.output.split(separator: "\n").first?.hasPrefix("version ") == true, "\(damaged.output)")
    }

    @Test func badInputsGetOneLineAndAFailureStatus() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        do {
            let db = try Database(configuration: config)
            try db.write { db.create(Dog.self, value: ["name": "Rex"]) }
        }
        let foreign = folder.url.appendingPathComponent("foreign.strata")
        try Data(repeating: 0x41, count: 10_000).write(to: foreign)
        let cases: [[String]] = [
            ["inspect", folder.url.appendingPathComponent("missing.strata").path],
            ["verify", folder.url.path],
            ["dump", foreign.path],
            ["dump", config.fileURL!.path, "--type", "Cat"],
        ]
        for arguments in cases {
            let result = try runStrata(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.output.isEmpty, "\(arguments)")
            #expect(result.errors.hasPrefix("strata: ") && result.errors.filter { $0 == "\n" }.count == 1, "\(arguments): \(result.errors)")
        }
    }

    /// A killed writer's commit log with a damaged record followed by valid ones: `verify`
    /// reports it (status 2) and `dump` refuses, instead of reading the version before it;
    /// `recover` opens at the last good version, says how many commits it gave up, and after
    /// it the file verifies healthy.
    @Test func verifyReportsADamagedCommitLogAndRecoverGivesItsCommitsUp() throws {
        let folder = TemporaryFolder()
        let path = folder.url.appendingPathComponent("db.strata").path
        let copy = folder.url.appendingPathComponent("copy.strata").path
        do {
            let engine = try StorageEngine.open(path: path, options: StorageOptions(maximumFileSize: 1 << 30))
            defer { engine.close() }
            try engine.write { try $0.put([0], forKey: [0], in: try $0.createTree(named: "t")) }
            try engine.checkpoint()
            for i in 1...8 as ClosedRange<UInt8> { try engine.write { try $0.put([i], forKey: [i], in: try $0.tree(named: "t")!) } }
            // As a killed process leaves them: copied while the engine is open.
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            var log = try Data(contentsOf: URL(fileURLWithPath: StorageEngine.logPath(for: path)))
            log.replaceSubrange(4096..<8192, with: Data(count: 4096))  // the second record
            try log.write(to: URL(fileURLWithPath: StorageEngine.logPath(for: copy)))
        }
        let verify = try runStrata("verify", copy)
        #expect(verify.status == 2, "\(verify.output) \(verify.errors)")
        #expect(verify.output.contains("copy.strata-log is damaged") && verify.output.contains("at least 7 durable commits"), "\(verify.output)")
        #expect(verify.output.contains("strata recover"), "\(verify.output)")
        let dump = try runStrata("dump", copy)
        #expect(dump.status == 1 && dump.errors.contains("is damaged"), "\(dump.output) \(dump.errors)")

        let recover = try runStrata("recover", copy)
        #expect(recover.status == 0, "\(recover.errors)")
        #expect(recover.output.contains("opened at version 2, giving up 7 later commits"), "\(recover.output)")
        let healthy = try runStrata("verify", copy)
        #expect(healthy.status == 0 && healthy.output.contains("version 2,"), "\(healthy.output) \(healthy.errors)")
        let again = try runStrata("recover", copy)
        #expect(again.status == 0 && again.output.contains("nothing to recover (version 2)"), "\(again.output) \(again.errors)")
    }

    // MARK: Running the tool

    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    @Test func salvageCopiesAHealthyFileAndReportsWhatADamagedOneLost() throws {
        let folder = TemporaryFolder()
        let configuration = DamageLab.configuration(folder)
        try DamageLab.populate(configuration, count: 1_500)
        let path = configuration.fileURL!.path
        let copy = folder.url.appendingPathComponent("copy.strata").path
        let healthy = try runStrata("salvage", path, copy)
        #expect(healthy.status == 0, "\(healthy.errors)")
        #expect(healthy.output.contains("2250 objects copied, 0 lost"), "\(healthy.output)")
        #expect(healthy.output.contains("DamagedRecord: 1500 copied"), "\(healthy.output)")
        let again = try runStrata("salvage", path, copy)
        #expect(again.status == 1 && again.errors.contains("already exists"), "\(again.errors)")

        let clusters = try DamageLab.treeName("DamagedRecord", "c", in: configuration)
        let (pageSize, trees) = try DamageLab.trees(of: path)
        let page = try #require(trees[clusters]?.last)
        try DamageLab.damage(page: page, of: path, pageSize: pageSize)
        let salvaged = folder.url.appendingPathComponent("salvaged.strata").path
        let damaged = try runStrata("salvage", path, salvaged)
        #expect(damaged.status == 2, "\(damaged.errors)")
        #expect(damaged.output.contains("page \(page) of tree '\(clusters)'"), "\(damaged.output)")
        #expect(damaged.output.range(of: #"DamagedRecord: \d+ copied, \d+ lost"#, options: .regularExpression) != nil, "\(damaged.output)")
        #expect(FileManager.default.fileExists(atPath: salvaged))
        let usage = try runStrata("salvage", path)
        #expect(usage.status == 64)
    }

    func runStrata(_ arguments: String...) throws -> Run { try runStrata(arguments) }

    func runStrata(_ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.executable, "the strata executable was not found beside the tests; run swift build first"))
        process.arguments = arguments
        // Files rather than pipes: nothing has to be drained while the tool runs.
        let folder = TemporaryFolder()
        let outputURL = folder.url.appendingPathComponent("stdout")
        let errorsURL = folder.url.appendingPathComponent("stderr")
        try Data().write(to: outputURL)
        try Data().write(to: errorsURL)
        let output = try FileHandle(forWritingTo: outputURL)
        let errors = try FileHandle(forWritingTo: errorsURL)
        defer { try? output.close(); try? errors.close() }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: try String(contentsOf: outputURL, encoding: .utf8),
                   errors: try String(contentsOf: errorsURL, encoding: .utf8))
    }

    /// The `strata` executable built with the tests; STRATA_EXECUTABLE overrides.
    static let executable: String? = locateProductExecutable(named: "strata", override: "STRATA_EXECUTABLE")
}
