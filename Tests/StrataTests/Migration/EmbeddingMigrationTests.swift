// A migration that turns a top-level type into an embedded one: objects nothing links to are
// deleted, objects held by several links or list entries are copied so that each holder has its
// own (deeply), and objects held once stay as they are.

import Foundation
import Testing
@testable import Strata

// Version 0: Place is a top-level type, and Stop (top-level) hangs off it.
final class StopV0: Object {
    override class func className() -> String { "Stop" }
    @Persisted var label = ""
}

final class PlaceV0: Object {
    override class func className() -> String { "Place" }
    @Persisted var city = ""
    @Persisted var stop: StopV0?
}

final class TravellerV0: Object {
    override class func className() -> String { "Traveller" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var home: PlaceV0?
    @Persisted var visited: List<PlaceV0>
}

// Version 1: Place and Stop are embedded.
final class StopV1: EmbeddedObject {
    override class func className() -> String { "Stop" }
    @Persisted var label = ""
}

final class PlaceV1: EmbeddedObject {
    override class func className() -> String { "Place" }
    @Persisted var city = ""
    @Persisted var stop: StopV1?
}

final class TravellerV1: Object {
    override class func className() -> String { "Traveller" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var home: PlaceV1?
    @Persisted var visited: List<PlaceV1>
}

// A self-linked type made embedded: a cycle cannot be split between parents.
final class LoopV0: Object {
    override class func className() -> String { "Loop" }
    @Persisted var name = ""
    @Persisted var next: LoopV0?
}

final class LoopV1: EmbeddedObject {
    override class func className() -> String { "Loop" }
    @Persisted var name = ""
    @Persisted var next: LoopV1?
}

final class LoopHolderV0: Object {
    override class func className() -> String { "LoopHolder" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var loop: LoopV0?
}

final class LoopHolderV1: Object {
    override class func className() -> String { "LoopHolder" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var loop: LoopV1?
}

@Suite struct EmbeddingMigrationTests {
    /// Traveller 1: home Oslo, visited [Oslo, Rome, Rome]; traveller 2: home Rome, visited
    /// [Lima]; Paris is held by nobody. Oslo's stop is "harbour"; Paris's is "tower".
    private func seed(_ folder: TemporaryFolder) throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [TravellerV0.self, PlaceV0.self, StopV0.self]))
        try db.write {
            let oslo = db.create(PlaceV0.self, value: ["city": "Oslo", "stop": ["label": "harbour"]])
            let rome = db.create(PlaceV0.self, value: ["city": "Rome"])
            let lima = db.create(PlaceV0.self, value: ["city": "Lima"])
            db.create(PlaceV0.self, value: ["city": "Paris", "stop": ["label": "tower"]])
            let one = db.create(TravellerV0.self, value: ["id": 1, "home": oslo])
            one.visited.append(objectsIn: [oslo, rome, rome])
            let two = db.create(TravellerV0.self, value: ["id": 2, "home": rome])
            two.visited.append(lima)
        }
    }

    private func migrated(_ folder: TemporaryFolder) throws -> Database {
        var configuration = folder.configuration(objectTypes: [TravellerV1.self, PlaceV1.self, StopV1.self])
        configuration.schemaVersion = 1
        configuration.migrationBlock = { _, _ in }
        return try Database(configuration: configuration)
    }

    @Test func everyHolderGetsItsOwnObjectAndOrphansGo() throws {
        let folder = TemporaryFolder()
        try seed(folder)
        let db = try migrated(folder)
        let one = try #require(db.object(ofType: TravellerV1.self, forPrimaryKey: 1))
        let two = try #require(db.object(ofType: TravellerV1.self, forPrimaryKey: 2))
        #expect(one.home?.city == "Oslo")
        #expect(one.home?.stop?.label == "harbour")
        #expect(one.visited.map(\.city) == ["Oslo", "Rome", "Rome"])
        #expect(one.visited[0].stop?.label == "harbour", "the copy carries a copy of the stop")
        #expect(two.home?.city == "Rome")
        #expect(two.visited.map(\.city) == ["Lima"])
        // Oslo held twice (home, list), Rome three times, Lima once, Paris never: 2 + 3 + 1
        // places; two stops (Oslo's and its copy), Paris's deleted with it.
        #expect(db.dynamicCount("Place") == 6)
        #expect(db.dynamicCount("Stop") == 2)
        // Each holder has its own: changing one copy leaves the others.
        try db.write { one.visited[1].city = "Roma" }
        #expect(one.visited.map(\.city) == ["Oslo", "Roma", "Rome"])
        #expect(two.home?.city == "Rome")
        try db.write { one.home?.stop?.label = "quay" }
        #expect(one.visited[0].stop?.label == "harbour")
        // And the one-parent rule holds from here on: deleting a holder deletes its own.
        try db.write { db.delete(one) }
        #expect(db.dynamicCount("Place") == 2)
        #expect(db.dynamicCount("Stop") == 0)
    }

    @Test func theMigratedFileReopensWithTheSameData() throws {
        let folder = TemporaryFolder()
        try seed(folder)
        _ = try migrated(folder)
        let db = try migrated(folder)
        #expect(db.objects(TravellerV1.self).sorted(byKeyPath: "id").map { $0.visited.map(\.city) } == [["Oslo", "Rome", "Rome"], ["Lima"]])
    }

    @Test func aCycleOfObjectsHeldTwiceIsAClearError() throws {
        let folder = TemporaryFolder()
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [LoopHolderV0.self, LoopV0.self]))
            try db.write {
                let a = db.create(LoopV0.self, value: ["name": "a"])
                let b = db.create(LoopV0.self, value: ["name": "b", "next": a])
                a.next = b
                db.create(LoopHolderV0.self, value: ["id": 1, "loop": a])
            }
        }
        var configuration = folder.configuration(objectTypes: [LoopHolderV1.self, LoopV1.self])
        configuration.schemaVersion = 1
        configuration.migrationBlock = { _, _ in }
        do {
            _ = try Database(configuration: configuration)
            Issue.record("a cycle of objects made embedded must be refused")
        } catch let error as Database.Error {
            #expect(error.message.contains("cycle"), "\(error)")
        }
        // Nothing changed: the old model still opens.
        let db = try Database(configuration: folder.configuration(objectTypes: [LoopHolderV0.self, LoopV0.self]))
        #expect(db.objects(LoopV0.self).count == 2)
    }
}

extension Database {
    /// The number of objects of a type, by name (through the store: embedded types have no
    /// `objects(_:)`).
    func dynamicCount(_ type: String) -> Int {
        (try? core.session.table(named: type)?.count) ?? -1
    }
}
