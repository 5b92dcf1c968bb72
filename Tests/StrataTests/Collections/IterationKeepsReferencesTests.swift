import Foundation
import Testing
@testable import Strata
import StrataTestWorkloads

/// A model whose instances count their initialisations (a static counter is not a stored
/// property, so the class stays recyclable).
final class RecycledItem: Object {
    nonisolated(unsafe) static var made = 0
    @Persisted(primaryKey: true) var id = 0
    @Persisted var label = ""
    @Persisted var score = 0.0

    required init() {
        RecycledItem.made += 1
        super.init()
    }
}

/// A model with a stored property that is not persisted: its instances are never reused.
final class AnnotatedItem: Object {
    @Persisted(primaryKey: true) var id = 0
    var note = ""
}

/// Holds an object without keeping it alive.
private struct UnownedHolder {
    unowned let object: RecycledItem
}

/// Results iteration reuses the previous step's accessor when nothing references it any more
/// (`ObjectWalk`, `SoleReference`); any reference the caller keeps — strong, weak or
/// unowned — must keep its object as it was.
@Suite(.serialized) struct IterationKeepsReferencesTests {
    static let count = 600  // three clusters

    private static func open(_ folder: TemporaryFolder) throws -> Database {
        let db = try Database(configuration: folder.configuration(objectTypes: [RecycledItem.self, AnnotatedItem.self]))
        try db.write {
            for id in 0..<count {
                let item = RecycledItem()
                item.id = id
                item.label = "item \(id) of the recycling test"
                item.score = Double(id) / 2
                db.add(item)
                let annotated = AnnotatedItem()
                annotated.id = id
                db.add(annotated)
            }
        }
        return db
    }

    @Test func theReferenceCountWordReadsAsTheRuntimeKeepsIt() {
        // Linux and Apple platforms on 64-bit processors: the layout check passes, so
        // iteration recycles there (a failure here means recycling is silently off).
        #expect(SoleReference.isSupported)
    }

    @Test func iterationWithoutKeptObjectsReusesOneAccessor() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        RecycledItem.made = 0
        var expected = 0
        for item in db.objects(RecycledItem.self) {
            #expect(item.id == expected)
            #expect(item.label == "item \(expected) of the recycling test")
            #expect(item.score == Double(expected) / 2)
            #expect(!item.isInvalidated)
            expected += 1
        }
        #expect(expected == Self.count)
        #expect(RecycledItem.made == 1)
        // Filtered and sorted results iterate by key, and recycle too.
        RecycledItem.made = 0
        var ids: [Int] = []
        for item in db.objects(RecycledItem.self).filter("id >= 100").sorted(byKeyPath: "id", ascending: false) {
            #expect(item.label == "item \(item.id) of the recycling test")
            ids.append(item.id)
        }
        #expect(ids == Array((100..<Self.count).reversed()))
        #expect(RecycledItem.made == 1)
    }

    @Test func keptObjectsAreNeverReused() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        var kept: [RecycledItem] = []
        for item in db.objects(RecycledItem.self) where item.id % 3 == 0 {
            kept.append(item)
        }
        #expect(kept.count == Self.count / 3)
        #expect(Set(kept.map(ObjectIdentifier.init)).count == kept.count)
        for (index, item) in kept.enumerated() {
            #expect(item.id == index * 3)
            #expect(item.label == "item \(index * 3) of the recycling test")
        }
        // Kept from one step to the next only.
        var previous: RecycledItem?
        for item in db.objects(RecycledItem.self) {
            if let previous {
                #expect(previous !== item)
                #expect(previous.id == item.id - 1)
            }
            previous = item
        }
    }

    @Test func weaklyReferencedObjectsAreNeverReused() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        weak var watched: RecycledItem?
        var watchedID = -1
        for item in db.objects(RecycledItem.self) {
            // A weak reference sees its own object or, once the iteration let it go, nil.
            if let current = watched { #expect(current.id == watchedID) }
            if item.id % 50 == 7 {
                watched = item
                watchedID = item.id
            }
        }
    }

    @Test func objectsHeldUnownedAreNeverReused() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        var holders: [UnownedHolder] = []
        var identities: Set<ObjectIdentifier> = []
        var steps = 0
        for item in db.objects(RecycledItem.self) {
            // An object with an unowned reference keeps its memory until that reference goes
            // (only its strong references ended), so no later step may hand out the same
            // instance: reusing it would point the unowned reference at another object.
            #expect(!identities.contains(ObjectIdentifier(item)))
            if item.id % 100 == 1 {
                holders.append(UnownedHolder(object: item))
                identities.insert(ObjectIdentifier(item))
            }
            steps += 1
        }
        #expect(steps == Self.count)
        withExtendedLifetime(holders) {}
    }

    @Test func classesWithUnpersistedStoredPropertiesAreNotRecycled() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        for item in db.objects(AnnotatedItem.self) {
            // A reused instance would still carry the previous object's note.
            #expect(item.note == "")
            item.note = "seen \(item.id)"
        }
    }

    @Test func aRecycledAccessorIsValidAgainAfterTheLastOneWasDeleted() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        try db.write {
            var deleted = 0
            for item in db.objects(RecycledItem.self).filter("id < 100") {
                #expect(!item.isInvalidated)
                #expect(item.label == "item \(item.id) of the recycling test")
                if item.id % 2 == 0 {
                    db.delete(item)
                    #expect(item.isInvalidated)
                    deleted += 1
                }
            }
            #expect(deleted == 50)
        }
        #expect(db.objects(RecycledItem.self).count == Self.count - 50)
    }

    @Test func frozenResultsDoNotRecycle() throws {
        let folder = TemporaryFolder()
        let db = try Self.open(folder)
        let frozen = db.objects(RecycledItem.self).freeze()
        RecycledItem.made = 0
        var count = 0
        for item in frozen {
            #expect(item.label == "item \(item.id) of the recycling test")
            count += 1
        }
        #expect(count == Self.count)
        #expect(RecycledItem.made == Self.count)
    }
}
