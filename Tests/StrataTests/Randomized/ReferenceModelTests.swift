// Model-based tests: random operations applied to a database and to an in-memory model
// (ReferenceModel.swift) side by side, with the whole database compared against the model after
// every step, including across closing and reopening the file.
//
// A failure names the seed and the number of steps; run it again with
//     STRATA_MODEL_SEED=<seed> STRATA_MODEL_STEPS=<steps> swift test --filter ReferenceModelTests
// to replay exactly the same operations.

import Foundation
import StrataTestWorkloads
import Testing
@testable import Strata

@Suite struct ReferenceModelTests {
    @Test func randomOperationsMatchAnInMemoryModel() throws {
        let settings = try ModelRunSettings.fromEnvironment()
        // Printed up front as well as in failure messages: a trap in the library ends the
        // process before any issue is reported.
        print("ReferenceModelTests: \(settings.reproduction)")
        let folder = TemporaryFolder()
        // No objectTypes, as `Database()` opens by default: the tables are created by the first
        // write that uses them, which may be one that is rolled back.
        let simulation = try ModelSimulation(seed: settings.seed, configuration: Self.unsynced(folder.configuration()))
        for step in 1...max(settings.steps, 1) {
            let problems = try simulation.runStep(reopening: step % ModelSimulation.reopenInterval == 0)
            if !problems.isEmpty {
                Issue.record(simulation.report(problems, step: step, settings: settings))
                return
            }
        }
    }

    /// Clusters hold 256 objects. Fills four clusters (1,000 objects), empties the second
    /// entirely and thins the others, updates what is left, reopens, then inserts across the
    /// boundaries again.
    @Test func clusterBoundariesSurviveDeletesUpdatesAndReopen() throws {
        let settings = try ModelRunSettings.fromEnvironment()
        let folder = TemporaryFolder()
        let simulation = try ModelSimulation(seed: settings.seed,
                                             configuration: Self.unsynced(folder.configuration(objectTypes: [Record.self, Part.self])),
                                             recordKeys: 0..<1_500, partKeys: 0..<40)
        func check(_ stage: String, also found: [String] = []) -> Bool {
            let problems = found + simulation.mismatches()
            guard problems.isEmpty else {
                Issue.record(simulation.report(problems, step: 0, settings: settings, stage: stage))
                return false
            }
            return true
        }
        func checkKeyOrder(_ stage: String) -> Bool {
            let listed = simulation.database.objects(Record.self).map(\.id)
            guard listed == listed.sorted() else {
                Issue.record("\(stage): objects(Record.self) is not in insertion order: \(brief(listed)) (\(settings.reproduction))")
                return false
            }
            return true
        }

        try simulation.write { db, model in
            for id in 0..<20 { simulation.addPart(id, db, &model) }
        }
        // Four commits of 250, so commits and clusters end at different objects.
        for first in stride(from: 0, to: 1_000, by: 250) {
            try simulation.write { db, model in
                for id in first..<first + 250 { simulation.addRecord(id, db, &model) }
            }
        }
        guard check("after inserting 1,000 records"), checkKeyOrder("after inserting 1,000 records") else { return }

        try simulation.write { db, model in
            let doomed = Array(stride(from: 0, to: 1_000, by: 3))
            db.delete(doomed.map { simulation.record($0, db) })
            for id in doomed { model.deleteRecord(id) }
            // Keys 256..<512 are the second cluster exactly: it ends up empty.
            db.delete(db.objects(Record.self).where { $0.id >= 256 && $0.id < 512 })
            for id in 256..<512 { model.deleteRecord(id) }
        }
        guard check("after deleting every third record and 256..<512") else { return }

        try simulation.write { db, model in
            for id in model.recordOrder {
                simulation.updateRecord(id, db, &model)
                simulation.updateRecord(id, db, &model)
            }
        }
        guard check("after updating the rest") else { return }
        try simulation.write { db, model in
            for id in [0, 7, 13, 19] { simulation.deletePart(id, db, &model) }
        }
        guard check("after deleting linked parts") else { return }
        guard check("after reopening", also: try simulation.reopen()) else { return }

        try simulation.write { db, model in
            for id in 1_000..<1_300 { simulation.addRecord(id, db, &model) }
        }
        guard check("after inserting 300 more"), checkKeyOrder("after inserting 300 more") else { return }

        // Empties the newest cluster, then inserts more in the same transaction.
        try simulation.write { db, model in
            db.delete(db.objects(Record.self).where { $0.id >= 1_050 })
            for id in 1_050..<1_300 { model.deleteRecord(id) }
            for id in 1_300..<1_500 { simulation.addRecord(id, db, &model) }
        }
        guard check("after replacing the newest records"), checkKeyOrder("after replacing the newest records") else { return }
        guard check("after reopening again", also: try simulation.reopen()), checkKeyOrder("after reopening again") else { return }
    }

