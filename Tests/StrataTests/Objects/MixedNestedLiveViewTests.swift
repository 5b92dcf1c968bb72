// Lists and dictionaries nested in a MixedValue, read from a managed object, are live views of
// their place in the property: they see later writes (this instance's and others'), are
// invalidated when the place no longer holds them, can be observed and frozen on their own;
// collections nested in elements of a List<MixedValue> and values of a Map<String, MixedValue>
// behave the same. A seeded randomized run compares them with a plain Swift model.

import Foundation
import Testing
@testable import Strata
import StrataStore

@Suite struct MixedNestedLiveViewTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Setting.self, Appliance.self]) }

    private func setting(value: MixedValue) throws -> (Database, Setting) {
        let db = try Database(configuration: configuration)
        let setting = try db.write { db.create(Setting.self, value: ["id": 1, "value": value]) }
        return (db, setting)
    }

    /// Runs `body` on another thread with its own instance of the file, and waits for it.
    private func onAnotherThread(_ body: @escaping @Sendable (Database) throws -> Void) {
        let configuration = configuration
        let done = DispatchSemaphore(value: 0)
        Thread {
            if let other = try? Database(configuration: configuration) { try? body(other) }
            done.signal()
        }.start()
        done.wait()
    }

    @Test func aNestedListSeesWritesOfThisInstanceMadeThroughTheProperty() throws {
        let (db, setting) = try setting(value: .fromArray([.int(1), .fromDictionary(["k": .int(2)])]))
        let list = try #require(setting.value.listValue)
        let inner = try #require(list[1].dictionaryValue)
        try db.write { setting.value = .fromArray([.string("a"), .fromDictionary(["k": .int(3), "l": .none])]) }
        #expect(Array(list) == [.string("a"), .fromDictionary(["k": .int(3), "l": .none])])
        #expect(inner.keys == ["k", "l"] && inner["k"] == .int(3))
        #expect(!list.isInvalidated && !inner.isInvalidated)
    }

    @Test func aNestedCollectionSeesAnotherThreadsCommitAfterRefresh() throws {
        let (db, setting) = try setting(value: .fromDictionary(["list": .fromArray([.int(1)])]))
        let inner = try #require(setting.value.dictionaryValue?["list"]?.listValue)
        onAnotherThread { other in
            guard let setting = other.object(ofType: Setting.self, forPrimaryKey: 1) else { return }
            try other.write { setting.value.dictionaryValue?["list"]?.listValue?.append(.string("elsewhere")) }
        }
        #expect(Array(inner) == [.int(1)])
        db.refresh()
        #expect(Array(inner) == [.int(1), .string("elsewhere")])
    }

    @Test func twoViewsOfOnePlaceSeeEachOthersChanges() throws {
        let (db, setting) = try setting(value: .fromArray([.fromArray([])]))
        let first = try #require(setting.value.listValue?[0].listValue)
        let second = try #require(setting.value.listValue?[0].listValue)
        try db.write {
            first.append(.int(1))
            second.append(.int(2))
            first.insert(.int(0), at: 0)
        }
        #expect(Array(second) == [.int(0), .int(1), .int(2)])
        #expect(setting.value == .fromArray([.fromArray([.int(0), .int(1), .int(2)])]))
    }

    @Test func aViewIsInvalidatedWhenItsPlaceNoLongerHoldsACollectionOfItsKind() throws {
        let (db, setting) = try setting(value: .fromArray([.fromDictionary(["a": .fromArray([])]), .int(1)]))
        let outer = try #require(setting.value.listValue)
        let dictionary = try #require(outer[0].dictionaryValue)
        let deepest = try #require(dictionary["a"]?.listValue)
        try db.write { dictionary.removeObject(for: "a") }
        #expect(deepest.isInvalidated && !dictionary.isInvalidated)
        try db.write { outer[0] = .fromArray([]) }  // a list where the dictionary was
        #expect(dictionary.isInvalidated && !outer.isInvalidated)
        #expect(dictionary.description == "Map<string, mixed> (invalidated)")
        try db.write { setting.value = .string("no collection") }
        #expect(outer.isInvalidated)
        #expect(outer.description == "List<mixed> (invalidated)")
        // A collection at the place again makes the view valid again (it names the place).
        try db.write { setting.value = .fromArray([.int(7)]) }
        #expect(!outer.isInvalidated && Array(outer) == [.int(7)])
        try db.write { db.delete(setting) }
        #expect(outer.isInvalidated)
    }

    @Test func aViewFollowsItsElementThroughThisInstancesInsertionsRemovalsAndMoves() throws {
        let (db, setting) = try setting(value: .fromArray([.int(0), .fromArray([.string("mine")]), .fromArray([.string("other")])]))
        let outer = try #require(setting.value.listValue)
        let mine = try #require(outer[1].listValue)
        try db.write { outer.insert(.int(-1), at: 0) }
        #expect(Array(mine) == [.string("mine")])
        try db.write { outer.move(from: 2, to: 3) }
        #expect(Array(mine) == [.string("mine")])
        try db.write { outer.swapAt(0, 3) }
        try db.write { mine.append(.int(1)) }
        #expect(outer[0] == .fromArray([.string("mine"), .int(1)]))
        try db.write { setting.history.append(objectsIn: [.fromArray([.int(1)]), .fromDictionary(["k": .int(2)])]) }
        let inHistory = try #require(setting.history[1].dictionaryValue)
        try db.write { setting.history.insert(.none, at: 0) }
        #expect(inHistory["k"] == .int(2))
        // Removing its element invalidates the view for good, even with a list of its kind there.
        try db.write { outer.remove(at: 0) }
        try db.write { outer.insert(.fromArray([]), at: 0) }
        #expect(mine.isInvalidated)
        try db.write { setting.history.remove(at: 2) }
        #expect(inHistory.isInvalidated)
    }

    @Test func collectionsNestedInElementsOfAMixedListAndValuesOfAMixedMapAreLive() throws {
        let (db, setting) = try setting(value: .none)
        try db.write {
            setting.history.append(.int(0))
            setting.history.append(.fromArray([.int(1)]))
            setting.extras["d"] = .fromDictionary(["x": .fromArray([])])
        }
        let fromSubscript = try #require(setting.history[1].listValue)
        let fromIteration = try #require(Array(setting.history)[1].listValue)
        let fromMap = try #require(setting.extras["d"]?.dictionaryValue?["x"]?.listValue)
        let fromValues = try #require(setting.extras.values.first?.dictionaryValue)
        try db.write {
            fromSubscript.append(.int(2))
            fromIteration.append(.int(3))
            fromMap.append(.string("m"))
            fromValues["y"] = .bool(true)
        }
        #expect(setting.history[1] == .fromArray([.int(1), .int(2), .int(3)]))
        #expect(setting.extras["d"] == .fromDictionary(["x": .fromArray([.string("m")]), "y": .bool(true)]))
        #expect(Array(fromSubscript) == [.int(1), .int(2), .int(3)])
        try db.write { setting.history.remove(at: 1) }
        #expect(fromSubscript.isInvalidated)
        try db.write { setting.extras.removeObject(for: "d") }
        #expect(fromMap.isInvalidated && fromValues.isInvalidated)
        #expect(problems(db).isEmpty)
    }

    @Test func observingANestedListReportsItsOwnInsertionsDeletionsAndModifications() throws {
        let (db, setting) = try setting(value: .fromDictionary(["items": .fromArray([.int(1), .int(2), .int(3)]), "other": .int(0)]))
        let list = try #require(setting.value.dictionaryValue?["items"]?.listValue)
        let recorder = Recorder<CollectionChange<List<MixedValue>>>()
        let token = list.observe { recorder.record($0) }
        guard case .initial(let initial)? = recorder.changes.first else { Issue.record("no initial"); return }
        #expect(initial === list)
        try db.write { list.append(.int(4)) }
        try db.write { list.remove(at: 0) }
        try db.write { list[1] = .string("three") }
        try db.write { setting.value.dictionaryValue?["other"] = .int(1) }  // beside the list: nothing to report
        try db.write { setting.value.dictionaryValue?["items"] = .string("gone") }
        try db.write { setting.value = .fromDictionary(["items": .fromArray([])]) }  // ended: not reported
        let reported = recorder.changes.dropFirst().compactMap(indices)
        #expect(reported.map(\.insertions) == [[3], [], [], []])
        #expect(reported.map(\.deletions) == [[], [0], [], [0, 1, 2]])
        #expect(reported.map(\.modifications) == [[], [], [1], []])
        token.invalidate()
    }

    @Test func observingANestedMapReportsKeysRemovedAddedAndChanged() throws {
        let (db, setting) = try setting(value: .none)
        try db.write { setting.history.append(.fromDictionary(["a": .int(1), "b": .int(2)])) }
        let map = try #require(setting.history[0].dictionaryValue)
        let recorder = Recorder<MapChange<Map<String, MixedValue>>>()
        let token = map.observe { recorder.record($0) }
        try db.write {
            map["c"] = .int(3)
            map.removeObject(for: "a")
            map["b"] = .fromArray([])
        }
        try db.write { db.delete(setting) }
        var reported: [[[String]]] = []
        for change in recorder.changes {
            if case .update(_, let deletions, let insertions, let modifications) = change { reported.append([deletions, insertions, modifications]) }
        }
        #expect(reported == [[["a"], ["c"], ["b"]], [["b", "c"], [], []]])
        token.invalidate()
    }

    @Test func freezingANestedCollectionGivesAViewOfTheFrozenObject() throws {
        let (db, setting) = try setting(value: .fromArray([.fromDictionary(["k": .int(1)])]))
        let live = try #require(setting.value.listValue?[0].dictionaryValue)
        let frozen = live.freeze()
        #expect(frozen.isFrozen && !live.isFrozen)
        #expect(frozen.freeze() === frozen)
        try db.write { live["k"] = .int(2) }
        #expect(frozen["k"] == .int(1) && live["k"] == .int(2))
        let frozenList = try #require(setting.value.listValue).freeze()
        try db.write { setting.value = .none }
        #expect(frozenList.count == 1 && frozenList[0].dictionaryValue?["k"] == .int(2))
        #expect(frozenList.thaw()?.isInvalidated ?? true)
        try db.write { setting.value = .fromArray([.int(5)]) }
        #expect(frozenList.thaw().map(Array.init) == [.int(5)])
        // A frozen view is read from other threads.
        let sent = Frozen(frozenList)
        let count = DispatchQueue.global().sync { sent.value.count }
        #expect(count == 1)
    }

    @Test func anObjectInANestedCollectionReadsNoneOnceDeletedAndVerifyStaysSilent() throws {
        let db = try Database(configuration: configuration)
        let setting = try db.write {
            let appliance = db.create(Appliance.self, value: ["id": 1, "name": "kettle"])
            let setting = db.create(Setting.self, value: ["id": 1, "value": MixedValue.fromArray([.object(appliance), .fromDictionary(["o": .object(appliance)])])])
            setting.history.append(.fromArray([.object(appliance)]))
            return setting
        }
        let list = try #require(setting.value.listValue)
        #expect(list[0].object(Appliance.self)?.name == "kettle")
        try db.write { db.delete(db.objects(Appliance.self)) }
        #expect(list[0] == MixedValue.none)
        #expect(list[1].dictionaryValue?["o"] == MixedValue.none)
        #expect(setting.history[0].listValue?[0] == MixedValue.none)
        #expect(problems(db).isEmpty)
        // The stored link is not cleared (MigratingFromRealm, "Deleted objects"): a query for
        // nil does not match it, where RealmSwift's would.
        #expect(db.objects(Setting.self).filter("value[0] == nil").count == 0)
    }
}
