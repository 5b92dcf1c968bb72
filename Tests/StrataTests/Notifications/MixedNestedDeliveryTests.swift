// Lists and dictionaries nested in a MixedValue observed like any other collection: on another
// queue and on another actor (found again at the same place in that context's instance), and
// as an async sequence of changes.

import Dispatch
import Foundation
import Testing
@testable import Strata

/// Observes a nested collection of a `Setting` from its own actor's instance, and refreshes.
actor NestedWatcher {
    var db: Database!
    var log: [String] = []

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func record(_ line: String) { log.append(line) }
    func refresh() { db.refresh() }
}

@Suite(.timeLimit(.minutes(10))) @MainActor struct MixedNestedDeliveryTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Setting.self, Appliance.self]) }
    let queue = DispatchQueue(label: "strata.tests.nested-observer")

    /// A change of a nested list of ints and strings, read where it is delivered.
    nonisolated private static func describe(_ change: CollectionChange<List<MixedValue>>, onQueue: Bool) -> String {
        func elements(_ list: List<MixedValue>) -> String {
            guard !list.isInvalidated else { return "gone" }
            return "[" + list.map { value -> String in
                switch value {
                case .int(let int): "\(int)"
                case .string(let string): string
                default: "?"
                }
            }.joined(separator: ", ") + "]"
        }
        switch change {
        case .initial(let list): return "initial \(elements(list)) onQueue=\(onQueue)"
        case .update(let list, let deletions, let insertions, let modifications):
            return "update \(elements(list)) -\(deletions) +\(insertions) ~\(modifications) onQueue=\(onQueue)"
        case .error: return "error"
        }
    }

    @Test func aNestedListObservedOnAnotherQueueReportsThereWithThatQueuesView() async throws {
        let db = try await Database(configuration: configuration)
        let setting = try db.write { db.create(Setting.self, value: ["id": 1, "value": MixedValue.fromDictionary(["items": .fromArray([.int(1)])])]) }
        let nested = try #require(setting.value.dictionaryValue?["items"]?.listValue)
        let inbox = Inbox()
        let marker = QueueMarker(queue)
        // Reading the list in the callback is itself a check: another context's view would stop.
        let token = nested.observe(on: queue) { change in inbox.post(Self.describe(change, onQueue: marker.isCurrent)) }
        #expect(await inbox.next() == "initial [1] onQueue=true")
        try db.write { nested.append(.string("two")) }
        #expect(await inbox.next() == "update [1, two] -[] +[1] ~[] onQueue=true")
        try db.write { nested[0] = .int(10) }
        #expect(await inbox.next() == "update [10, two] -[] +[] ~[0] onQueue=true")
        // The place stops holding a list: a last update removes every element.
        try db.write { setting.value = .string("no list") }
        #expect(await inbox.next() == "update gone -[0, 1] +[] ~[] onQueue=true")
        token.invalidate()
    }

    @Test func aNestedMapObservedOnAnotherQueueReportsKeysThere() async throws {
        let db = try await Database(configuration: configuration)
        let setting = try db.write { db.create(Setting.self, value: ["id": 1]) }
        try db.write { setting.history.append(.fromDictionary(["a": .int(1), "b": .int(2)])) }
        let nested = try #require(setting.history[0].dictionaryValue)
        let inbox = Inbox()
        let marker = QueueMarker(queue)
        let token = nested.observe(on: queue) { change in
            switch change {
            case .initial(let map): inbox.post("initial \(map.keys.sorted()) onQueue=\(marker.isCurrent)")
            case .update(let map, let deletions, let insertions, let modifications):
                inbox.post("update \(map.isInvalidated ? [] : map.keys.sorted()) -\(deletions) +\(insertions) ~\(modifications) onQueue=\(marker.isCurrent)")
            case .error: inbox.post("error")
            }
        }
        #expect(await inbox.next() == "initial [\"a\", \"b\"] onQueue=true")
        try db.write {
            nested["c"] = .int(3)
            nested.removeObject(for: "a")
            nested["b"] = .string("changed")
        }
        #expect(await inbox.next() == "update [\"b\", \"c\"] -[\"a\"] +[\"c\"] ~[\"b\"] onQueue=true")
        try db.write { db.delete(setting) }
        #expect(await inbox.next() == "update [] -[\"b\", \"c\"] +[] ~[] onQueue=true")
        token.invalidate()
    }

    @Test func aNestedListObservedOnAnotherActorGetsThatActorsView() async throws {
        let db = try await Database(configuration: configuration)
        let setting = try db.write { db.create(Setting.self, value: ["id": 1, "value": MixedValue.fromArray([.fromArray([.int(1)])])]) }
        let nested = try #require(setting.value.listValue?[0].listValue)
        let watcher = try await NestedWatcher(configuration)
        let token = await nested.observe(on: watcher) { watcher, change in
            switch change {
            case .initial(let list): watcher.record("initial \(list.count) frozen=\(list.isFrozen)")
            case .update(let list, let deletions, let insertions, let modifications):
                // Reading the list here checks it is the actor's own view.
                watcher.record("update \(list.isInvalidated ? -1 : list.count) -\(deletions) +\(insertions) ~\(modifications)")
            case .error: watcher.record("error")
            }
        }
        try db.write { nested.append(.bool(true)) }
        await watcher.refresh()
        try db.write { setting.value = .fromDictionary([:]) }  // the place no longer holds a list
        await watcher.refresh()
        #expect(await watcher.log == ["initial 1 frozen=false", "update 2 -[] +[1] ~[]", "update -1 -[0, 1] +[] ~[]"])
        token.invalidate()
    }

    @Test func aNestedCollectionsChangesArriveAsAnAsyncSequence() async throws {
        let db = try await Database(configuration: configuration)
        let setting = try db.write {
            db.create(Setting.self, value: ["id": 1, "value": MixedValue.fromArray([.int(1)]), "extras": ["m": MixedValue.fromDictionary([:])]])
        }
        let nestedList = try #require(setting.value.listValue)
        let nestedMap = try #require(setting.extras["m"]?.dictionaryValue)
        var lists = nestedList.changes.makeAsyncIterator()
        var maps = nestedMap.changes.makeAsyncIterator()
        guard case .initial(let initialList)? = await lists.next(isolation: #isolation) else { Issue.record("no initial list"); return }
        #expect(initialList === nestedList)
        guard case .initial? = await maps.next(isolation: #isolation) else { Issue.record("no initial map"); return }
        try db.write { setting.extras["other"] = .int(5) }   // beside both: nothing to report
        try db.write {
            nestedList.append(.int(2))
            nestedMap["k"] = .int(1)
        }
        guard case .update(_, let deletions, let insertions, let modifications)? = await lists.next(isolation: #isolation) else { Issue.record("no list update"); return }
        #expect(deletions == [] && insertions == [1] && modifications == [])
        guard case .update(_, _, let keys, _)? = await maps.next(isolation: #isolation) else { Issue.record("no map update"); return }
        #expect(keys == ["k"])
        // The list's place holds another value: a last update removes its elements and the sequence ends.
        try db.write { setting.value = .int(0) }
        guard case .update(_, let removed, _, _)? = await lists.next(isolation: #isolation) else { Issue.record("no last list update"); return }
        #expect(removed == [0, 1])
        #expect(await lists.next(isolation: #isolation) == nil)
    }
}