    /// Commits without fsync: these tests close and reopen in the process and never lose
    /// power, and hundreds of synced commits would be most of their running time.
    private static func unsynced(_ configuration: Database.Configuration) -> Database.Configuration {
        var configuration = configuration
        configuration.durability = .none
        return configuration
    }
}

// MARK: Regressions

/// The bugs the model-based tests found, each reduced to its shortest reproduction.
@Suite struct ReferenceModelRegressionTests {
    @Test func droppingEveryReferenceClosesTheFile() throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration()
        do {
            let db = try Database(configuration: configuration)
            try db.write { db.add(Record(value: ["id": 1])) }
            #expect(db.objects(Record.self).first?.id == 1)
        }
        #expect(!StoreHandle.isOpen(configuration))
    }

    @Test func aRolledBackWriteThatAddedTheTablesLeavesNothingBehind() throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration()
        do {
            let db = try Database(configuration: configuration)
            let kept = Record(value: ["id": 1])
            db.beginWrite()
            db.add(kept)  // adds the Record and Part tables
            db.cancelWrite()
            #expect(kept.isInvalidated)
            try db.write { db.add(Record(value: ["id": 2])) }
            #expect(kept.isInvalidated)
            #expect(db.objects(Record.self).map(\.id) == [2])
        }
        let db = try Database(configuration: configuration)
        #expect(db.objects(Record.self).map(\.id) == [2])
    }

    @Test func resultsMadeBeforeTheTypeHasATableAreLive() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration())
        let all = db.objects(Record.self)
        let red = all.where { $0.category == "red" }
        #expect(all.isEmpty)
        try db.write { db.add(Record(value: ["id": 1, "category": "red"])) }
        #expect(all.count == 1)
        #expect(red.map(\.id) == [1])
    }

    @Test func resultsInsideAWriteSeeValuesWrittenInPlace() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [Record.self, Part.self]))
        try db.write { db.add(Record(value: ["id": 1])) }
        let flagged = db.objects(Record.self).where { $0.flag == true }
        try db.write {
            let record = try #require(db.object(ofType: Record.self, forPrimaryKey: 1))
            record.flag = false  // loads the column into the transaction
            #expect(flagged.isEmpty)
            record.flag = true  // written in place
            #expect(flagged.count == 1)
        }
    }

    @Test func upsertWithUpdateModifiedReplacesLists() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [Record.self, Part.self]))
        try db.write { db.add(Record(value: ["id": 1, "numbers": [1, 2]])) }
        try db.write { db.create(Record.self, value: ["id": 1, "numbers": [3], "name": "x"], update: .modified) }
        let record = try #require(db.object(ofType: Record.self, forPrimaryKey: 1))
        #expect(Array(record.numbers) == [3] && record.name == "x")
    }

    @Test func objectsAddedInARolledBackWriteStayInvalidated() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [Record.self, Part.self]))
        try db.write { db.add(Record(value: ["id": 1])) }
        let kept = Record(value: ["id": 2, "name": "kept"])
        do {
            try db.write {
                db.add(kept)
                throw CancellationError()
            }
        } catch is CancellationError {}
        #expect(kept.isInvalidated)
        // The next object must not get the rolled-back object's key.
        try db.write { db.add(Record(value: ["id": 3, "name": "other"])) }
        #expect(kept.isInvalidated)
    }
}

// MARK: The run's settings

/// A run's seed and number of steps: fixed defaults, or STRATA_MODEL_SEED and
/// STRATA_MODEL_STEPS when set (decimal, or hexadecimal with 0x).
struct ModelRunSettings {
    static let defaultSeed: UInt64 = 0x5EED_0001
    static let defaultSteps = 400

    var seed = defaultSeed
    var steps = defaultSteps

    static func fromEnvironment() throws -> ModelRunSettings {
        let environment = ProcessInfo.processInfo.environment
        var settings = ModelRunSettings()
        if let text = environment["STRATA_MODEL_SEED"] {
            settings.seed = try #require(parse(text), "STRATA_MODEL_SEED must be a UInt64 (decimal or 0x…), not '\(text)'")
        }
        if let text = environment["STRATA_MODEL_STEPS"] {
            settings.steps = try #require(parse(text).flatMap { Int(exactly: $0) }, "STRATA_MODEL_STEPS must be a number, not '\(text)'")
        }
        return settings
    }

