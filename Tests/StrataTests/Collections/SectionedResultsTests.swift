// SectionedResults: results grouped by a key path or a key block, live, frozen and thawed, and
// their notifications (index paths, sections that appear and disappear).

import Foundation
import Testing
@testable import Strata

final class Gadget: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var kind = ""
    @Persisted var price = 0
}

@Suite struct SectionedResultsTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Gadget.self]) }

    private func populated() throws -> Database {
        let db = try Database(configuration: configuration)
        try db.write {
            for (id, name, kind, price) in [(1, "lamp", "light", 30), (2, "drill", "tool", 80), (3, "torch", "light", 12),
                                            (4, "saw", "tool", 25), (5, "fan", "air", 40)] {
                db.create(Gadget.self, value: ["id": id, "name": name, "kind": kind, "price": price])
            }
        }
        return db
    }

    private func contents(_ sections: SectionedResults<String, Gadget>) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: sections.map { ($0.key, $0.map(\.name)) })
    }

    @Test func sectionsByAKeyPathFollowTheSortAndStayLive() throws {
        let db = try populated()
        let byKind = db.objects(Gadget.self).sectioned(by: \.kind)
        #expect(byKind.allKeys == ["air", "light", "tool"])
        #expect(byKind.count == 3)
        #expect(byKind[1].map(\.name).sorted() == ["lamp", "torch"])
        #expect(byKind[1].key == "light" && byKind[1].id == "light" && byKind[1].count == 2)
        #expect(byKind[IndexPath(indexes: [0, 0])].name == "fan")
        let descending = db.objects(Gadget.self).sectioned(by: \.kind, ascending: false)
        #expect(descending.allKeys == ["tool", "light", "air"])
        // Live: a new kind makes a section; an emptied section goes (and a section read
        // before shows its objects now).
        let air = byKind[0]
        try db.write {
            db.create(Gadget.self, value: ["id": 6, "name": "kettle", "kind": "kitchen", "price": 20])
            db.delete(db.objects(Gadget.self).where { $0.kind == "air" })
        }
        #expect(byKind.allKeys == ["kitchen", "light", "tool"])
        #expect(air.isEmpty)
        #expect(byKind[0].map(\.name) == ["kettle"])
    }

    @Test func sectionsByABlockUseTheGivenSort() throws {
        let db = try populated()
        let byInitial = db.objects(Gadget.self).sectioned(by: { String($0.name.prefix(1)) },
                                                          sortDescriptors: [SortDescriptor(keyPath: "name")])
        #expect(byInitial.allKeys == ["d", "f", "l", "s", "t"])
        // A sort that does not keep keys together: a key seen before takes its section.
        let byKindInPriceOrder = db.objects(Gadget.self).sectioned(by: { $0.kind }, sortDescriptors: [SortDescriptor(keyPath: "price")])
        #expect(byKindInPriceOrder.allKeys == ["light", "tool", "air"])
        #expect(contents(byKindInPriceOrder) == ["light": ["torch", "lamp"], "tool": ["saw", "drill"], "air": ["fan"]])
    }

    @Test func frozenSectionsKeepTheirVersionAndThaw() throws {
        let db = try populated()
        let live = db.objects(Gadget.self).sectioned(by: \.kind)
        let frozen = live.freeze()
        #expect(frozen.isFrozen && !live.isFrozen)
        try db.write { db.create(Gadget.self, value: ["id": 7, "name": "heater", "kind": "air", "price": 90]) }
        #expect(frozen[0].map(\.name) == ["fan"])
        #expect(live[0].map(\.name).sorted() == ["fan", "heater"])
        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen && thawed[0].count == 2)
    }

    @Test func notificationsReportIndexPathsAndSections() throws {
        let db = try populated()
        let byKind = db.objects(Gadget.self).sectioned(by: \.kind)
        typealias Update = (deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath], sectionsToInsert: IndexSet, sectionsToDelete: IndexSet)
        var initial = 0
        var updates: [Update] = []
        let token = byKind.observe { change in
            switch change {
            case .initial(let sections): initial = sections.count
            case .update(_, let deletions, let insertions, let modifications, let sectionsToInsert, let sectionsToDelete):
                updates.append((deletions, insertions, modifications, sectionsToInsert, sectionsToDelete))
            }
        }
        defer { token.invalidate() }
        #expect(initial == 3)
        // air: fan | light: lamp, torch | tool: drill, saw (key order within a section).
        // A new object in an existing section.
        try db.write { db.create(Gadget.self, value: ["id": 8, "name": "bulb", "kind": "light", "price": 3]) }
        // A new section, and the last object of another leaving.
        try db.write {
            db.create(Gadget.self, value: ["id": 9, "name": "pan", "kind": "kitchen", "price": 15])
            db.delete(try #require(db.object(ofType: Gadget.self, forPrimaryKey: 5)))
        }
        // A change in place, and an object moving to another section.
        try db.write {
            try #require(db.object(ofType: Gadget.self, forPrimaryKey: 2)).price = 85
            try #require(db.object(ofType: Gadget.self, forPrimaryKey: 1)).kind = "tool"
        }
        #expect(updates.count == 3)
        guard updates.count == 3 else { return }
        #expect(updates[0].insertions == [IndexPath(indexes: [1, 2])] && updates[0].deletions.isEmpty)
        #expect(updates[0].sectionsToInsert.isEmpty && updates[0].sectionsToDelete.isEmpty)
        // Old sections: air, light, tool; new: kitchen, light, tool.
        #expect(updates[1].sectionsToDelete == IndexSet([0]) && updates[1].sectionsToInsert == IndexSet([0]))
        #expect(updates[1].insertions.isEmpty && updates[1].deletions.isEmpty)
        // light: lamp, torch, bulb -> torch, bulb; tool: drill, saw -> lamp, drill, saw.
        #expect(updates[2].deletions == [IndexPath(indexes: [1, 0])])
        #expect(updates[2].insertions == [IndexPath(indexes: [2, 0])])
        #expect(updates[2].modifications == [IndexPath(indexes: [2, 1])])
        #expect(byKind[2].map(\.name) == ["lamp", "drill", "saw"])
    }
}

