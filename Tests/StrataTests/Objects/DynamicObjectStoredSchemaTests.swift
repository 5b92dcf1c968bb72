// A file read through the types it stores rather than the classes the process registers: a
// file written with two classes, opened with only one of them, lists both in its schema and
// reads the other's objects dynamically, their links as the typed class where this instance
// knows it and as dynamic objects where not, their lists and sets as live collections of
// dynamic objects; and writes through them reach the typed objects.

import Foundation
import Testing
@testable import Strata

/// A class both configurations register.
final class PenKeeper: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
}

/// A class only the first configuration registers: it links to the registered class and to
/// itself, through links, a list and a set.
final class Pen: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var label = ""
    @Persisted var keeper: PenKeeper?
    @Persisted var neighbour: Pen?
    @Persisted var keepers: List<PenKeeper>
    @Persisted var nearby: MutableSet<Pen>
    @Persisted var sizes: List<Int>
}

@Suite struct DynamicObjectStoredSchemaTests {
    let folder = TemporaryFolder()

    /// Writes two keepers and two pens with both classes registered, then closes the file.
    func writeWithBothClasses() throws {
        let database = try Database(configuration: folder.configuration(objectTypes: [PenKeeper.self, Pen.self]))
        try database.write {
            let ann = database.create(PenKeeper.self, value: ["id": 1, "name": "Ann"])
            let bob = database.create(PenKeeper.self, value: ["id": 2, "name": "Bob"])
            let east = database.create(Pen.self, value: ["id": 1, "label": "East", "keeper": ann, "keepers": [ann, bob], "sizes": [3, 4]])
            let west = database.create(Pen.self, value: ["id": 2, "label": "West", "keeper": bob, "neighbour": east])
            west.nearby.insert(east)
            east.neighbour = west
        }
    }

    /// The file opened with only `PenKeeper` registered.
    func openWithKeeperOnly() throws -> Database {
        try writeWithBothClasses()
        return try Database(configuration: folder.configuration(objectTypes: [PenKeeper.self]))
    }

    @Test func theSchemaListsEveryStoredTypeNotOnlyTheRegisteredOnes() throws {
        let database = try openWithKeeperOnly()
        let names = Set(database.schema.objectSchemas.map(\.name))
        #expect(names == ["PenKeeper", "Pen"])
        let pen = try #require(database.schema["Pen"])
        #expect(pen.properties.first { $0.name == "keepers" }?.objectType == "PenKeeper")
        #expect(pen.properties.first { $0.name == "nearby" }?.objectType == "Pen")
    }

    @Test func linksReadAsTheRegisteredClassElseAsDynamicObjects() throws {
        let database = try openWithKeeperOnly()
        let pens = database.dynamicObjects("Pen").sorted(byKeyPath: "id")
        #expect(pens.count == 2)
        let east = try #require(pens.first)
        // PenKeeper is registered: the link reads as the typed class.
        let keeper = try #require(east["keeper"] as? PenKeeper)
        #expect(keeper.name == "Ann")
        // Pen is not registered by this configuration: a dynamic object of the stored type.
        let neighbour = try #require(east["neighbour"] as? DynamicObject)
        #expect(neighbour.typeName == "Pen" && neighbour["label"] as? String == "West")
        #expect((neighbour["neighbour"] as? DynamicObject)?.isSameObject(as: east) == true)
    }

    @Test func listsAndSetsOfObjectsReadAsLiveCollectionsOfDynamicObjects() throws {
        let database = try openWithKeeperOnly()
        let east = try #require(database.dynamicObject(ofType: "Pen", forPrimaryKey: 1))
        let west = try #require(database.dynamicObject(ofType: "Pen", forPrimaryKey: 2))
        let keepers = try #require(east["keepers"] as? List<DynamicObject>)
        #expect(keepers.map { $0["name"] as? String } == ["Ann", "Bob"])
        #expect(keepers.allSatisfy { $0.typeName == "PenKeeper" })
        #expect(keepers.filter("name == 'Bob'").count == 1)
        let nearby = try #require(west["nearby"] as? MutableSet<DynamicObject>)
        #expect(nearby.count == 1 && nearby.first?.isSameObject(as: east) == true)
        #expect(nearby.contains(east) && !nearby.contains(west))
        let keeperWithEastsKey = try #require(database.dynamicObjects("PenKeeper").first { $0._slot.key == east._slot.key })
        #expect(!nearby.contains(keeperWithEastsKey), "an object of another type is not a member, whatever its key")
        // A list of values still reads as an array of them.
        #expect((east["sizes"] as? [Any?])?.compactMap { $0 as? Int } == [3, 4])
        // Live: a change committed after the list was read shows in it.
        try database.write { database.dynamicCreate("PenKeeper", value: ["id": 3, "name": "Cy"]) }
        try database.write { keepers.append(try #require(database.dynamicObject(ofType: "PenKeeper", forPrimaryKey: 3))) }
        #expect(keepers.count == 3 && keepers.last?["name"] as? String == "Cy")
    }

    @Test func dynamicWritesCreateAndUpdateObjectsOfAnUnregisteredType() throws {
        let database = try openWithKeeperOnly()
        let ann = try #require(database.object(ofType: PenKeeper.self, forPrimaryKey: 1))
        try database.write {
            let north = database.dynamicCreate("Pen", value: ["id": 3, "label": "North", "keeper": ann, "sizes": [7]])
            north["neighbour"] = database.dynamicObject(ofType: "Pen", forPrimaryKey: 1)
            north.dynamicList("keepers").append(try #require(database.dynamicObject(ofType: "PenKeeper", forPrimaryKey: 2)))
            north.dynamicMutableSet("nearby").insert(try #require(database.dynamicObject(ofType: "Pen", forPrimaryKey: 2)))
            database.dynamicCreate("Pen", value: ["id": 1, "label": "East, renamed"], update: .modified)
        }
        // Read back through the typed classes.
        let typed = try Database(configuration: folder.configuration("test.strata", objectTypes: [PenKeeper.self, Pen.self]))
        let north = try #require(typed.object(ofType: Pen.self, forPrimaryKey: 3))
        #expect(north.label == "North" && north.keeper?.name == "Ann" && north.neighbour?.id == 1)
        #expect(north.keepers.map(\.name) == ["Bob"] && north.nearby.map(\.id) == [2] && Array(north.sizes) == [7])
        #expect(typed.object(ofType: Pen.self, forPrimaryKey: 1)?.label == "East, renamed")
        #expect(typed.object(ofType: Pen.self, forPrimaryKey: 1)?.keepers.count == 2, ".modified leaves what it is not given")
    }

    @Test func aTypedObjectsListReadsDynamicallyByName() throws {
        try writeWithBothClasses()
        let database = try Database(configuration: folder.configuration(objectTypes: [PenKeeper.self, Pen.self]))
        let east = try #require(database.object(ofType: Pen.self, forPrimaryKey: 1))
        let keepers = east.dynamicList("keepers")
        #expect(keepers.map { $0.typeName } == ["PenKeeper", "PenKeeper"])
        #expect(keepers.map { $0["name"] as? String } == ["Ann", "Bob"])
        let west = try #require(database.object(ofType: Pen.self, forPrimaryKey: 2))
        #expect(west.dynamicMutableSet("nearby").map { $0["label"] as? String } == ["East"])
        try database.write { keepers.remove(at: 0) }
        #expect(east.keepers.map(\.name) == ["Bob"], "the dynamic list is the typed list's storage")
    }
}