    private static func parse(_ text: String) -> UInt64? {
        let text = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "")
        if text.lowercased().hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) }
        return UInt64(text)
    }

    var reproduction: String {
        "STRATA_MODEL_SEED=0x\(String(seed, radix: 16, uppercase: true)) STRATA_MODEL_STEPS=\(steps)"
    }
}

// MARK: The simulation

/// Thrown from write blocks that must roll back.
private struct DeliberateFailure: Error {}

/// One database and the reference model, driven through the same random operations.
final class ModelSimulation {
    static let reopenInterval = 25
    static let typicalPopulation = 30

    /// Values of the indexed property: distinct under Unicode canonical equivalence (the model
    /// compares with Swift's ==, the index compares bytes); one with a NUL, which index keys
    /// escape; and two that share their first 200 bytes, more than the 160 an index key keeps.
    static let categories = ["", "red", "RED", "red ", "grün", "青", "🐙", "a\u{0}b",
                             String(repeating: "long", count: 50) + "A", String(repeating: "long", count: 50) + "B"]
    static let labels = ["bolt", "nut", "gear ⚙️", "", "Zahnrad", "歯車"]
    private static let specialStrings = ["", " ", "a\u{0}b", "héllo wörld", "日本語テキスト", "🎉👩‍👩‍👧‍👦", "Ünïcödé ✓",
                                         String(repeating: "x", count: 300)]
    /// Unicode scalar ranges for random strings: none of their characters decomposes into
    /// another's, so canonical equivalence never makes two different strings equal.
    private static let scalarRanges: [ClosedRange<UInt32>] = [0x20...0x7E, 0xC0...0xFF, 0x391...0x3A1, 0x3B1...0x3C9,
                                                              0x4E00...0x4EFF, 0x1F600...0x1F64F]

    let configuration: Database.Configuration
    let recordKeys: Range<Int>
    let partKeys: Range<Int>
    private(set) var random: SplitMix64
    private(set) var model = ReferenceModel()
    private var openDatabase: Database?
    /// Results made when the database was opened and read after every step: live results must
    /// follow every change, including changes to the objects they hold.
    private var liveResults: [(query: String, results: Results<Record>, expected: (ReferenceModel) -> [Int])] = []
    private var keptFromRollback: (id: Int, record: Record)?
    /// What each step did, for failure messages.
    private var history: [String] = []

    init(seed: UInt64, configuration: Database.Configuration, recordKeys: Range<Int> = 0..<80, partKeys: Range<Int> = 0..<40) throws {
        self.configuration = configuration
        self.recordKeys = recordKeys
        self.partKeys = partKeys
        random = SplitMix64(seed: seed)
        try open()
    }

    var database: Database { openDatabase! }

    // MARK: Opening and closing

    private func open() throws {
        let database = try Database(configuration: configuration)
        openDatabase = database
        let red = Self.categories[1]
        liveResults = [
            ("objects(Record.self)", database.objects(Record.self), { $0.recordOrder }),
            ("$0.category == \(red.debugDescription)", database.objects(Record.self).where { $0.category == red },
             { $0.keys { $0.category == red } }),
            ("$0.flag == true", database.objects(Record.self).where { $0.flag == true }, { $0.keys { $0.flag } }),
        ]
    }

    /// Drops every reference to the database instance and opens it again. Returns a problem
    /// if the file did not close in between (the instance cache holds instances weakly).
    func reopen() throws -> [String] {
        liveResults = []
        keptFromRollback = nil
        openDatabase = nil
        let problems = StoreHandle.isOpen(configuration) ? ["the file stayed open after every reference to its database was dropped"] : []
        try open()
        return problems
    }

    // MARK: Steps

    /// Runs one random step (or a reopen) and returns how the database then differs from the
    /// model.
    func runStep(reopening: Bool) throws -> [String] {
        if reopening {
            history.append("reopen")
            return try reopen() + mismatches()
        }
        let db = database
        var pending = model
        var actions: [String] = []
        var problems: [String] = []
        // Sometimes compare inside the transaction too, after each change: reads there must
        // see the transaction's own changes.
        let checkInside = random.chance(0.06)
        func change() {
            for _ in 0..<random.int(1...4) {
                actions.append(mutate(db, &pending))
                if checkInside { problems += mismatches(pending).map { "inside the transaction: \($0)" } }
            }
        }
        let changes = { actions.joined(separator: "; ") }
        // The first step always rolls back: on a new file it is the write that adds the
        // tables, and it must leave nothing behind.
        switch history.isEmpty ? random.int(62..<82) : random.int(0..<100) {
        case 0..<62:
            try db.write { change() }
            model = pending
            history.append("write { \(changes()) }")
        case 62..<72:
            do {
                try db.write {
                    change()
                    keepRecordAddedIn(pending)
                    throw DeliberateFailure()
                }
                problems.append("write { } returned although its block threw")
            } catch is DeliberateFailure {}
            history.append("write { \(changes()); throw }")
        case 72..<82:
            db.beginWrite()
            change()
            keepRecordAddedIn(pending)
            db.cancelWrite()
            history.append("beginWrite(); \(changes()); cancelWrite()")
        default:
            db.beginWrite()
            change()
            try db.commitWrite()
            model = pending
            history.append("beginWrite(); \(changes()); commitWrite()")
        }
        if db.isInWriteTransaction { problems.append("still in a write transaction after the step") }
        if let (id, record) = keptFromRollback, !record.isInvalidated {
            problems.append("Record \(id), added in a write that was rolled back, is not invalidated")
        }
        return problems + mismatches()
    }

