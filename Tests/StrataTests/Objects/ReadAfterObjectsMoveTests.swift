import Dispatch
import Foundation
import Testing
@testable import Strata
import StrataTestWorkloads

/// A model for the position tests (its own class name, so no other suite's schema is touched).
final class PositionItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var label = ""
}

/// Managed objects cache where they were last found (cluster and row), and lookups reuse
/// cached clusters. A version that moves objects — deletes before them in their cluster,
/// deletes of whole clusters, new objects — must not leave a read on a stale position.
@Suite struct ReadAfterObjectsMoveTests {
    static let count = 1_000  // about four clusters

    private static func fill(_ db: Database) throws {
        try db.write {
            for id in 0..<count {
                let item = PositionItem()
                item.id = id
                item.value = id * 10
                item.label = "item \(id)"
                db.add(item)
            }
        }
    }

    /// Every surviving object reads its own values, found by lookup and by iteration.
    private static func expectConsistent(_ db: Database, surviving: [Int]) {
        for id in surviving {
            let item = db.object(ofType: PositionItem.self, forPrimaryKey: id)
            #expect(item?.value == id * 10)
            #expect(item?.label == "item \(id)")
        }
        var seen: [Int] = []
        for item in db.objects(PositionItem.self) {
            #expect(item.value == item.id * 10)
            seen.append(item.id)
        }
        #expect(seen == surviving)
    }

