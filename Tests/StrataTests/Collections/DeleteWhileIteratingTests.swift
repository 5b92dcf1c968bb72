// `for … in` over a live collection inside a write transaction iterates the collection as it
// was when the loop started: deleting objects, or changing them so that they leave the
// collection, skips none of the others (RealmSwift iterates a snapshot too).

import Foundation
import Testing
@testable import Strata

final class SweptItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var group = 0
    @Persisted var done = false
    @Persisted(originProperty: "items") var holders: LinkingObjects<SweptHolder>
}

final class SweptHolder: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var items: List<SweptItem>
    @Persisted var members: MutableSet<SweptItem>
}

@Suite struct DeleteWhileIteratingTests {
    let folder = TemporaryFolder()
    /// More than one cluster's worth, so that a walk over the table crosses clusters.
    static let count = 600

    private func open() throws -> Database {
        let db = try Database(configuration: folder.configuration(objectTypes: [SweptItem.self, SweptHolder.self]))
        try db.write {
            let holder = SweptHolder()
            for id in 0..<Self.count {
                let item = SweptItem()
                item.id = id
                item.group = id % 5
                db.add(item)
                holder.items.append(item)
                holder.members.insert(item)
            }
            db.add(holder)
            for id in 1...40 {
                let other = SweptHolder()
                other.id = id
                other.items.append(holder.items[0])
                db.add(other)
            }
        }
        return db
    }

    /// Deletes each object the loop visits and counts the visits.
    private func deleteEach<C: Sequence>(_ collection: C, in db: Database) throws -> Int where C.Element: Object {
        var visited = 0
        try db.write {
            for object in collection {
                visited += 1
                db.delete(object)
            }
        }
        return visited
    }

    @Test func deletingEveryObjectOfAllResultsInALoopDeletesThemAll() throws {
        let db = try open()
        #expect(try deleteEach(db.objects(SweptItem.self), in: db) == Self.count)
        #expect(db.objects(SweptItem.self).isEmpty)
    }

    @Test func deletingEveryObjectChangedEarlierInTheSameWriteDeletesThemAll() throws {
        // The write has already changed every cluster when the loop starts, so the loop
        // begins on the writer's own clusters, which each deletion changes.
        let db = try open()
        var visited = 0
        try db.write {
            for item in db.objects(SweptItem.self) { item.done = true }
            for item in db.objects(SweptItem.self) {
                visited += 1
                db.delete(item)
            }
        }
        #expect(visited == Self.count)
        #expect(db.objects(SweptItem.self).isEmpty)
    }

    @Test func deletingEveryObjectOfFilteredResultsInALoopDeletesThemAll() throws {
        let db = try open()
        let even = db.objects(SweptItem.self).where { $0.group == 0 || $0.group == 2 }
        #expect(try deleteEach(even, in: db) == Self.count / 5 * 2)
        #expect(even.isEmpty)
        #expect(db.objects(SweptItem.self).count == Self.count / 5 * 3)
    }

    @Test func deletingEveryObjectOfSortedResultsInALoopDeletesThemAllInOrder() throws {
        let db = try open()
        var order: [Int] = []
        try db.write {
            for item in db.objects(SweptItem.self).sorted(byKeyPath: "id", ascending: false) {
                order.append(item.id)
                db.delete(item)
            }
        }
        #expect(order == Array((0..<Self.count).reversed()))
        #expect(db.objects(SweptItem.self).isEmpty)
    }

    @Test func changingObjectsSoThatTheyLeaveTheResultsVisitsEveryOne() throws {
        let db = try open()
        let open = db.objects(SweptItem.self).where { !$0.done }
        var visited = 0
        try db.write {
            for item in open {
                item.done = true
                visited += 1
            }
        }
        #expect(visited == Self.count)
        #expect(open.isEmpty)
    }