    /// Keeps, until the next rollback or reopen, a record the open transaction added, as an
    /// app may hold on to an object it added in a write that then fails. It must be
    /// invalidated by the rollback and stay so while later writes add other objects.
    private func keepRecordAddedIn(_ pending: ReferenceModel) {
        guard let id = pending.recordOrder.last(where: { model.records[$0] == nil }) else { return }
        keptFromRollback = (id, record(id, database))
    }

    /// Runs `body` in a committed write transaction, then takes the model it changed.
    func write(_ body: (Database, inout ReferenceModel) -> Void) throws {
        let db = database
        var pending = model
        try db.write { body(db, &pending) }
        model = pending
    }

    /// How the database differs from `expected` (by default the committed model), including
    /// the live results made at opening.
    func mismatches(_ expected: ReferenceModel? = nil) -> [String] {
        let expected = expected ?? model
        var problems = expected.mismatches(in: database, recordKeys: recordKeys, partKeys: partKeys,
                                           categories: Self.categories, labels: Self.labels)
        for (query, results, keys) in liveResults {
            let wanted = keys(expected)
            let count = results.count
            let listed = results.map(\.id)
            if count != wanted.count || listed != wanted {
                problems.append("live results of \(query) have count \(count) and list \(brief(listed)), expected \(brief(wanted))")
            }
        }
        return problems
    }

    func report(_ problems: [String], step: Int, settings: ModelRunSettings, stage: String? = nil) -> Comment {
        var lines = [stage.map { "The database disagrees with the model \($0)." }
                     ?? "The database disagrees with the model after step \(step) of \(settings.steps)."]
        lines.append("Reproduce with: \(settings.reproduction) swift test --filter ReferenceModelTests")
        if !history.isEmpty {
            lines.append("Last steps:")
            let first = max(0, history.count - 8)
            for (index, entry) in history[first...].enumerated() { lines.append("  \(step - (history.count - first) + index + 1): \(entry)") }
        }
        lines.append("Differences (\(problems.count)):")
        lines += problems.prefix(20).map { "  " + $0 }
        return Comment(rawValue: lines.joined(separator: "\n"))
    }

    // MARK: Changes

    /// One random change made in the open write transaction and to `pending`; returns what it did.
    private func mutate(_ db: Database, _ pending: inout ReferenceModel) -> String {
        // The population hovers around `typicalPopulation`: every step reads every object
        // (twice), so it sets the run's cost.
        let population = pending.records.count
        let addWeight = population < Self.typicalPopulation / 2 ? 45 : (population > Self.typicalPopulation ? 8 : 28)
        let deleteWeight = population > Self.typicalPopulation ? 30 : 12
        let roll = random.int(0..<100)
        if roll < addWeight || population == 0 {
            return addRecords(db, &pending)
        } else if roll < addWeight + deleteWeight {
            return deleteObjects(db, &pending)
        } else if roll < addWeight + deleteWeight + 16 {
            return upsert(db, &pending)
        } else {
            var done: [String] = []
            for _ in 0..<random.int(1...3) {
                if random.chance(0.15), !pending.partOrder.isEmpty {
                    let id = random.pick(pending.partOrder)
                    let label = random.pick(Self.labels)
                    part(id, db).label = label
                    pending.setLabel(label, ofPart: id)
                    done.append("Part \(id).label = \(label.debugDescription)")
                } else {
                    done.append(updateRecord(random.pick(pending.recordOrder), db, &pending))
                }
            }
            return done.joined(separator: ", ")
        }
    }

