// Collections observed without key paths report a change to a linked object (through links,
// lists of links and embedded objects, up to three links away) as a modification of the
// objects that link to it, as RealmSwift's collection notifications do. Objects observed without
// key paths stay shallow.

import Foundation
import Testing
@testable import Strata
import StrataTestWorkloads

final class DeepLevel4: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
}

final class DeepLevel3: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var next: DeepLevel4?
}

final class DeepLevel2: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var next: DeepLevel3?
}

final class DeepLevel1: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var next: DeepLevel2?
}

final class DeepRoot: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var next: DeepLevel1?
    @Persisted var many: List<DeepLevel1>
    @Persisted var friend: DeepRoot?
    @Persisted var address: DeepAddress?
}

final class DeepAddress: EmbeddedObject {
    @Persisted var city = ""
}

final class DeepShelf: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var roots: List<DeepRoot>
}

/// Unrelated to everything above.
final class DeepStranger: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
}

@Suite struct DeepCollectionNotificationTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration {
        folder.configuration(objectTypes: [DeepRoot.self, DeepLevel1.self, DeepLevel2.self, DeepLevel3.self, DeepLevel4.self,
                                           DeepAddress.self, DeepShelf.self, DeepStranger.self])
    }

    /// Three roots; root 2 links through `next` down the chain 1 → 2 → 3 → 4, root 3 holds the
    /// same level-1 object in its list, and root 1 links to nothing.
    private func populated() throws -> Database {
        let db = try Database(configuration: configuration)
        try db.write {
            let level4 = db.create(DeepLevel4.self, value: ["id": 1])
            let level3 = db.create(DeepLevel3.self, value: ["id": 1, "next": level4])
            let level2 = db.create(DeepLevel2.self, value: ["id": 1, "next": level3])
            let level1 = db.create(DeepLevel1.self, value: ["id": 1, "next": level2])
            db.create(DeepRoot.self, value: ["id": 1, "name": "one"])
            db.create(DeepRoot.self, value: ["id": 2, "name": "two", "next": level1])
            let three = db.create(DeepRoot.self, value: ["id": 3, "name": "three"])
            three.many.append(level1)
            db.create(DeepLevel1.self, value: ["id": 2])
        }
        return db
    }

    private func modifications(_ recorder: Recorder<CollectionChange<Results<DeepRoot>>>) -> [Int]? {
        recorder.changes.last.flatMap(indices)?.modifications
    }

    @Test func aLinkedObjectsChangeModifiesTheObjectsLinkingToIt() throws {
        let db = try populated()
        let recorder = Recorder<CollectionChange<Results<DeepRoot>>>()
        let token = db.objects(DeepRoot.self).observe { recorder.record($0) }
        try db.write { db.object(ofType: DeepLevel1.self, forPrimaryKey: 1)!.value = 7 }
        #expect(recorder.changes.count == 2)
        // Root 2 links to it, root 3 holds it in a list; root 1 does not reach it.
        #expect(modifications(recorder) == [1, 2])
        // A level-1 object no root reaches: no notification.
        try db.write { db.object(ofType: DeepLevel1.self, forPrimaryKey: 2)!.value = 7 }
        #expect(recorder.changes.count == 2)
        _ = token
    }

    @Test func changesUpToThreeLinksAwayCountAndDeeperOnesDoNot() throws {
        let db = try populated()
        let recorder = Recorder<CollectionChange<Results<DeepRoot>>>()
        let token = db.objects(DeepRoot.self).observe { recorder.record($0) }
        try db.write { db.object(ofType: DeepLevel3.self, forPrimaryKey: 1)!.value = 1 }
        #expect(recorder.changes.count == 2)
        #expect(modifications(recorder) == [1, 2])
        // Four links away from the roots: beyond RealmSwift's depth, and Strata's.
        try db.write { db.object(ofType: DeepLevel4.self, forPrimaryKey: 1)!.value = 1 }
        #expect(recorder.changes.count == 2)
        // From a level-1 collection, the same object is three links away.
        let levels = Recorder<CollectionChange<Results<DeepLevel1>>>()
        let levelToken = db.objects(DeepLevel1.self).observe { levels.record($0) }
        try db.write { db.object(ofType: DeepLevel4.self, forPrimaryKey: 1)!.value = 2 }
        #expect(levels.changes.last.flatMap(indices)?.modifications == [0])
        _ = (token, levelToken)
    }

    @Test func keyPathsStillRestrictWhatCounts() throws {
        let db = try populated()
        let recorder = Recorder<CollectionChange<Results<DeepRoot>>>()
        let token = db.objects(DeepRoot.self).observe(keyPaths: ["name"]) { recorder.record($0) }
        try db.write { db.object(ofType: DeepLevel1.self, forPrimaryKey: 1)!.value = 7 }
        #expect(recorder.changes.count == 1)
        try db.write { db.object(ofType: DeepRoot.self, forPrimaryKey: 1)!.name = "uno" }
        #expect(modifications(recorder) == [0])
        _ = token
    }

    @Test func embeddedObjectsAndCyclesCount() throws {
        let db = try populated()
        try db.write {
            let one = db.object(ofType: DeepRoot.self, forPrimaryKey: 1)!
            let two = db.object(ofType: DeepRoot.self, forPrimaryKey: 2)!
            one.address = DeepAddress(value: ["city": "Oslo"])
            one.friend = two
            two.friend = one
        }
        let recorder = Recorder<CollectionChange<Results<DeepRoot>>>()
        let token = db.objects(DeepRoot.self).sorted(byKeyPath: "name").observe { recorder.record($0) }
        // Sorted by name: one, three, two.
        try db.write { db.object(ofType: DeepRoot.self, forPrimaryKey: 1)!.address!.city = "Bergen" }
        #expect(modifications(recorder) == [0, 2], "root 1 holds the address; root 2 is its friend")
        try db.write { db.object(ofType: DeepRoot.self, forPrimaryKey: 2)!.name = "two!" }
        // Root 2 changed itself; root 1 links to it as a friend. Root 3 does not.
        #expect(modifications(recorder) == [0, 2])
        _ = token
    }

    @Test func listsOfObjectsReportTheirElementsLinkedChanges() throws {
        let db = try populated()
        try db.write {
            let shelf = db.create(DeepShelf.self, value: ["id": 1])
            shelf.roots.append(db.object(ofType: DeepRoot.self, forPrimaryKey: 1)!)
            shelf.roots.append(db.object(ofType: DeepRoot.self, forPrimaryKey: 2)!)
        }
        let shelf = db.object(ofType: DeepShelf.self, forPrimaryKey: 1)!
        let recorder = Recorder<CollectionChange<List<DeepRoot>>>()
        let token = shelf.roots.observe { recorder.record($0) }
        try db.write { db.object(ofType: DeepLevel2.self, forPrimaryKey: 1)!.value = 3 }
        #expect(recorder.changes.last.flatMap(indices)?.modifications == [1])
        try db.write { db.object(ofType: DeepLevel4.self, forPrimaryKey: 1)!.value = 3 }
        #expect(recorder.changes.count == 2, "four links away from the elements")
        _ = token
    }

    @Test func unrelatedTablesDoNotNotify() throws {
        let db = try populated()
        let recorder = Recorder<CollectionChange<Results<DeepRoot>>>()
        let token = db.objects(DeepRoot.self).observe { recorder.record($0) }
        try db.write { db.create(DeepStranger.self, value: ["id": 1]) }
        try db.write { db.object(ofType: DeepStranger.self, forPrimaryKey: 1)!.value = 2 }
        // A new linked-type object that nothing links to yet.
        try db.write { db.create(DeepLevel1.self, value: ["id": 3]) }
        #expect(recorder.changes.count == 1)
        _ = token
    }

    @Test func objectObservationStaysShallow() throws {
        let db = try populated()
        let two = db.object(ofType: DeepRoot.self, forPrimaryKey: 2)!
        var changes: [[String]] = []
        let token = two.observe { (change: ObjectChange<DeepRoot>) in
            if case .change(_, let properties) = change { changes.append(properties.map(\.name)) }
        }
        try db.write { db.object(ofType: DeepLevel1.self, forPrimaryKey: 1)!.value = 9 }
        #expect(changes.isEmpty)
        let deep = two.observe(keyPaths: ["next.value"]) { (change: ObjectChange<DeepRoot>) in
            if case .change(_, let properties) = change { changes.append(properties.map(\.name)) }
        }
        try db.write { db.object(ofType: DeepLevel1.self, forPrimaryKey: 1)!.value = 10 }
        #expect(changes == [["next"]])
        _ = (token, deep)
    }

    /// Random changes at every level; every reported modification set is checked against
    /// which roots reach a changed object within three links. With 8 roots every collection is
    /// checked object by object; with 120, the collection of all roots is checked by scanning
    /// the link properties, and a collection of five of them still object by object.
    @Test(arguments: [(UInt64(11), 8), (12, 8), (13, 120), (14, 120)])
    func randomLinkedChangesReportExactlyTheRootsThatReachThem(seed: UInt64, roots: Int) throws {
        let db = try Database(configuration: configuration)
        var rng = SplitMix64(seed: seed)
        try db.write {
            for id in 1...6 { db.create(DeepLevel2.self, value: ["id": id]) }
            for id in 1...6 {
                let level1 = db.create(DeepLevel1.self, value: ["id": id])
                if rng.next() % 3 != 0 { level1.next = db.object(ofType: DeepLevel2.self, forPrimaryKey: Int(rng.next() % 6) + 1) }
            }
            for id in 1...roots {
                let root = db.create(DeepRoot.self, value: ["id": id, "name": "r\(id)"])
                if rng.next() % 2 == 0 { root.next = db.object(ofType: DeepLevel1.self, forPrimaryKey: Int(rng.next() % 6) + 1) }
                for _ in 0..<Int(rng.next() % 3) {
                    root.many.append(db.object(ofType: DeepLevel1.self, forPrimaryKey: Int(rng.next() % 6) + 1)!)
                }
            }
        }
        let all = db.objects(DeepRoot.self).sorted(byKeyPath: "id")
        let few = db.objects(DeepRoot.self).where { $0.id <= 5 }.sorted(byKeyPath: "id")
        var reported: [[Int]?] = [nil, nil]
        let tokens = [all.observe { change in if let i = indices(change) { reported[0] = i.modifications } },
                      few.observe { change in if let i = indices(change) { reported[1] = i.modifications } }]
        var notified = 0
        for _ in 0..<40 {
            var changedLevel1 = Set<Int>()
            var changedLevel2 = Set<Int>()
            try db.write {
                for _ in 0..<(1 + Int(rng.next() % 2)) {
                    if rng.next() % 2 == 0 {
                        let id = Int(rng.next() % 6) + 1
                        db.object(ofType: DeepLevel1.self, forPrimaryKey: id)!.value += 1
                        changedLevel1.insert(id)
                    } else {
                        let id = Int(rng.next() % 6) + 1
                        db.object(ofType: DeepLevel2.self, forPrimaryKey: id)!.value += 1
                        changedLevel2.insert(id)
                    }
                }
            }
            for (index, results) in [all, few].enumerated() {
                let expected = results.enumerated().compactMap { position, root -> Int? in
                    let reached = Array(root.many) + (root.next.map { [$0] } ?? [])
                    let hit = reached.contains { changedLevel1.contains($0.id) || ($0.next.map { changedLevel2.contains($0.id) } ?? false) }
                    return hit ? position : nil
                }
                if expected.isEmpty {
                    #expect(reported[index] == nil, "seed \(seed), collection \(index): a notification for a change no root reaches")
                } else {
                    notified += 1
                    #expect(reported[index] == expected, "seed \(seed), collection \(index): modifications \(String(describing: reported[index])), expected \(expected)")
                }
                reported[index] = nil
            }
        }
        #expect(notified > 20, "too few notifications to mean anything: \(notified)")
        _ = tokens
    }
}
