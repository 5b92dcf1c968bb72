// LinkingObjects: the inverse of to-one links and lists of links, declared with
// @Persisted(originProperty:), live, queryable, observable, frozen and thawed; and the schema
// errors for declarations that do not name a link back.

import Foundation
import Testing
@testable import Strata

final class Hound: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "hounds") var walkers: LinkingObjects<Walker>
    @Persisted(originProperty: "favourite") var fans: LinkingObjects<Walker>
}

final class Walker: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var rank = 0
    @Persisted var hounds: List<Hound>
    @Persisted var favourite: Hound?
    @Persisted var favouriteWalkers: List<Walker>
}

/// Origin property that does not exist.
final class StrayBadOrigin: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "missing") var walkers: LinkingObjects<Walker>
}

/// Origin property that is not a link to this class.
final class StrayWrongKind: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "name") var walkers: LinkingObjects<Walker>
}

/// Origin property that links to another class.
final class StrayOtherTarget: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "favourite") var walkers: LinkingObjects<Walker>
}

/// No origin property at all.
final class StrayNoOrigin: Object {
    @Persisted var name = ""
    @Persisted var walkers: LinkingObjects<Walker>
}

@Suite struct LinkingObjectsTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Walker.self, Hound.self]) }

    private func names(_ walkers: some Sequence<Walker>) -> [String] { walkers.map(\.name) }

    /// Three walkers and two hounds: Ann walks Rex and Fido, Bob walks Rex; Cy's favourite is Rex.
    private func populated() throws -> (Database, rex: Hound, fido: Hound) {
        let db = try Database(configuration: configuration)
        let (rex, fido) = try db.write {
            let rex = db.create(Hound.self, value: ["id": 1, "name": "Rex", "age": 3])
            let fido = db.create(Hound.self, value: ["id": 2, "name": "Fido", "age": 5])
            let ann = db.create(Walker.self, value: ["id": 1, "name": "Ann", "rank": 2])
            ann.hounds.append(objectsIn: [rex, fido])
            let bob = db.create(Walker.self, value: ["id": 2, "name": "Bob", "rank": 1])
            bob.hounds.append(rex)
            db.create(Walker.self, value: ["id": 3, "name": "Cy", "rank": 3, "favourite": rex])
            return (rex, fido)
        }
        return (db, rex, fido)
    }

    @Test func anUnmanagedObjectsLinkingObjectsAreEmpty() {
        let hound = Hound()
        #expect(hound.walkers.isEmpty)
        #expect(hound.walkers.count == 0)
        #expect(Array(hound.walkers).isEmpty)
        #expect(!hound.walkers.isManaged)
        #expect(hound.walkers.database == nil)
        #expect(hound.walkers.propertyName == "hounds")
        #expect(hound.fans.propertyName == "favourite")
        let legacy = LinkingObjects(fromType: Walker.self, property: "hounds")
        #expect(legacy.isEmpty && legacy.propertyName == "hounds")
    }

    @Test func theyListTheObjectsLinkingThroughAListOrAToOneLink() throws {
        let (db, rex, fido) = try populated()
        #expect(names(rex.walkers) == ["Ann", "Bob"])
        #expect(rex.walkers.count == 2)
        #expect(rex.walkers.isManaged)
        #expect(rex.walkers[1].name == "Bob")
        #expect(rex.walkers.first?.name == "Ann" && rex.walkers.last?.name == "Bob")
        #expect(names(fido.walkers) == ["Ann"])
        #expect(names(rex.fans) == ["Cy"])
        #expect(fido.fans.isEmpty)
        let bob = try #require(db.object(ofType: Walker.self, forPrimaryKey: 2))
        #expect(rex.walkers.index(of: bob) == 1)
        #expect(fido.walkers.index(of: bob) == nil)
        // The same question asked of the origin type, as the docs suggest for queries.
        #expect(names(db.objects(Walker.self).where { $0.hounds.contains(rex) }) == ["Ann", "Bob"])
        #expect(names(db.objects(Walker.self).where { $0.favourite == rex }) == ["Cy"])
        // Key-value access reads them too.
        #expect((rex.value(forKey: "walkers") as? LinkingObjects<Walker>).map(names) == ["Ann", "Bob"])
        #expect((rex["fans"] as? LinkingObjects<Walker>).map(names) == ["Cy"])
        #expect((Hound()["walkers"] as? LinkingObjects<Walker>)?.isEmpty == true)
        // A freshly read object sees the same.
        let again = try #require(db.object(ofType: Hound.self, forPrimaryKey: 1))
        #expect(names(again.walkers) == ["Ann", "Bob"])
    }

    @Test func theyFollowLinksAsTheyAreMadeAndBroken() throws {
        let (db, rex, fido) = try populated()
        let walkers = rex.walkers  // a value read once stays live
        let ann = try #require(db.object(ofType: Walker.self, forPrimaryKey: 1))
        let bob = try #require(db.object(ofType: Walker.self, forPrimaryKey: 2))
        try db.write { ann.hounds.remove(at: 0) }
        #expect(names(walkers) == ["Bob"])
        try db.write { bob.favourite = fido; bob.hounds.removeAll() }
        #expect(walkers.isEmpty)
        #expect(names(fido.fans) == ["Bob"])
        try db.write { db.create(Walker.self, value: ["id": 4, "name": "Di", "hounds": [rex]]) }
        #expect(names(walkers) == ["Di"])
        // Deleting a linking object removes it; deleting the target nulls the links to it.
        try db.write { db.delete(bob) }
        #expect(fido.fans.isEmpty)
        try db.write { db.delete(fido) }
        #expect(ann.hounds.isEmpty)
    }

    @Test func anObjectLinkingTwiceThroughAListAppearsOnce() throws {
        let (db, rex, _) = try populated()
        let bob = try #require(db.object(ofType: Walker.self, forPrimaryKey: 2))
        try db.write { bob.hounds.append(rex) }
        #expect(bob.hounds.count == 2)
        #expect(names(rex.walkers) == ["Ann", "Bob"])
    }

    @Test func theyCanBeQueriedSortedAndAggregated() throws {
        let (_, rex, _) = try populated()
        #expect(names(rex.walkers.where { $0.rank > 1 }) == ["Ann"])
        #expect(names(rex.walkers.filter("name BEGINSWITH %@", "B")) == ["Bob"])
        #expect(names(rex.walkers.sorted(byKeyPath: "rank")) == ["Bob", "Ann"])
        #expect(names(rex.walkers.sorted(by: \.name, ascending: false)) == ["Bob", "Ann"])
        #expect(names(rex.walkers.sorted(by: [SortDescriptor(keyPath: "rank", ascending: false)])) == ["Ann", "Bob"])
        #expect(rex.walkers.distinct(by: ["name"]).count == 2)
        #expect(rex.walkers.min(ofProperty: "rank") as Int? == 1)
        #expect(rex.walkers.max(ofProperty: "rank") as Int? == 2)
        #expect(rex.walkers.sum(ofProperty: "rank") as Int == 3)
        #expect(rex.walkers.average(ofProperty: "rank") as Double? == 1.5)
        let unmanaged = Hound()
        #expect(unmanaged.walkers.min(ofProperty: "rank") as Int? == nil)
    }

    @Test func frozenLinkingObjectsKeepTheirVersionAndThaw() throws {
        let (db, rex, _) = try populated()
        let frozen = rex.walkers.freeze()
        #expect(frozen.isFrozen && !rex.walkers.isFrozen)
        let ann = try #require(db.object(ofType: Walker.self, forPrimaryKey: 1))
        try db.write { ann.hounds.removeAll() }
        #expect(names(frozen) == ["Ann", "Bob"])
        #expect(names(rex.walkers) == ["Bob"])
        // A frozen object's linking objects are frozen too.
        let frozenRex = rex.freeze()
        #expect(frozenRex.walkers.isFrozen)
        #expect(names(frozenRex.walkers) == ["Bob"])
        let walkersOfDeleted = rex.walkers
        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen)
        #expect(names(thawed) == ["Bob"])
        try db.write { db.delete(rex) }
        #expect(frozen.thaw() == nil)
        #expect(!frozen.isInvalidated)
        #expect(walkersOfDeleted.isInvalidated)
    }

    @Test func observingReportsObjectsThatStartAndStopLinking() throws {
        let (db, rex, _) = try populated()
        let recorder = Recorder<CollectionChange<LinkingObjects<Walker>>>()
        let token = rex.walkers.observe { recorder.record($0) }
        guard case .initial(let initial) = recorder.changes.first else { Issue.record("no initial change"); return }
        #expect(names(initial) == ["Ann", "Bob"])
        #expect(initial.propertyName == "hounds")
        let ann = try #require(db.object(ofType: Walker.self, forPrimaryKey: 1))
        try db.write { ann.hounds.removeAll() }
        #expect(recorder.changes.count == 2)
        #expect(indices(try #require(recorder.changes.last))?.deletions == [0])
        try db.write { db.create(Walker.self, value: ["id": 9, "name": "Eve", "hounds": [rex]]) }
        #expect(recorder.changes.count == 3)
        #expect(indices(try #require(recorder.changes.last))?.insertions == [1])
        if case .update(let walkers, _, _, _) = recorder.changes.last { #expect(names(walkers) == ["Bob", "Eve"]) }
        token.invalidate()
    }

    @Test func theyCrossToAnActorThroughAThreadSafeReference() async throws {
        let configuration = self.configuration
        let reference: ThreadSafeReference<LinkingObjects<Walker>> = try {
            let (_, rex, _) = try populated()
            return ThreadSafeReference(to: rex.walkers)
        }()
        let walkerActor = try await WalkerReader(configuration)
        #expect(await walkerActor.names(reference) == ["Ann", "Bob"])
        // The reference is spent; a reference to the linking objects of a deleted object
        // resolves to nil.
        let second: ThreadSafeReference<LinkingObjects<Walker>> = try {
            let db = try Database(configuration: configuration)
            let fido = try #require(db.object(ofType: Hound.self, forPrimaryKey: 2))
            let reference = ThreadSafeReference(to: fido.walkers)
            try db.write { db.delete(fido) }
            return reference
        }()
        await walkerActor.refresh()  // to the version without fido (auto-refresh may not have run yet)
        #expect(await walkerActor.names(second) == nil)
    }

    @Test func aThreadSafeWrapperCarriesThemToAnActor() async throws {
        let wrapper: ThreadSafe<LinkingObjects<Walker>> = try {
            let (_, rex, _) = try populated()
            @ThreadSafe var walkers = rex.walkers
            return $walkers
        }()
        let reader = try await WalkerReader(configuration)
        #expect(await reader.names($of: wrapper) == ["Ann", "Bob"])
    }

    @Test func theirChangesArriveAsAnAsyncSequence() async throws {
        let reader = try await WalkerReader(configuration)
        let changes = try await reader.changesAfterRemovingAnn()
        #expect(changes == ["initial Ann,Bob", "update -[0] +[] Bob"])
    }

    @Test func anotherActorObservesThem() async throws {
        let configuration = self.configuration
        let reader = try await WalkerReader(configuration)
        let log = Log()
        let token: NotificationToken = try await {
            let (_, rex, _) = try populated()
            return await rex.walkers.observe(on: reader) { _, change in
                switch change {
                case .initial(let walkers): log.append("initial " + walkers.map(\.name).joined(separator: ","))
                case .update(let walkers, let deletions, _, _): log.append("update -\(deletions) " + walkers.map(\.name).joined(separator: ","))
                case .error: log.append("error")
                }
            }
        }()
        #expect(log.lines == ["initial Ann,Bob"])
        try {
            let db = try Database(configuration: configuration)
            let bob = try #require(db.object(ofType: Walker.self, forPrimaryKey: 2))
            try db.write { bob.hounds.removeAll() }
        }()
        await reader.refresh()
        #expect(log.lines == ["initial Ann,Bob", "update -[1] Ann"])
        token.invalidate()
    }

    @Test func theyAreNotPartOfTheStoredSchema() throws {
        let (db, _, _) = try populated()
        let schema = try #require(db.schema.objectSchemas.first { $0.name == "Hound" })
        #expect(schema.properties.map(\.name) == ["id", "name", "age"])
        let rex = try #require(db.object(ofType: Hound.self, forPrimaryKey: 1))
        #expect(rex.description.contains("walkers") == false)
    }

    @Test func theOriginTypeJoinsTheSchema() throws {
        // Only Hound is named; Walker comes in as the origin of its linking objects.
        let db = try Database(configuration: folder.configuration(objectTypes: [Hound.self]))
        #expect(db.schema.objectSchemas.map(\.name).sorted() == ["Hound", "Walker"])
    }

    @Test(arguments: [
        (StrayBadOrigin.self as Object.Type, "'Walker.missing', which does not exist"),
        (StrayWrongKind.self as Object.Type, "'Walker.name', which is"),
        (StrayOtherTarget.self as Object.Type, "not a link or list of links to 'StrayOtherTarget'"),
        (StrayNoOrigin.self as Object.Type, "without an origin property"),
    ])
    func declarationsThatDoNotLinkBackAreSchemaErrors(type: Object.Type, message: String) throws {
        let error = #expect(throws: Database.Error.self) {
            _ = try Database(configuration: folder.configuration(objectTypes: [type]))
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
        // A class that failed is not remembered as a model class for later databases.
        let later = try Database(configuration: folder.configuration("later.strata"))
        #expect(!later.schema.objectSchemas.contains { $0.name == type.className() })
    }
}