    private func addRecords(_ db: Database, _ pending: inout ReferenceModel) -> String {
        var done: [String] = []
        // Sometimes the records are added together, with add(_:) of a sequence.
        let together = random.chance(0.2)
        var batch: [(id: Int, record: Record, value: RecordValue)] = []
        var batchParts: [Int: String] = [:]
        for _ in 0..<random.int(1...4) {
            let taken = batch.map(\.id)
            guard let id = unusedKey(recordKeys, isUsed: { key in pending.records[key] != nil || taken.contains(key) }) else { break }
            if together {
                let value = randomRecordValue(pending, newParts: &batchParts)
                batch.append((id, makeRecord(id, value, db, newParts: batchParts), value))
                continue
            }
            done.append(addRecord(id, db, &pending))
        }
        if together {
            db.add(batch.map(\.record))
            for (id, _, value) in batch {
                register(id, value, names: RecordValue.propertyNames, newParts: batchParts, in: &pending)
            }
            done = ["add([\(batch.map { "Record \($0.id)" }.joined(separator: ", "))])"]
        }
        if random.chance(0.2), let id = unusedKey(partKeys, isUsed: { pending.parts[$0] != nil }) {
            addPart(id, db, &pending)
            done.append("add Part \(id)")
        }
        return done.joined(separator: ", ")
    }

    /// Adds Record `id` with random values: with add(_:), with create(_:value:) from a full or
    /// partial dictionary, or from an unmanaged object made with init(value:).
    @discardableResult
    func addRecord(_ id: Int, _ db: Database, _ pending: inout ReferenceModel) -> String {
        var newParts: [Int: String] = [:]
        let value = randomRecordValue(pending, newParts: &newParts)
        switch random.int(0..<3) {
        case 0:
            db.add(makeRecord(id, value, db, newParts: newParts))
            register(id, value, names: RecordValue.propertyNames, newParts: newParts, in: &pending)
            return "add Record \(id)"
        case 1:
            let names = randomPropertyNames()
            db.create(Record.self, value: dictionary(id, value, names: names, db, newParts: newParts))
            register(id, value, names: names, newParts: newParts, in: &pending)
            return "create Record \(id) from \(describe(names))"
        default:
            let names = randomPropertyNames()
            db.add(Record(value: dictionary(id, value, names: names, db, newParts: newParts)))
            register(id, value, names: names, newParts: newParts, in: &pending)
            return "add Record(value:) \(id) from \(describe(names))"
        }
    }

    /// Records in the model a new Record `id` made from the `names` properties of `value`.
    private func register(_ id: Int, _ value: RecordValue, names: [String], newParts: [Int: String], in pending: inout ReferenceModel) {
        for part in partsCreated(by: value, names: names, newParts: newParts) { pending.insertPart(part, label: newParts[part]!) }
        var stored = RecordValue()
        stored.take(names, from: value)
        pending.insertRecord(id, stored)
    }

    func addPart(_ id: Int, _ db: Database, _ pending: inout ReferenceModel) {
        let label = random.pick(Self.labels)
        if random.chance(0.5) {
            db.add(Part(value: ["id": id, "label": label]))
        } else {
            db.create(Part.self, value: ["id": id, "label": label])
        }
        pending.insertPart(id, label: label)
    }

    /// Changes one random property of Record `id`, in the database and in `pending`.
    @discardableResult
    func updateRecord(_ id: Int, _ db: Database, _ pending: inout ReferenceModel) -> String {
        let record = self.record(id, db)
        func set<T>(_ name: String, _ value: T, _ write: (T) -> Void, _ model: (inout RecordValue, T) -> Void) -> String {
            // One in five scalar updates goes through key-value coding.
            if random.chance(0.2) {
                record[name] = value
            } else {
                write(value)
            }
            pending.updateRecord(id) { model(&$0, value) }
            return "Record \(id).\(name) = \(String(reflecting: value))"
        }
        switch random.int(0..<16) {
        case 0: return set("count", randomInt(), { record.count = $0 }, { $0.count = $1 })
        case 1: return set("name", randomString(), { record.name = $0 }, { $0.name = $1 })
        case 2: return set("score", randomDouble(), { record.score = $0 }, { $0.score = $1 })
        case 3: return set("optionalCount", random.chance(0.3) ? nil : randomInt(), { record.optionalCount = $0 }, { $0.optionalCount = $1 })
        case 4: return set("note", randomNote(), { record.note = $0 }, { $0.note = $1 })
        case 5: return set("flag", random.chance(0.5), { record.flag = $0 }, { $0.flag = $1 })
        case 6: return set("stamp", randomDate(), { record.stamp = $0 }, { $0.stamp = $1 })
        case 7: return set("payload", randomData(), { record.payload = $0 }, { $0.payload = $1 })
        case 8: return set("category", random.pick(Self.categories), { record.category = $0 }, { $0.category = $1 })
        case 9:
            var newParts: [Int: String] = [:]
            let target = random.chance(0.3) ? nil : choosePart(pending, newParts: &newParts)
            record.part = target.map { part($0, db, newParts: newParts) }
            for (id, label) in newParts { pending.insertPart(id, label: label) }
            pending.updateRecord(id) { $0.part = target }
            return "Record \(id).part = \(target.map { "Part \($0)\(newParts.isEmpty ? "" : " (new)")" } ?? "nil")"
        case 10, 11, 12:
            var numbers = pending.records[id]!.numbers
            let description = changeList(record.numbers, &numbers, make: { randomInt() }, element: { $0 })
            pending.updateRecord(id) { $0.numbers = numbers }
            return "Record \(id).numbers.\(description)"
        default:
            var parts = pending.records[id]!.parts
            var newParts: [Int: String] = [:]
            var made: [Int] = []
            let description = changeList(record.parts, &parts, make: {
                let target = choosePart(pending, newParts: &newParts) ?? random.pick(pending.partOrder)
                if newParts[target] != nil && !made.contains(target) { made.append(target) }
                return target
            }, element: { part($0, db, newParts: newParts) })
            for target in made { pending.insertPart(target, label: newParts[target]!) }
            pending.updateRecord(id) { $0.parts = parts }
            return "Record \(id).parts.\(description)"
        }
    }

