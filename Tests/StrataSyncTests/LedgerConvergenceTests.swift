// Two ledgers on two files exchange changesets by hand and converge, for every property kind,
// links, embedded objects, collections, concurrent list inserts, deletes and revivals;
// downloads are applied once, notify once per frame and are not uploaded again; snapshots
// bootstrap and reset.

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Testing

@Suite struct LedgerConvergenceTests {
    private func pair() throws -> (LedgerFolder, LedgerClient, LedgerClient, LedgerTestServer) {
        let folder = LedgerFolder()
        return (folder, try LedgerClient(name: "a", folder: folder.url, wallStart: 1_000),
                try LedgerClient(name: "b", folder: folder.url, wallStart: 1_000), LedgerTestServer())
    }

    @Test func everyPropertyKindConverges() throws {
        let (_, a, b, server) = try pair()
        try a.db.write {
            let person = a.db.create(LedgerPerson.self, value: ["id": 7, "name": "Ada"])
            let task = a.db.create(LedgerTask.self, value: [
                "id": "t1", "title": "all", "count": 42, "small": Int8(-3), "short": Int16(300), "medium": Int32(-70_000), "wide": Int64.max, "done": true, "ratio": Float(0.5), "score": 2.25,
                "blob": Data([1, 2, 3]), "due": Date(timeIntervalSince1970: 1_700_000_000.5),
                "objectID": ObjectId.generate(), "uuid": UUID(), "amount": Decimal128(12), "maybe": 5,
                "priority": LedgerPriority.high.rawValue,
            ])
            task.owner = person
            task.anything = .string("mixed")
        }
        try server.exchange([a, b])
        #expect(b.dump() == a.dump())
        #expect(b.task("t1")?.owner?.name == "Ada")
        #expect(b.task("t1")?.wide == Int64.max)
        #expect(b.task("t1")?.medium == -70_000)
        // Clearing optionals and changing the mixed value to another kind.
        try a.db.write {
            guard let task = a.task("t1") else { return }
            task.maybe = nil
            task.uuid = nil
            task.anything = .int(3)
            task.owner = nil
        }
        try server.exchange([a, b])
        #expect(b.dump() == a.dump())
        #expect(b.task("t1")?.maybe == nil)
    }

    @Test func mixedValuesHoldingObjectsAndNoneConverge() throws {
        let (_, a, b, server) = try pair()
        try a.db.write {
            let person = a.db.create(LedgerPerson.self, value: ["id": 1, "name": "Linked"])
            a.db.create(LedgerTask.self, value: ["id": "t1"]).anything = .object(person)
            a.db.create(LedgerTask.self, value: ["id": "t2"]).anything = .none
        }
        try server.exchange([a, b])
        #expect(b.dump() == a.dump())
        guard case .object(let object)? = b.task("t1")?.anything else { Issue.record("no object in the mixed value"); return }
        #expect((object as? LedgerPerson)?.name == "Linked")
    }

    @Test func linksAndListsOfLinksResolveWhenTheirTargetsArrive() throws {
        let (_, a, b, server) = try pair()
        // The task (whose table comes first) links to people made in the same commit.
        try a.db.write {
            let task = a.db.create(LedgerTask.self, value: ["id": "t1"])
            let first = a.db.create(LedgerPerson.self, value: ["id": 1, "name": "one"])
            let second = a.db.create(LedgerPerson.self, value: ["id": 2, "name": "two"])
            task.owner = second
            task.people.append(objectsIn: [first, second, first])
        }
        try server.exchange([a, b])
        #expect(b.dump() == a.dump())
        #expect(b.task("t1")?.people.map(\.id) == [1, 2, 1])
        // A later download creates a target an existing object already linked to: the link
        // must resolve then (sent by hand: the link first, its target in a later frame).
        let ref = ObjectRef(className: "LedgerPerson", primaryKey: .int(3))
        let time = HybridTimestamp(wallMilliseconds: 9_000, counter: 0, clientID: 99)
        let link = ServerChangeset(serverSequence: 2, clientID: 99, clientSequence: 1, operations: [
            SyncOperation(timestamp: time, object: ObjectRef(className: "LedgerTask", primaryKey: .string("t1")),
                          change: .set(property: "owner", value: .link(ref))),
        ])
        try b.ledger.apply(changesets: [link], checkpoint: Checkpoint(sequence: 2, checksum: 0))
        #expect(b.task("t1")?.owner == nil)
        var later = time
        later.counter = 1
        let target = ServerChangeset(serverSequence: 3, clientID: 99, clientSequence: 2, operations: [
            SyncOperation(timestamp: later, object: ref, change: .create(["id": .int(3), "name": .string("late")])),
        ])
        try b.ledger.apply(changesets: [target], checkpoint: Checkpoint(sequence: 3, checksum: 0))
        #expect(b.task("t1")?.owner?.name == "late")
    }