    @Test func anObjectDeletedBeforeTheLoopReachesItIsVisitedInvalidated() throws {
        let db = try open()
        var invalidated: [Int] = []
        var visited = 0
        try db.write {
            // Each step deletes its object and the next one: the next is still visited, invalidated.
            var previousDeletedNext = false
            for item in db.objects(SweptItem.self) {
                visited += 1
                if previousDeletedNext {
                    #expect(item.isInvalidated)
                    invalidated.append(visited)
                    previousDeletedNext = false
                    continue
                }
                if let next = db.object(ofType: SweptItem.self, forPrimaryKey: item.id + 1) { db.delete(next) }
                db.delete(item)
                previousDeletedNext = true
            }
        }
        #expect(visited == Self.count)
        #expect(invalidated.count == Self.count / 2)
        #expect(db.objects(SweptItem.self).isEmpty)
    }

    @Test func deletingEveryObjectOfAListInALoopDeletesThemAll() throws {
        let db = try open()
        let holder = try #require(db.object(ofType: SweptHolder.self, forPrimaryKey: 0))
        #expect(try deleteEach(holder.items, in: db) == Self.count)
        #expect(holder.items.isEmpty)
        #expect(db.objects(SweptItem.self).isEmpty)
    }

    @Test func removingAListsElementsInALoopVisitsEveryElement() throws {
        let db = try open()
        let holder = try #require(db.object(ofType: SweptHolder.self, forPrimaryKey: 0))
        var ids: [Int] = []
        try db.write {
            for item in holder.items {
                ids.append(item.id)
                holder.items.remove(at: 0)
            }
        }
        #expect(ids == Array(0..<Self.count))
        #expect(holder.items.isEmpty)
    }

    @Test func deletingEveryLinkingObjectInALoopDeletesThemAll() throws {
        let db = try open()
        let first = try #require(db.object(ofType: SweptItem.self, forPrimaryKey: 0))
        #expect(first.holders.count == 41)
        #expect(try deleteEach(first.holders, in: db) == 41)
        #expect(first.holders.isEmpty)
        #expect(db.objects(SweptHolder.self).isEmpty)
    }

    @Test func removingEveryMemberOfASetInALoopRemovesThemAll() throws {
        let db = try open()
        let holder = try #require(db.object(ofType: SweptHolder.self, forPrimaryKey: 0))
        var visited = 0
        try db.write {
            for member in holder.members {
                holder.members.remove(member)
                visited += 1
            }
        }
        #expect(visited == Self.count)
        #expect(holder.members.isEmpty)
    }

    @Test func deletingEveryMemberObjectOfASetInALoopDeletesThemAll() throws {
        let db = try open()
        let holder = try #require(db.object(ofType: SweptHolder.self, forPrimaryKey: 0))
        #expect(try deleteEach(holder.members, in: db) == Self.count)
        #expect(holder.members.isEmpty)
    }

    @Test func deletingThroughAnAnyObjectCollectionDeletesThemAll() throws {
        let db = try open()
        let holder = try #require(db.object(ofType: SweptHolder.self, forPrimaryKey: 0))
        #expect(try deleteEach(AnyObjectCollection(holder.items), in: db) == Self.count)
        #expect(db.objects(SweptItem.self).isEmpty)
    }

    @Test func deletingEverySectionsObjectsInALoopDeletesThemAll() throws {
        let db = try open()
        let sections = db.objects(SweptItem.self).sectioned(by: \.group)
        var visited = 0
        var sectionsVisited = 0
        try db.write {
            for section in sections {
                sectionsVisited += 1
                for item in section {
                    db.delete(item)
                    visited += 1
                }
            }
        }
        #expect(sectionsVisited == 5)
        #expect(visited == Self.count)
        #expect(db.objects(SweptItem.self).isEmpty)
    }

    @Test func iteratingOutsideAWriteStillReadsEveryObjectInOrder() throws {
        let db = try open()
        #expect(db.objects(SweptItem.self).map(\.id) == Array(0..<Self.count))
        let holder = try #require(db.object(ofType: SweptHolder.self, forPrimaryKey: 0))
        #expect(holder.items.map(\.id) == Array(0..<Self.count))
        let unmanaged = SweptHolder()
        unmanaged.items.append(SweptItem())
        #expect(Array(unmanaged.items).count == 1)
    }
}