    /// Applies one random list operation to `list` and to its model `values`.
    private func changeList<Element>(_ list: List<Element>, _ values: inout [Int], make: () -> Int,
                                     element: (Int) -> Element) -> String {
        let operation = values.isEmpty ? random.int(0..<3) : random.int(0..<10)
        switch operation {
        case 0:
            let value = make()
            list.append(element(value))
            values.append(value)
            return "append(\(value))"
        case 1:
            let added = (0..<random.int(0...3)).map { _ in make() }
            list.append(objectsIn: added.map(element))
            values += added
            return "append(objectsIn: \(added))"
        case 2:
            let index = random.int(0...values.count)
            let value = make()
            list.insert(element(value), at: index)
            values.insert(value, at: index)
            return "insert(\(value), at: \(index))"
        case 3:
            let index = random.int(0..<values.count)
            list.remove(at: index)
            values.remove(at: index)
            return "remove(at: \(index))"
        case 4:
            let from = random.int(0..<values.count), to = random.int(0..<values.count)
            list.move(from: from, to: to)
            values.insert(values.remove(at: from), at: to)
            return "move(from: \(from), to: \(to))"
        case 5:
            let i = random.int(0..<values.count), j = random.int(0..<values.count)
            list.swapAt(i, j)
            values.swapAt(i, j)
            return "swapAt(\(i), \(j))"
        case 6:
            let index = random.int(0..<values.count)
            let value = make()
            list[index] = element(value)
            values[index] = value
            return "[\(index)] = \(value)"
        case 7:
            list.removeLast()
            values.removeLast()
            return "removeLast()"
        case 8:
            list.removeFirst()
            values.removeFirst()
            return "removeFirst()"
        default:
            list.removeAll()
            values.removeAll()
            return "removeAll()"
        }
    }

    /// add(_:update:) or create(_:value:update:) with a primary key that usually exists.
    private func upsert(_ db: Database, _ pending: inout ReferenceModel) -> String {
        if random.chance(0.15) {
            let id = random.int(partKeys)
            let label = random.pick(Self.labels)
            db.create(Part.self, value: ["id": id, "label": label], update: random.chance(0.5) ? .all : .modified)
            if pending.parts[id] != nil { pending.setLabel(label, ofPart: id) } else { pending.insertPart(id, label: label) }
            return "create Part \(id) (update) with label \(label.debugDescription)"
        }
        let existing = random.chance(0.8)
        guard let id = existing ? random.pick(pending.recordOrder)
                                : unusedKey(recordKeys, isUsed: { pending.records[$0] != nil }) else { return "nothing to upsert" }
        let policy: Database.UpdatePolicy = random.chance(0.5) ? .all : .modified
        var newParts: [Int: String] = [:]
        let value = randomRecordValue(pending, newParts: &newParts)
        let names: [String]
        let how: String
        if random.chance(0.5) {
            names = RecordValue.propertyNames
            db.add(makeRecord(id, value, db, newParts: newParts), update: policy)
            how = "add(Record \(id), update: .\(policy))"
        } else {
            names = randomPropertyNames()
            db.create(Record.self, value: dictionary(id, value, names: names, db, newParts: newParts), update: policy)
            how = "create(Record \(id) from \(describe(names)), update: .\(policy))"
        }
        if pending.records[id] != nil {
            for part in partsCreated(by: value, names: names, newParts: newParts) { pending.insertPart(part, label: newParts[part]!) }
            pending.updateRecord(id) { $0.take(names, from: value) }
            return how + " on an existing record"
        }
        register(id, value, names: names, newParts: newParts, in: &pending)
        return how + " on a new key"
    }

