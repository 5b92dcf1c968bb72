// RealmSwift's `RealmCollection` protocol and `AnyRealmCollection`, used the way app code and
// RealmSwift's own collection tests use them: generic over `RealmCollection`, on `Results`,
// `List`, `MutableSet`, `LinkingObjects` and the type-erased wrapper alike.
import Foundation
import Testing
import StrataRealmCompat

class CollectionAPIDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var weight: Double?
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<CollectionAPIOwner>
}

class CollectionAPIOwner: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<CollectionAPIDog>
    @Persisted var favourites: MutableSet<CollectionAPIDog>
}

/// Records what an observation block receives (notifications arrive on the test's own thread
/// or on the queue the test waits on).
final class CollectionAPILog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []

    func append(_ entry: String) { lock.lock(); entries.append(entry); lock.unlock() }
    var lines: [String] { lock.lock(); defer { lock.unlock() }; return entries }
}

/// An actor with its own Realm, for observation and hand-over to another context.
actor CollectionAPIReader {
    var realm: Realm!

    init(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func refresh() { realm.refresh() }

    func names(_ reference: ThreadSafeReference<AnyRealmCollection<CollectionAPIDog>>) -> [String]? {
        realm.resolve(reference).map { $0.map(\.name) }
    }
}

// Generic helpers, written as app code generic over RealmSwift's protocol writes them.

private func names<C: RealmCollection>(_ dogs: C) -> [String] where C.Element == CollectionAPIDog { dogs.map(\.name) }

private func confinement<C: RealmCollection>(_ collection: C) -> (realm: Bool, invalidated: Bool, frozen: Bool, frozenCopy: Bool, thawed: Bool?) {
    let frozen = collection.freeze()
    return (collection.realm != nil, collection.isInvalidated, collection.isFrozen, frozen.isFrozen, frozen.thaw().map { !$0.isFrozen })
}

private func oldestFirst<C: RealmCollection>(_ dogs: C) -> [String] where C.Element == CollectionAPIDog {
    names(dogs.sorted(by: \.age, ascending: false))
}

private func statistics<C: RealmCollection>(_ dogs: C) -> (min: Int?, max: Int?, sum: Int, average: Int?, heaviest: Double?, meanWeight: Double?)
    where C.Element == CollectionAPIDog {
    (dogs.min(of: \.age), dogs.max(of: \.age), dogs.sum(of: \.age), dogs.average(of: \.age), dogs.max(of: \.weight), dogs.average(of: \.weight))
}

private func firstPuppy<C: RealmCollection>(_ dogs: C) -> (closure: Int?, format: Int?) where C.Element == CollectionAPIDog {
    (dogs.index(matching: { $0.age < 3 }), dogs.index(matching: "age < %@", 3))
}

private func watch<C: RealmCollection>(_ dogs: C, _ log: CollectionAPILog) -> NotificationToken where C.Element == CollectionAPIDog {
    dogs.observe(keyPaths: ["age"]) { change in
        switch change {
        case .initial(let dogs): log.append("initial \(dogs.count)")
        case .update(_, let deletions, let insertions, let modifications):
            log.append("update -\(deletions) +\(insertions) ~\(modifications)")
        case .error: log.append("error")
        }
    }
}

@Suite struct RealmCollectionAPITests {
    /// A configuration for a fresh in-memory Realm (it lives while an instance is open).
    private func makeConfiguration() -> Realm.Configuration {
        Realm.Configuration(inMemoryIdentifier: "collection-api-\(UUID().uuidString)",
                            objectTypes: [CollectionAPIDog.self, CollectionAPIOwner.self])
    }

    /// An instance of `configuration` with Rex (5, 30 kg), Fido (2) and Bella (9, 12.5 kg),
    /// all Ann's dogs (in that order), and Rex and Bella her favourites.
    private func populate(_ configuration: Realm.Configuration) throws -> (realm: Realm, ann: CollectionAPIOwner) {
        let realm = try Realm(configuration: configuration)
        var ann: CollectionAPIOwner!
        try realm.write {
            let rex = realm.create(CollectionAPIDog.self, value: ["name": "Rex", "age": 5, "weight": 30.0])
            let fido = realm.create(CollectionAPIDog.self, value: ["name": "Fido", "age": 2])
            let bella = realm.create(CollectionAPIDog.self, value: ["name": "Bella", "age": 9, "weight": 12.5])
            ann = realm.create(CollectionAPIOwner.self, value: ["name": "Ann", "dogs": [rex, fido, bella]])
            ann.favourites.insert(rex)
            ann.favourites.insert(bella)
        }
        return (realm, ann)
    }

    private func populated() throws -> (realm: Realm, ann: CollectionAPIOwner, configuration: Realm.Configuration) {
        let configuration = makeConfiguration()
        let (realm, ann) = try populate(configuration)
        return (realm, ann, configuration)
    }

    // MARK: ThreadConfined through the protocol

    @Test func genericCodeReadsRealmFreezesAndThawsEveryKindOfCollection() throws {
        let (realm, ann, _) = try populated()
        let rex = try #require(realm.objects(CollectionAPIDog.self).filter("name == 'Rex'").first)
        for state in [confinement(realm.objects(CollectionAPIDog.self)), confinement(ann.dogs), confinement(ann.favourites),
                      confinement(rex.owners), confinement(AnyRealmCollection(ann.dogs)),
                      confinement(AnyRealmCollection(realm.objects(CollectionAPIDog.self)))] {
            #expect(state.realm && !state.invalidated && !state.frozen && state.frozenCopy && state.thawed == true)
        }
        let frozen = AnyRealmCollection(ann.dogs).freeze()
        #expect(frozen.isFrozen && names(frozen) == ["Rex", "Fido", "Bella"])
        try realm.write { ann.dogs.removeFirst() }
        #expect(names(frozen) == ["Rex", "Fido", "Bella"])
        #expect(frozen.thaw().map(names) == ["Fido", "Bella"])
    }

    @Test func collectionsOfADeletedObjectAreInvalidated() throws {
        let (realm, ann, _) = try populated()
        let rex = try #require(realm.objects(CollectionAPIDog.self).first)
        let dogs = ann.dogs, favourites = ann.favourites, owners = rex.owners
        let any = AnyRealmCollection(ann.dogs), sorted = ann.dogs.sorted(byKeyPath: "age")
        #expect(!sorted.isInvalidated)
        try realm.write { realm.delete(ann); realm.delete(rex) }
        #expect(dogs.isInvalidated && favourites.isInvalidated && owners.isInvalidated && any.isInvalidated && sorted.isInvalidated)
        #expect(realm.objects(CollectionAPIDog.self).isInvalidated == false)
        #expect(dogs.description == "List<CollectionAPIDog> (invalidated)")
        #expect(List<CollectionAPIDog>().isInvalidated == false)
    }

    @Test func anAnyRealmCollectionCrossesToAnActorThroughAThreadSafeReference() async throws {
        let configuration = makeConfiguration()
        let reader = try await CollectionAPIReader(configuration)
        // The Realm is used only in this synchronous part (an async test may resume on
        // another thread after an await).
        let (ofList, ofResults, ofSet) = try {
            let (realm, ann) = try populate(configuration)
            return (ThreadSafeReference(to: AnyRealmCollection(ann.dogs)),
                    ThreadSafeReference(to: AnyRealmCollection(realm.objects(CollectionAPIDog.self).sorted(byKeyPath: "name"))),
                    ThreadSafeReference(to: AnyRealmCollection(ann.favourites)))
        }()
        #expect(await reader.names(ofList) == ["Rex", "Fido", "Bella"])
        #expect(await reader.names(ofResults) == ["Bella", "Fido", "Rex"])
        #expect(await reader.names(ofSet) == ["Rex", "Bella"])
    }

    // MARK: Observation through the protocol

    @Test func genericCodeObservesWithoutNamingAQueue() throws {
        let (realm, ann, _) = try populated()
        let listLog = CollectionAPILog(), resultsLog = CollectionAPILog(), anyLog = CollectionAPILog()
        let tokens = [watch(ann.dogs, listLog), watch(realm.objects(CollectionAPIDog.self), resultsLog),
                      watch(AnyRealmCollection(ann.dogs), anyLog)]
        #expect(listLog.lines == ["initial 3"] && resultsLog.lines == ["initial 3"] && anyLog.lines == ["initial 3"])
        let fido = ann.dogs[1]
        try realm.write { fido.age = 3 }
        // A property the key paths do not name changes nothing.
        try realm.write { fido.name = "Fido II" }
        try realm.write { ann.dogs.remove(at: 0) }
        #expect(listLog.lines == ["initial 3", "update -[] +[] ~[1]", "update -[0] +[] ~[]"])
        #expect(anyLog.lines == listLog.lines)
        #expect(resultsLog.lines == ["initial 3", "update -[] +[] ~[1]"])
        tokens.forEach { $0.invalidate() }
    }

    @Test func genericCodeObservesWithKeyPathsAndOnTheDatabasesQueue() throws {
        let (populatedRealm, _, configuration) = try populated()
        defer { withExtendedLifetime(populatedRealm) {} }   // it keeps the in-memory Realm's data
        let queue = DispatchQueue(label: "collection-api-observer")
        let log = CollectionAPILog()
        func observeAges<C: RealmCollection>(_ dogs: C, on queue: DispatchQueue) -> NotificationToken where C.Element == CollectionAPIDog {
            dogs.observe(keyPaths: [\CollectionAPIDog.age], on: queue) { change in
                if case .update(let dogs, _, _, let modifications) = change { log.append("\(names(dogs)) ~\(modifications)") }
                if case .initial(let dogs) = change { log.append("initial \(dogs.count)") }
            }
        }
        let token: NotificationToken = try queue.sync {
            let realm = try Realm(configuration: configuration, queue: queue)
            let token = observeAges(AnyRealmCollection(realm.objects(CollectionAPIDog.self)), on: queue)
            try realm.write { realm.objects(CollectionAPIDog.self).filter("name == 'Bella'").first?.age = 10 }
            return token
        }
        // Whatever the queue still has to deliver runs before this.
        queue.sync { log.append("drained") }
        #expect(log.lines == ["initial 3", "[\"Rex\", \"Fido\", \"Bella\"] ~[2]", "drained"])
        queue.sync { _ = token.invalidate() }
    }

    @Test func anAnyRealmCollectionIsObservedOnAnotherActor() async throws {
        let configuration = makeConfiguration()
        let reader = try await CollectionAPIReader(configuration)
        let log = CollectionAPILog()
        let token: NotificationToken = try await {
            let (_, ann) = try populate(configuration)
            return await AnyRealmCollection(ann.dogs).observe(keyPaths: nil, on: reader) { _, change in
                switch change {
                case .initial(let dogs): log.append("initial " + names(dogs).joined(separator: ","))
                case .update(let dogs, let deletions, _, _): log.append("update -\(deletions) " + names(dogs).joined(separator: ","))
                case .error: log.append("error")
                }
            }
        }()
        #expect(log.lines == ["initial Rex,Fido,Bella"])
        try {
            let realm = try Realm(configuration: configuration)
            let ann = try #require(realm.objects(CollectionAPIOwner.self).first)
            try realm.write { ann.dogs.remove(at: 1) }
        }()
        await reader.refresh()
        #expect(log.lines == ["initial Rex,Fido,Bella", "update -[1] Rex,Bella"])
        token.invalidate()
    }

    // MARK: Positions

    @Test func objectsAtIndexesReadsThoseObjectsInEveryCollection() throws {
        let (realm, ann, _) = try populated()
        func picked<C: RealmCollection>(_ dogs: C, _ indexes: IndexSet) -> [String] where C.Element == CollectionAPIDog {
            dogs.objects(at: indexes).map(\.name)
        }
        #expect(picked(realm.objects(CollectionAPIDog.self), [0, 2]) == ["Rex", "Bella"])
        #expect(picked(ann.dogs, [1, 2]) == ["Fido", "Bella"])
        #expect(picked(ann.favourites, [1]) == ["Bella"])
        #expect(picked(AnyRealmCollection(ann.dogs.sorted(byKeyPath: "name")), [0, 1]) == ["Bella", "Fido"])
        #expect(picked(ann.dogs, []) == [])
        let rex = ann.dogs[0]
        #expect(rex.owners.objects(at: [0]).map(\.name) == ["Ann"])
    }

    @Test func indexMatchingFindsTheFirstMatchInTheCollectionsOrder() throws {
        let (realm, ann, _) = try populated()
        #expect(firstPuppy(realm.objects(CollectionAPIDog.self)) == (1, 1))
        #expect(firstPuppy(ann.dogs) == (1, 1))
        #expect(firstPuppy(ann.favourites) == (nil, nil))
        #expect(firstPuppy(AnyRealmCollection(ann.dogs.sorted(byKeyPath: "age"))) == (0, 0))
        let byAge = ann.dogs.sorted(byKeyPath: "age", ascending: false)
        #expect(byAge.index(matching: { $0.age > 4 }) == 0 && byAge.index(matching: "name == %@", "Rex") == 1)
        #expect(AnyRealmCollection(ann.dogs).index(of: ann.dogs[2]) == 2)
        // Strata's typed form of the predicate (RealmSwift's takes an NSPredicate) reports a bad one.
        #expect(throws: QueryError.self) { try ann.dogs.index(matching: FilterPredicate("height > 3")) }
        #expect(try ann.dogs.index(matching: FilterPredicate("weight == nil")) == 1)
    }

    // MARK: Key-path sorting and aggregates

    @Test func genericCodeSortsAndAggregatesByKeyPath() throws {
        let (realm, ann, _) = try populated()
        #expect(oldestFirst(realm.objects(CollectionAPIDog.self)) == ["Bella", "Rex", "Fido"])
        #expect(oldestFirst(ann.favourites) == ["Bella", "Rex"])
        #expect(oldestFirst(AnyRealmCollection(ann.dogs)) == ["Bella", "Rex", "Fido"])
        for stats in [statistics(realm.objects(CollectionAPIDog.self)), statistics(ann.dogs), statistics(AnyRealmCollection(ann.dogs))] {
            #expect(stats.min == 2 && stats.max == 9 && stats.sum == 16)
            #expect(stats.average == 5)   // as the property's type: Int, truncated
            #expect(stats.heaviest == 30 && stats.meanWeight == 21.25)
        }
        let rex = ann.dogs[0]
        #expect(statistics(rex.owners.first!.dogs.filter("age > 100")).sum == 0)
        #expect(statistics(rex.owners.first!.dogs.filter("age > 100")).min == nil)
        // The names RealmSwift also accepts.
        func total<C: RealmCollection>(_ dogs: C) -> Int where C.Element == CollectionAPIDog { dogs.sum(ofProperty: "age") }
        #expect(total(ann.favourites) == 14)
        #expect(names(AnyRealmCollection(ann.dogs).sorted(byKeyPath: "name")) == ["Bella", "Fido", "Rex"])
        // Distinct by key path, through the protocol.
        try realm.write { ann.dogs.append(realm.create(CollectionAPIDog.self, value: ["name": "Rex", "age": 1])) }
        func distinctNames<C: RealmCollection>(_ dogs: C) -> [String] where C.Element == CollectionAPIDog {
            names(dogs.distinct(by: [\CollectionAPIDog.name]))
        }
        #expect(distinctNames(AnyRealmCollection(ann.dogs)) == ["Rex", "Fido", "Bella"])
        #expect(distinctNames(ann.dogs).count == 3 && ann.dogs.count == 4)
    }

    // MARK: description

    @Test func descriptionListsTheObjectsWithTheirPropertiesInRealmSwiftsShape() throws {
        let (realm, ann, _) = try populated()
        let listed = realm.objects(CollectionAPIDog.self).sorted(byKeyPath: "name").description
        #expect(listed.range(of: #"^Results<CollectionAPIDog> <0x[0-9a-f]+> \(\n\t\[0\] CollectionAPIDog \{\n"#, options: .regularExpression) != nil)
        #expect(listed.contains("\t\tname = Bella;") && listed.contains("[2] CollectionAPIDog {") && listed.hasSuffix("\n)"))
        #expect(ann.dogs.description.range(of: #"^List<CollectionAPIDog> <0x[0-9a-f]+> \(\n\t\[0\] CollectionAPIDog \{"#, options: .regularExpression) != nil)
        #expect(ann.dogs[0].owners.description.contains("name = Ann;"))
        // AnyRealmCollection prints the collection it wraps.
        #expect(AnyRealmCollection(ann.favourites).description.hasPrefix("MutableSet<CollectionAPIDog> <0x"))
        #expect(realm.objects(CollectionAPIDog.self).filter("age > 100").description
                    .range(of: #"^Results<CollectionAPIDog> <0x[0-9a-f]+> \(\n\n\)$"#, options: .regularExpression) != nil)
    }

    @Test func descriptionOfALargeCollectionShowsTheFirstHundred() throws {
        let (realm, _, _) = try populated()
        try realm.write {
            for index in 0..<200 { realm.create(CollectionAPIDog.self, value: ["name": "Dog \(index)", "age": index]) }
        }
        let listed = realm.objects(CollectionAPIDog.self).description
        #expect(listed.contains("[99] CollectionAPIDog {") && !listed.contains("[100]"))
        #expect(listed.contains("\t... and 103 more\n)"))
    }

    // MARK: Equatable

    @Test func resultsAreEqualWhenTheyAreTheSameQueryOnTheSameRealm() throws {
        let (realm, ann, configuration) = try populated()
        let dogs = realm.objects(CollectionAPIDog.self)
        #expect(dogs == dogs)
        #expect(dogs == realm.objects(CollectionAPIDog.self))
        #expect(dogs.filter("age > 3").sorted(byKeyPath: "name") == dogs.filter("age > 3").sorted(byKeyPath: "name"))
        #expect(dogs.filter("age > 3") != dogs.filter("age > 4"))
        #expect(dogs.sorted(byKeyPath: "name") != dogs.sorted(byKeyPath: "name", ascending: false))
        // The same objects through another query are another collection.
        #expect(dogs.filter("age > 0") != dogs)
        #expect(ann.dogs.sorted(byKeyPath: "age") == ann.dogs.sorted(byKeyPath: "age"))
        #expect(ann.dogs.sorted(byKeyPath: "age") != dogs.sorted(byKeyPath: "age"))
        let other = try Realm(configuration: configuration)
        #expect(other.objects(CollectionAPIDog.self) == dogs)   // the same instance on this thread
        #expect(dogs.freeze() != dogs)
        var initial: Results<CollectionAPIDog>?
        let token = dogs.observe { if case .initial(let delivered) = $0 { initial = delivered } }
        #expect(initial == dogs)
        token.invalidate()
    }

    @Test func linkingObjectsAreEqualWhenTheyAreTheSameObjectsBacklinks() throws {
        let (realm, ann, _) = try populated()
        let rex = ann.dogs[0], fido = ann.dogs[1]
        #expect(rex.owners == rex.owners)
        #expect(rex.owners == realm.objects(CollectionAPIDog.self).filter("name == 'Rex'").first!.owners)
        #expect(rex.owners != fido.owners)
        #expect(CollectionAPIDog().owners == CollectionAPIDog().owners)
        #expect(CollectionAPIDog().owners != rex.owners)
    }

    @Test func anyRealmCollectionsAreEqualWhenTheyWrapTheSameCollection() throws {
        let (realm, ann, _) = try populated()
        let rex = ann.dogs[0]
        #expect(AnyRealmCollection(ann.dogs) == AnyRealmCollection(ann.dogs))
        #expect(AnyRealmCollection(ann.dogs) == AnyRealmCollection(realm.objects(CollectionAPIOwner.self).first!.dogs))
        #expect(AnyRealmCollection(ann.favourites) == AnyRealmCollection(ann.favourites))
        #expect(AnyRealmCollection(realm.objects(CollectionAPIDog.self)) == AnyRealmCollection(realm.objects(CollectionAPIDog.self)))
        #expect(AnyRealmCollection(rex.owners) == AnyRealmCollection(rex.owners))
        #expect(AnyRealmCollection(AnyRealmCollection(ann.dogs)) == AnyRealmCollection(ann.dogs))
        // The same objects in another collection are not the same collection.
        #expect(AnyRealmCollection(ann.dogs) != AnyRealmCollection(realm.objects(CollectionAPIDog.self)))
        #expect(AnyRealmCollection(ann.dogs) != AnyRealmCollection(ann.favourites))
        let unmanaged = List<CollectionAPIDog>()
        #expect(AnyRealmCollection(unmanaged) == AnyRealmCollection(unmanaged))
        #expect(AnyRealmCollection(unmanaged) != AnyRealmCollection(List<CollectionAPIDog>()))
    }
}