/// A subclass inherits a LinkingObjects declaration whose origin links to the superclass.
class Kennel: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "kennel") var residents: LinkingObjects<Resident>
}

final class Annex: Kennel {
    @Persisted var floor = 0
}

final class Resident: Object {
    @Persisted var name = ""
    @Persisted var kennel: Kennel?
}

@Suite struct InheritedLinkingObjectsTests {
    let folder = TemporaryFolder()

    @Test func aSubclassInheritsADeclarationThatLinksToItsSuperclassAndHasNoLinkingObjects() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [Kennel.self, Annex.self, Resident.self]))
        let (kennel, annex) = try db.write {
            let kennel = db.create(Kennel.self, value: ["name": "Main"])
            let annex = db.create(Annex.self, value: ["name": "Annex", "floor": 1])
            db.create(Resident.self, value: ["name": "Rex", "kennel": kennel])
            return (kennel, annex)
        }
        // The annex's first object has the same key as the kennel: links to Kennel objects must
        // not be read as links to it.
        #expect(kennel.residents.map(\.name) == ["Rex"])
        #expect(annex.residents.isEmpty)
        #expect(annex.residents.freeze().isEmpty)
    }
}

/// An actor reading linking objects handed to it, and following their changes.
actor WalkerReader {
    var db: Database!

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func refresh() { db.refresh() }

    /// Reads a `@ThreadSafe` parameter made in another context.
    func names(@ThreadSafe of walkers: LinkingObjects<Walker>?) -> [String]? { walkers.map { $0.map(\.name) } }

    func names(_ reference: ThreadSafeReference<LinkingObjects<Walker>>) -> [String]? {
        db.resolve(reference).map { $0.map(\.name) }
    }

    /// Populates, reads `rex.walkers.changes`, removes Ann's hounds, and describes the first
    /// two changes.
    func changesAfterRemovingAnn() async throws -> [String] {
        let rex = try db.write {
            let rex = db.create(Hound.self, value: ["id": 1, "name": "Rex"])
            db.create(Walker.self, value: ["id": 1, "name": "Ann", "hounds": [rex]])
            db.create(Walker.self, value: ["id": 2, "name": "Bob", "hounds": [rex]])
            return rex
        }
        var described: [String] = []
        for await change in rex.walkers.changes {
            switch change {
            case .initial(let walkers):
                described.append("initial " + walkers.map(\.name).joined(separator: ","))
                let ann = db.object(ofType: Walker.self, forPrimaryKey: 1)
                try await db.asyncWrite { ann?.hounds.removeAll() }
            case .update(let walkers, let deletions, let insertions, _):
                described.append("update -\(deletions) +\(insertions) " + walkers.map(\.name).joined(separator: ","))
            case .error:
                described.append("error")
            }
            if described.count == 2 { break }
        }
        return described
    }
}

/// Lines recorded by observers on other actors (guarded by a lock).
final class Log: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) { lock.lock(); stored.append(line); lock.unlock() }
    var lines: [String] { lock.lock(); defer { lock.unlock() }; return stored }
}