    private func deleteObjects(_ db: Database, _ pending: inout ReferenceModel) -> String {
        switch random.int(0..<20) {
        case 0..<9:
            let ids = (0..<random.int(1...3)).map { _ in random.pick(pending.recordOrder) }
            let unique = ids.reduce(into: [Int]()) { if !$0.contains($1) { $0.append($1) } }
            if unique.count == 1 && random.chance(0.5) {
                db.delete(record(unique[0], db))
            } else {
                db.delete(unique.map { record($0, db) })
            }
            for id in unique { pending.deleteRecord(id) }
            return "delete Records \(unique)"
        case 9..<16:
            guard !pending.partOrder.isEmpty else { return "no part to delete" }
            let ids = (0..<random.int(1...2)).map { _ in random.pick(pending.partOrder) }
            let unique = ids.reduce(into: [Int]()) { if !$0.contains($1) { $0.append($1) } }
            db.delete(unique.map { part($0, db) })
            for id in unique { pending.deletePart(id) }
            return "delete Parts \(unique) (linked from \(pending.recordOrder.count) records)"
        case 16..<19:
            let category = random.pick(Self.categories)
            db.delete(db.objects(Record.self).where { $0.category == category })
            for id in pending.keys(where: { $0.category == category }) { pending.deleteRecord(id) }
            return "delete where { $0.category == \(category.debugDescription) }"
        default:
            if random.chance(0.1) {
                db.deleteAll()
                pending.removeAll()
                return "deleteAll()"
            }
            db.delete(db.objects(Record.self).where { $0.flag == true && $0.count < 0 })
            for id in pending.keys(where: { $0.flag && $0.count < 0 }) { pending.deleteRecord(id) }
            return "delete where { $0.flag == true && $0.count < 0 }"
        }
    }

    func deletePart(_ id: Int, _ db: Database, _ pending: inout ReferenceModel) {
        db.delete(part(id, db))
        pending.deletePart(id)
    }

    // MARK: Objects and inputs

    /// The managed record with this primary key, which the model says exists.
    func record(_ id: Int, _ db: Database) -> Record {
        guard let record = db.object(ofType: Record.self, forPrimaryKey: id) else {
            preconditionFailure("Record \(id) is in the model but not in the database (\(history.suffix(3)))")
        }
        return record
    }

    /// The managed part with this primary key, or a new unmanaged one when `newParts` names it.
    private func part(_ id: Int, _ db: Database, newParts: [Int: String] = [:]) -> Part {
        if let label = newParts[id] { return Part(value: ["id": id, "label": label]) }
        guard let part = db.object(ofType: Part.self, forPrimaryKey: id) else {
            preconditionFailure("Part \(id) is in the model but not in the database (\(history.suffix(3)))")
        }
        return part
    }

    /// An unmanaged record holding `value`.
    private func makeRecord(_ id: Int, _ value: RecordValue, _ db: Database, newParts: [Int: String]) -> Record {
        let record = Record()
        record.id = id
        record.count = value.count
        record.name = value.name
        record.score = value.score
        record.optionalCount = value.optionalCount
        record.note = value.note
        record.flag = value.flag
        record.stamp = value.stamp
        record.payload = value.payload
        record.category = value.category
        record.part = value.part.map { part($0, db, newParts: newParts) }
        record.numbers.append(objectsIn: value.numbers)
        record.parts.append(objectsIn: value.parts.map { part($0, db, newParts: newParts) })
        return record
    }

    /// The input of create(_:value:) or init(value:) for the `names` properties of `value`:
    /// nil as NSNull or as a nil Optional, new parts as dictionaries, existing ones as objects.
    private func dictionary(_ id: Int, _ value: RecordValue, names: [String], _ db: Database, newParts: [Int: String]) -> [String: Any] {
        func none() -> Any { random.chance(0.5) ? NSNull() : Int?.none as Any }
        func partInput(_ id: Int) -> Any {
            if let label = newParts[id] { return ["id": id, "label": label] as [String: Any] }
            return part(id, db)
        }
        var input: [String: Any] = ["id": id]
        for name in names {
            let item: Any
            switch name {
            case "count": item = value.count
            case "name": item = value.name
            case "score": item = value.score
            case "optionalCount": item = value.optionalCount.map { $0 as Any } ?? none()
            case "note": item = value.note.map { $0 as Any } ?? none()
            case "flag": item = value.flag
            case "stamp": item = value.stamp
            case "payload": item = value.payload
            case "category": item = value.category
            case "part": item = value.part.map(partInput) ?? none()
            case "numbers": item = value.numbers
            case "parts": item = value.parts.map(partInput)
            default: preconditionFailure("Record has no property '\(name)'")
            }
            input[name] = item
        }
        return input
    }