    @Test func aLinkWaitingForItsTargetResolvesWhenTheTargetIsCreatedLocally() throws {
        let (_, _, b, _) = try pair()
        let task = ObjectRef(className: "LedgerTask", primaryKey: .string("t1"))
        let time = HybridTimestamp(wallMilliseconds: 500, counter: 0, clientID: 99)
        let frame = ServerChangeset(serverSequence: 1, clientID: 99, clientSequence: 1, operations: [
            SyncOperation(timestamp: time, object: task, change: .create(["id": .string("t1")])),
            SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: 500, counter: 1, clientID: 99), object: task,
                          change: .set(property: "owner", value: .link(ObjectRef(className: "LedgerPerson", primaryKey: .int(4))))),
        ])
        try b.ledger.apply(changesets: [frame], checkpoint: Checkpoint(sequence: 1, checksum: 0))
        #expect(b.task("t1")?.owner == nil)
        try b.db.write { b.db.create(LedgerPerson.self, value: ["id": 4, "name": "local"]) }
        #expect(b.task("t1")?.owner?.name == "local")
        // Only the person's create was recorded: the link was already the task's state.
        let recorded = try b.ledger.pendingChangesets(after: 0, limit: 10).flatMap(\.operations)
        #expect(recorded.map(\.object.className) == ["LedgerPerson"])
    }

    @Test func embeddedObjectsTravelWholeAndChangesInsideThemSync() throws {
        let (_, a, b, server) = try pair()
        try a.db.write {
            a.db.create(LedgerTask.self, value: ["id": "t1", "note": ["text": "inner", "words": ["x", "y"]],
                                                 "notes": [["text": "n1"], ["text": "n2", "words": ["z"]]]])
        }
        try server.exchange([a, b])
        #expect(b.dump() == a.dump())
        #expect(b.task("t1")?.note?.text == "inner")
        try a.db.write {
            a.task("t1")?.note?.text = "changed inside"
            a.task("t1")?.notes.first?.words.append("w")
        }
        try server.exchange([a, b])
        #expect(b.dump() == a.dump())
        #expect(b.task("t1")?.note?.text == "changed inside")
    }

    @Test func setsAndMapsMergePerElementAndKey() throws {
        let (_, a, b, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t1", "labels": ["red"], "scores": ["a": 1]]) }
        try server.exchange([a, b])
        a.clock.set(2_000)
        b.clock.set(2_000)
        try a.db.write {
            a.task("t1")?.labels.insert("green")
            a.task("t1")?.scores["b"] = 2
        }
        try b.db.write {
            b.task("t1")?.labels.remove("red")
            b.task("t1")?.labels.insert("blue")
            b.task("t1")?.scores.removeObject(for: "a")
            b.task("t1")?.scores["c"] = 3
        }
        try server.exchange([a, b])
        try server.exchange([a, b])
        #expect(b.dump() == a.dump())
        #expect(Array(a.task("t1")?.labels ?? LedgerTask().labels).sorted() == ["blue", "green"])
        #expect(a.task("t1")?.scores.keys.sorted() == ["b", "c"])
    }

    @Test func concurrentListInsertsAreAllKeptInOneOrder() throws {
        let (_, a, b, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t1", "steps": ["first", "last"]]) }
        try server.exchange([a, b])
        var generator = SeededGenerator(seed: 31)
        for round in 0..<5 {
            for client in [a, b] {
                try client.db.write {
                    guard let steps = client.task("t1")?.steps else { return }
                    let position = Int.random(in: 0...steps.count, using: &generator)
                    steps.insert("\(client === a ? "a" : "b")\(round)", at: position)
                    if round == 3, steps.count > 2 { steps.remove(at: Int.random(in: 0..<steps.count, using: &generator)) }
                }
            }
            try server.exchange([a, b])
            try server.exchange([a, b])
            #expect(b.dump() == a.dump())
        }
        let steps = Array(a.task("t1")?.steps ?? LedgerTask().steps)
        #expect(steps.filter { $0.hasPrefix("a") }.count + steps.filter { $0.hasPrefix("b") }.count >= 8)
    }

    @Test func aDeleteWinsOverAConcurrentUpdateAndACreateAfterItRevives() throws {
        let (_, a, b, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t1", "title": "alive"]) }
        try server.exchange([a, b])
        a.clock.set(3_000)
        b.clock.set(2_000)
        try a.db.write { if let task = a.task("t1") { a.db.delete(task) } }
        // B's update is later by its wall clock than nothing, but concurrent with the delete.
        b.clock.set(4_000)
        try b.db.write { b.task("t1")?.title = "updated" }
        try server.exchange([a, b])
        try server.exchange([a, b])
        #expect(a.task("t1") == nil)
        #expect(b.task("t1") == nil)
        // Created again after the delete: alive again everywhere, with only the new values.
        a.clock.set(5_000)
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t1", "count": 9]) }
        try server.exchange([a, b])
        #expect(b.task("t1")?.count == 9)
        #expect(b.task("t1")?.title == "")
        #expect(b.dump() == a.dump())
    }

    @Test func lastWriterWinsPerProperty() throws {
        let (_, a, b, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t1"]) }
        try server.exchange([a, b])
        a.clock.set(2_000)
        b.clock.set(3_000)
        try a.db.write { a.task("t1")?.title = "a" ; a.task("t1")?.count = 1 }
        try b.db.write { b.task("t1")?.title = "b" }
        try server.exchange([a, b])
        try server.exchange([a, b])
        #expect(a.task("t1")?.title == "b")
        #expect(a.task("t1")?.count == 1)
        #expect(b.dump() == a.dump())
    }

    @Test func downloadsAreNotRecordedAndNotifyOncePerFrame() throws {
        let (_, a, b, server) = try pair()
        try a.db.write {
            a.db.create(LedgerTask.self, value: ["id": "t1"])
            a.db.create(LedgerTask.self, value: ["id": "t2"])
        }
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t3"]) }
        try server.upload(from: a)
        let results = b.db.objects(LedgerTask.self)
        var notifications: [Int] = []
        let token = results.observe { change in
            if case .update(let collection, _, _, _) = change { notifications.append(collection.count) }
        }
        b.db.refresh()
        try server.download(to: b)
        b.db.refresh()
        #expect(notifications == [3])
        #expect(try b.ledger.lastRecordedSequence() == 0)
        #expect(try b.ledger.checkpoint() == 2)
        token.invalidate()
    }

    @Test func severalCheckpointsAppliedInOneWriteEqualApplyingThemOneByOne() throws {
        let (folder, a, b, server) = try pair()
        let c = try LedgerClient(name: "c", folder: folder.url, wallStart: 1_000)
        var frames: [(changesets: [ServerChangeset], checkpoint: Checkpoint)] = []
        for title in ["one", "two", "three"] {
            try a.db.write {
                if let task = a.task("t1") { task.title = title } else { a.db.create(LedgerTask.self, value: ["id": "t1", "title": title]) }
            }
            let before = UInt64(server.history.count)
            try server.upload(from: a)
            frames.append((server.history.filter { $0.serverSequence > before }, Checkpoint(sequence: UInt64(server.history.count), checksum: 0)))
        }
        for frame in frames { try b.ledger.apply(changesets: frame.changesets, checkpoint: frame.checkpoint) }

        let results = c.db.objects(LedgerTask.self)
        var notifications: [String] = []
        let token = results.observe { change in
            if case .update(let collection, _, _, _) = change { notifications.append(collection.first?.title ?? "none") }
        }
        c.db.refresh()
        try c.ledger.apply(changesets: frames.flatMap(\.changesets), checkpoint: frames[2].checkpoint)
        c.db.refresh()
        #expect(c.dump() == b.dump())
        #expect(c.task("t1")?.title == "three")
        #expect(try c.ledger.checkpoint() == 3)
        #expect(notifications == ["three"], "observers see the three checkpoints as one change, never a partial one")
        token.invalidate()
    }

    @Test func applyingTheSameFrameTwiceChangesNothing() throws {
        let (_, a, b, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t1", "steps": ["x"]]) }
        try server.upload(from: a)
        let frame = try server.frame(for: b)
        try b.ledger.apply(changesets: frame.changesets, checkpoint: frame.checkpoint)
        let once = b.dump()
        try b.ledger.apply(changesets: frame.changesets, checkpoint: frame.checkpoint)
        #expect(b.dump() == once)
        #expect(b.task("t1")?.steps.count == 1)
    }

    @Test func ownChangesetsAreSkippedButMoveTheCheckpoint() throws {
        let (_, a, _, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t1", "title": "mine"]) }
        try server.upload(from: a)
        try a.db.write { a.task("t1")?.title = "newer" }
        try server.download(to: a)
        #expect(a.task("t1")?.title == "newer")
        #expect(try a.ledger.checkpoint() == 1)
    }

    @Test func aBootstrapSnapshotMergesStatesAndMaterialisesThem() throws {
        let (_, a, b, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t1", "title": "from a", "labels": ["x"]]) }
        try server.upload(from: a)
        let operations = server.history.flatMap(\.operations)
        var state = SyncObjectState(object: ObjectRef(className: "LedgerTask", primaryKey: .string("t1")))
        for operation in operations { state.apply(operation) }
        try b.ledger.apply(snapshot: SyncMessage.Snapshot(objects: [state], checkpoint: Checkpoint(sequence: 1, checksum: 0),
                                                           subscriptionVersion: 1, isReset: false, isLast: true))
        #expect(b.dump() == a.dump())
        #expect(try b.ledger.checkpoint() == 1)
        #expect(try b.ledger.subscriptions().completedVersion == 1)
    }

    @Test func aBootstrapSnapshotMovesTheClockPastItsStatesSoLaterLocalWritesWin() throws {
        let (_, _, b, server) = try pair()
        let ref = ObjectRef(className: "LedgerTask", primaryKey: .string("t1"))
        let future = HybridTimestamp(wallMilliseconds: 4_000_000_000_000, counter: 7, clientID: 99)
        var state = SyncObjectState(object: ref)
        state.apply(SyncOperation(timestamp: future, object: ref, change: .create([:])))
        state.apply(SyncOperation(timestamp: future, object: ref, change: .set(property: "title", value: .string("future"))))
        try b.ledger.apply(snapshot: SyncMessage.Snapshot(objects: [state], checkpoint: Checkpoint(sequence: 0, checksum: 0),
                                                           subscriptionVersion: 1, isReset: false, isLast: true))
        #expect(b.task("t1")?.title == "future")
        try b.db.write { b.task("t1")?.title = "after" }
        try server.upload(from: b)
        let written = try #require(server.history.flatMap(\.operations).last?.timestamp)
        #expect(written > future)
    }

    @Test func aSnapshotOfAClassTheClientDoesNotSyncIsRefused() throws {
        let (_, _, b, _) = try pair()
        let state = SyncObjectState(object: ObjectRef(className: "Elsewhere", primaryKey: .int(1)))
        let before = try b.ledger.checkpoint()
        #expect(throws: SyncLedgerError.self) {
            try b.ledger.apply(snapshot: SyncMessage.Snapshot(objects: [state], checkpoint: Checkpoint(sequence: 1, checksum: 0),
                                                               subscriptionVersion: 1, isReset: false, isLast: true))
        }
        #expect(try b.ledger.checkpoint() == before)
    }

    @Test func aSnapshotWhoseListsLinkToObjectsLaterInItMaterialisesEveryLink() throws {
        let (_, a, b, server) = try pair()
        try a.db.write {
            let task = a.db.create(LedgerTask.self, value: ["id": "t1"])
            let people = (1...3).map { a.db.create(LedgerPerson.self, value: ["id": $0, "name": "p\($0)"]) }
            task.people.append(objectsIn: [people[2], people[0], people[1]])
            task.owner = people[2]
        }
        try server.upload(from: a)
        var states: [ObjectRef: SyncObjectState] = [:]
        for operation in server.history.flatMap(\.operations) { states[operation.object, default: SyncObjectState(object: operation.object)].apply(operation) }
        // The task, whose list and link name people, comes before them in the snapshot.
        let ordered = states.values.sorted { ($0.object.className == "LedgerTask" ? 0 : 1) < ($1.object.className == "LedgerTask" ? 0 : 1) }
        try b.ledger.apply(snapshot: SyncMessage.Snapshot(objects: ordered, checkpoint: Checkpoint(sequence: 1, checksum: 0),
                                                           subscriptionVersion: 1, isReset: false, isLast: true))
        #expect(b.task("t1")?.people.map(\.id) == [3, 1, 2])
        #expect(b.task("t1")?.owner?.id == 3)
        #expect(b.dump() == a.dump())
        #expect(try b.ledger.subscriptions().completedVersion == 1)
    }

    @Test func aDeletedTargetLeavesListsOfLinksOnEveryClient() throws {
        let (_, a, b, server) = try pair()
        try a.db.write {
            let task = a.db.create(LedgerTask.self, value: ["id": "t1"])
            task.people.append(objectsIn: (1...3).map { a.db.create(LedgerPerson.self, value: ["id": $0, "name": "p\($0)"]) })
        }
        try server.exchange([a, b])
        try b.db.write { b.db.delete(b.db.object(ofType: LedgerPerson.self, forPrimaryKey: 2)!) }
        // a changes the list's owner object meanwhile, so its state is materialised again.
        try a.db.write { a.task("t1")?.title = "renamed" }
        try server.exchange([a, b])
        try server.download(to: a)
        #expect(a.task("t1")?.people.map(\.id) == [1, 3])
        #expect(b.task("t1")?.people.map(\.id) == [1, 3])
        #expect(a.task("t1")?.title == "renamed" && b.task("t1")?.title == "renamed")
        #expect(b.dump() == a.dump())
    }

    @Test func anObjectDeletedWhileAnotherClientLinkedItComesBackIntoTheListOnEveryClientWhenRecreated() throws {
        let (_, a, b, server) = try pair()
        try a.db.write {
            a.db.create(LedgerTask.self, value: ["id": "t1"])
            a.db.create(LedgerPerson.self, value: ["id": 2, "name": "two"])
        }
        try server.exchange([a, b])
        // At once: a puts person 2 in t1's list, b deletes person 2.
        try a.db.write { a.task("t1")?.people.append(a.db.object(ofType: LedgerPerson.self, forPrimaryKey: 2)!) }
        try b.db.write { b.db.delete(b.db.object(ofType: LedgerPerson.self, forPrimaryKey: 2)!) }
        try server.exchange([a, b])
        #expect(a.task("t1")?.people.count == 0)
        #expect(b.task("t1")?.people.count == 0)
        // The person is created again: the list's state still holds the link, on both.
        try a.db.write { a.db.create(LedgerPerson.self, value: ["id": 2, "name": "again"]) }
        try server.exchange([a, b])
        #expect(a.task("t1")?.people.map(\.name) == ["again"])
        #expect(b.task("t1")?.people.map(\.name) == ["again"])
        #expect(b.dump() == a.dump())
    }

    @Test func anObjectDeletedWhileAnEmbeddedObjectOrAMapLinkedItComesBackOnEveryClientWhenRecreated() throws {
        let (_, a, b, server) = try pair()
        try a.db.write {
            a.db.create(LedgerTask.self, value: ["id": "t1"])
            a.db.create(LedgerPerson.self, value: ["id": 3, "name": "three"])
        }
        try server.exchange([a, b])
        // At once: a links person 3 from t1's embedded note and from its map, b deletes person 3.
        try a.db.write {
            let person = a.db.object(ofType: LedgerPerson.self, forPrimaryKey: 3)!
            let task = a.task("t1")!
            task.note = LedgerNote(value: ["text": "by three", "author": person])
            task.roles["lead"] = person
        }
        try b.db.write { b.db.delete(b.db.object(ofType: LedgerPerson.self, forPrimaryKey: 3)!) }
        try server.exchange([a, b])
        #expect(a.task("t1")?.note?.author == nil)
        #expect(b.task("t1")?.note?.author == nil)
        #expect(b.dump() == a.dump())
        // The person is created again: the note's and the map's states still hold the link.
        try a.db.write { a.db.create(LedgerPerson.self, value: ["id": 3, "name": "again"]) }
        try server.exchange([a, b])
        for client in [a, b] {
            #expect(client.task("t1")?.note?.author?.name == "again")
            #expect(client.task("t1")?.roles["lead"]??.name == "again")
        }
        #expect(b.dump() == a.dump())
    }

    @Test func aResetKeepsUnacknowledgedWritesAndDropsWhatTheServerLacks() throws {
        let (_, a, b, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "shared", "title": "server"]) }
        try server.upload(from: a)
        var shared = SyncObjectState(object: ObjectRef(className: "LedgerTask", primaryKey: .string("shared")))
        for operation in server.history.flatMap(\.operations) { shared.apply(operation) }
        // B: one acknowledged object the server no longer has, and an offline write.
        try b.db.write { b.db.create(LedgerTask.self, value: ["id": "gone"]) }
        try server.upload(from: b)
        try b.db.write { b.db.create(LedgerTask.self, value: ["id": "offline", "title": "kept"]) }
        try b.ledger.apply(snapshot: SyncMessage.Snapshot(objects: [shared], checkpoint: Checkpoint(sequence: 7, checksum: 0),
                                                           subscriptionVersion: 1, isReset: true, isLast: true))
        #expect(b.tasks().map(\.id) == ["offline", "shared"])
        #expect(b.task("offline")?.title == "kept")
        #expect(try b.ledger.pendingChangesets(after: 0, limit: 10).count == 1)
        #expect(try b.ledger.checkpoint() == 7)
    }
}

/// A small deterministic generator (SplitMix64) for the randomised tests.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