    @Test func objectsReadTheirOwnValuesAfterTheirOwnInstanceMovesThem() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [PositionItem.self]))
        try Self.fill(db)
        // Positions cached by a lookup, by iteration (the last object of the third cluster),
        // and the lookup cache warmed with every cluster.
        guard let looked = db.object(ofType: PositionItem.self, forPrimaryKey: 700) else {
            Issue.record("no object 700")
            return
        }
        let iterated = Array(db.objects(PositionItem.self))
        let late = iterated[767]
        let last = iterated[999]
        #expect(looked.value == 7_000 && late.value == 7_670 && last.value == 9_990)
        // Delete before them (in their clusters and whole clusters), then add more.
        let deleted = Set(Array(0..<300) + Array(600..<700).filter { $0 % 3 == 0 } + Array(701..<767))
        try db.write {
            for id in deleted.sorted() {
                if let item = db.object(ofType: PositionItem.self, forPrimaryKey: id) { db.delete(item) }
            }
            // Reads inside the write see the moved rows too.
            #expect(looked.value == 7_000 && late.value == 7_670 && last.value == 9_990)
            for id in Self.count..<(Self.count + 300) {
                let item = PositionItem()
                item.id = id
                item.value = id * 10
                item.label = "item \(id)"
                db.add(item)
            }
        }
        #expect(looked.value == 7_000 && looked.label == "item 700")
        #expect(late.value == 7_670 && late.label == "item 767")
        #expect(last.value == 9_990 && last.label == "item 999")
        let surviving = (0..<(Self.count + 300)).filter { !deleted.contains($0) }
        Self.expectConsistent(db, surviving: surviving)
    }

    @Test func objectsReadTheirOwnValuesAfterAnotherInstanceMovesThemAndTheyRefresh() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [PositionItem.self])
        let db = try Database(configuration: config)
        db.autorefresh = false
        try Self.fill(db)
        // Warm every cached position: lookups in random (seeded) order, then an iteration.
        var generator = SplitMix64(seed: 42)
        let order = (0..<Self.count).shuffled(using: &generator)
        var held: [(id: Int, item: PositionItem)] = []
        for id in order.prefix(200) {
            guard let item = db.object(ofType: PositionItem.self, forPrimaryKey: id) else { continue }
            #expect(item.value == id * 10)
            held.append((id, item))
        }
        let iterated = Array(db.objects(PositionItem.self))
        #expect(iterated.count == Self.count)
        // Another instance (on its own queue) deletes every object whose id is a multiple of 4
        // or below 256, and updates the rest's labels.
        let queue = DispatchQueue(label: "position-writer")
        try queue.sync {
            let other = try Database(configuration: config, queue: queue)
            try other.write {
                for item in Array(other.objects(PositionItem.self)) where item.id % 4 == 0 || item.id < 256 {
                    other.delete(item)
                }
                for item in other.objects(PositionItem.self) { item.label = "moved \(item.id)" }
            }
        }
        // Before the refresh the instance still reads its own version.
        #expect(iterated[500].label == "item 500")
        #expect(db.refresh())
        let surviving = (0..<Self.count).filter { $0 % 4 != 0 && $0 >= 256 }
        for (id, item) in held {
            #expect(item.isInvalidated == !surviving.contains(id))
            if item.isInvalidated { continue }
            #expect(item.id == id)
            #expect(item.value == id * 10)
            #expect(item.label == "moved \(id)")
        }
        for id in surviving {
            let item = db.object(ofType: PositionItem.self, forPrimaryKey: id)
            #expect(item?.value == id * 10)
            #expect(item?.label == "moved \(id)")
        }
        for id in 0..<Self.count where !surviving.contains(id) {
            #expect(db.object(ofType: PositionItem.self, forPrimaryKey: id) == nil)
        }
        #expect(db.objects(PositionItem.self).map(\.id) == surviving)
    }

    /// Iteration steps through each cluster by a cached, unretained reference to it (Results
    /// `Iterator.current`): every object comes once, in order, across clusters emptied and
    /// thinned by deletes; the iterator stays finished; a copy made midway goes on by itself;
    /// and objects handed out earlier keep reading their own values while iteration goes on.
    @Test func iterationVisitsEveryObjectOnceAcrossClustersAndStaysFinished() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [PositionItem.self]))
        try Self.fill(db)
        // The second cluster emptied, the third thinned, one object left alone in the fourth.
        let deleted = Set(Array(256..<512) + Array(512..<768).filter { $0 % 5 != 0 } + Array(769..<1_000))
        try db.write {
            for id in deleted.sorted() {
                if let item = db.object(ofType: PositionItem.self, forPrimaryKey: id) { db.delete(item) }
            }
        }
        let surviving = (0..<Self.count).filter { !deleted.contains($0) }

        var iterator = db.objects(PositionItem.self).makeIterator()
        var seen: [PositionItem] = []
        var copy: Results<PositionItem>.Iterator?
        while let item = iterator.next() {
            #expect(item.value == item.id * 10 && item.label == "item \(item.id)")
            seen.append(item)
            if seen.count == 200 { copy = iterator }
        }
        #expect(seen.map(\.id) == surviving)
        for _ in 0..<3 { #expect(iterator.next() == nil) }
        // Earlier objects still read their own rows (their clusters kept by their slots).
        for item in seen { #expect(item.value == item.id * 10 && item.label == "item \(item.id)") }

        var rest: [Int] = []
        if var copy { while let item = copy.next() { rest.append(item.id) } }
        #expect(rest == Array(surviving.dropFirst(200)))
    }

    /// A managed object holds its database instance (`_ObjectSlot.core`) exactly while it
    /// lives: reads work after every `Database` value is gone, and the instance goes away with
    /// the last object.
    @Test func objectsKeepTheirInstanceAliveUntilTheLastGoes() throws {
        let folder = TemporaryFolder()
        weak var core: DatabaseCore?
        var objects: [PositionItem] = []
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [PositionItem.self]))
            try Self.fill(db)
            if let item = db.object(ofType: PositionItem.self, forPrimaryKey: 3) { objects.append(item) }
            objects.append(contentsOf: db.objects(PositionItem.self).prefix(300))
            core = objects.first?._slot.core
        }
        #expect(core != nil)
        #expect(objects.count == 301)
        #expect(objects[0].value == 30 && objects[300].label == "item 299")
        #expect(objects[0].database != nil)
        objects.removeAll()
        #expect(core == nil)
    }
}