/// Owns a database of gadgets on its actor, writes to it, and observes its sections on
/// another actor.
actor GadgetKeeper {
    var db: Database!

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func create(id: Int, name: String, kind: String) throws {
        try db.write { db.create(Gadget.self, value: ["id": id, "name": name, "kind": kind]) }
    }

    func rekind(id: Int, _ kind: String) throws {
        try db.write { db.object(ofType: Gadget.self, forPrimaryKey: id)?.kind = kind }
    }

    func observeSections(on watcher: GadgetWatcher) async -> NotificationToken {
        await db.objects(Gadget.self).sectioned(by: \.kind).observe(on: watcher) { watcher, change in
            switch change {
            case .initial(let sections):
                watcher.record(sections, "initial")
            case .update(let sections, _, let insertions, _, let sectionsToInsert, _):
                watcher.record(sections, "update +\(insertions.map { [$0[0], $0[1]] }) sections+\(Array(sectionsToInsert))")
            }
        }
    }
}

/// Receives section notifications on its own actor and instance.
actor GadgetWatcher {
    var db: Database!
    var log: [String] = []
    var foreignInstances = 0

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func record(_ sections: SectionedResults<String, Gadget>, _ what: String) {
        if sections.database.core !== db.core { foreignInstances += 1 }
        log.append("\(what) \(sections.map { "\($0.key):\($0.map(\.name).joined(separator: ","))" })")
    }

    func refresh() { db.refresh() }
}

@Suite struct SectionedResultsOnActorsTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Gadget.self]) }

    @Test func sectionsObservedOnAnotherActorArriveThereInItsInstance() async throws {
        let keeper = try await GadgetKeeper(configuration)
        let watcher = try await GadgetWatcher(configuration)
        try await keeper.create(id: 1, name: "lamp", kind: "light")
        try await keeper.create(id: 2, name: "saw", kind: "tool")
        let token = await keeper.observeSections(on: watcher)
        // Registration is complete when observe returns: the initial sections are there.
        #expect(await watcher.log == [#"initial ["light:lamp", "tool:saw"]"#])
        try await keeper.create(id: 3, name: "fan", kind: "air")
        // Delivered when the watcher's instance moves to the new version: on its own
        // (autorefresh) or at this refresh, whichever is first.
        await watcher.refresh()
        #expect(await watcher.log.last == #"update +[] sections+[0] ["air:fan", "light:lamp", "tool:saw"]"#)
        try await keeper.rekind(id: 1, "tool")
        await watcher.refresh()
        #expect(await watcher.log.last == #"update +[[1, 0]] sections+[] ["air:fan", "tool:lamp,saw"]"#)
        #expect(await watcher.foreignInstances == 0)
        let count = await watcher.log.count
        token.invalidate()
        try await keeper.create(id: 4, name: "pan", kind: "kitchen")
        await watcher.refresh()
        #expect(await watcher.log.count == count)
    }
}