    /// The new parts adding the `names` properties of `value` creates, in the order the
    /// database adds them (the link, then the list's elements).
    private func partsCreated(by value: RecordValue, names: [String], newParts: [Int: String]) -> [Int] {
        var created: [Int] = []
        if names.contains("part"), let part = value.part, newParts[part] != nil { created.append(part) }
        if names.contains("parts") {
            for part in value.parts where newParts[part] != nil && !created.contains(part) { created.append(part) }
        }
        return created
    }

    /// All properties half the time, otherwise a random subset, in declaration order.
    private func randomPropertyNames() -> [String] {
        random.chance(0.5) ? RecordValue.propertyNames : RecordValue.propertyNames.filter { _ in random.chance(0.5) }
    }

    private func describe(_ names: [String]) -> String {
        names == RecordValue.propertyNames ? "a full dictionary" : "a dictionary of \(names)"
    }

    // MARK: Random values

    /// A key in `keys` that `isUsed` rejects, or nil when all are used. Draws at random, then
    /// scans, so that the choice depends only on the generator.
    private func unusedKey(_ keys: Range<Int>, isUsed: (Int) -> Bool) -> Int? {
        for _ in 0..<16 {
            let key = random.int(keys)
            if !isUsed(key) { return key }
        }
        return keys.first { !isUsed($0) }
    }

    /// An existing part (usually) or a new one, recorded in `newParts`; nil when there is
    /// neither.
    private func choosePart(_ pending: ReferenceModel, newParts: inout [Int: String]) -> Int? {
        if !pending.partOrder.isEmpty && random.chance(0.7) { return random.pick(pending.partOrder) }
        guard let id = unusedKey(partKeys, isUsed: { pending.parts[$0] != nil || newParts[$0] != nil }) else {
            return pending.partOrder.isEmpty ? nil : random.pick(pending.partOrder)
        }
        newParts[id] = random.pick(Self.labels)
        return id
    }

    private func randomRecordValue(_ pending: ReferenceModel, newParts: inout [Int: String]) -> RecordValue {
        var value = RecordValue()
        value.count = randomInt()
        value.name = randomString()
        value.score = randomDouble()
        value.optionalCount = random.chance(0.3) ? nil : randomInt()
        value.note = randomNote()
        value.flag = random.chance(0.5)
        value.stamp = randomDate()
        value.payload = randomData()
        value.category = random.pick(Self.categories)
        value.part = random.chance(0.4) ? nil : choosePart(pending, newParts: &newParts)
        value.numbers = (0..<random.int(0...4)).map { _ in randomInt() }
        value.parts = (0..<random.int(0...3)).compactMap { _ in choosePart(pending, newParts: &newParts) }
        return value
    }

    private func randomInt() -> Int {
        switch random.int(0..<10) {
        case 0: random.pick([0, 1, -1, Int.max, Int.min])
        case 1: Int(truncatingIfNeeded: random.next())
        default: random.int(-1_000...1_000)
        }
    }

    private func randomDouble() -> Double {
        if random.chance(0.3) {
            // Not -0.0: update: .modified compares values, and -0.0 == 0.0.
            return random.pick([0, 1.5, -2.25, .pi, .infinity, -.infinity, .nan, .greatestFiniteMagnitude, .leastNonzeroMagnitude])
        }
        return Double(random.int(-1_000_000...1_000_000)) / 64
    }

    private func randomDate() -> Date {
        if random.chance(0.15) { return random.pick([Date.distantPast, .distantFuture, Date(timeIntervalSince1970: 0)]) }
        return Date(timeIntervalSinceReferenceDate: Double(random.int(-2_000_000_000...2_000_000_000)) + Double(random.int(0..<4)) / 4)
    }

    private func randomData() -> Data {
        switch random.int(0..<20) {
        case 0..<4: Data()
        case 4: Data((0..<3_000).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        default: Data((0..<random.int(1...40)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
    }

    private func randomString() -> String {
        if random.chance(0.2) { return random.pick(Self.specialStrings) }
        var scalars = String.UnicodeScalarView()
        for _ in 0..<random.int(0...12) {
            let range = random.pick(Self.scalarRanges)
            scalars.append(Unicode.Scalar(UInt32.random(in: range, using: &random))!)
        }
        return String(scalars)
    }

    private func randomNote() -> String? {
        switch random.int(0..<10) {
        case 0..<3: nil
        case 3: ""
        default: randomString()
        }
    }
}
