import Dispatch
import Foundation
import Testing
@testable import Strata

/// An actor with its own instance, to receive values from other contexts.
actor Receiver {
    var db: Database!

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func name(of reference: ThreadSafeReference<Person>) -> String? { db.resolve(reference)?.name }

    /// Reads a `@ThreadSafe` parameter passed as `$person:` from another actor.
    func rename(@ThreadSafe person: Person?, to name: String) async throws -> Bool {
        guard let person else { return false }
        try await db.asyncWrite { person.name = name }
        return true
    }

    /// Reads a wrapper stored in a Sendable struct built elsewhere.
    func cityOfHolder(_ holder: PersonHolder) -> String? { holder.person?.city }

    func count(of reference: ThreadSafeReference<Results<Person>>) -> Int? { db.resolve(reference)?.count }
}

/// A Sendable struct with a `@ThreadSafe` stored property.
struct PersonHolder: Sendable {
    @ThreadSafe var person: Person?

    init(person: ThreadSafe<Person>) { _person = person }
}

/// A thread-confined instance opened from synchronous code (async tests use it only between
/// suspension points).
func openHere(_ configuration: Database.Configuration) throws -> Database {
    try Database(configuration: configuration, queue: nil)
}

/// Adds people in a thread-confined instance and returns a wrapper holding the one with `id`.
func seedWrapper(_ configuration: Database.Configuration, id: Int, name: String, city: String = "") throws -> ThreadSafe<Person> {
    let db = try openHere(configuration)
    try db.write { db.create(Person.self, value: ["id": id, "name": name, "city": city]) }
    @ThreadSafe var person = db.object(ofType: Person.self, forPrimaryKey: id)
    return $person
}

@Suite struct ThreadSafeReferenceTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Person.self, Dog.self]) }

    private func seed(_ db: Database) throws {
        try db.write {
            db.create(Person.self, value: ["id": 1, "name": "Ann", "city": "Oslo", "tags": ["a", "b"]])
            db.create(Person.self, value: ["id": 2, "name": "Bo", "city": "Rome"])
            db.create(Person.self, value: ["id": 3, "name": "Cy", "city": "Oslo"])
        }
    }

    @Test func anObjectResolvesOnAnotherQueue() throws {
        let config = configuration
        let db = try Database(configuration: config)
        try seed(db)
        let reference = ThreadSafeReference(to: try #require(db.object(ofType: Person.self, forPrimaryKey: 2)))
        let queue = DispatchQueue(label: "destination")
        let name: String? = try queue.sync {
            let other = try Database(configuration: config, queue: queue)
            let person = other.resolve(reference)
            #expect(person?.database == other)
            return person?.name
        }
        #expect(name == "Bo")
    }

    @Test func aDeletedObjectResolvesToNil() throws {
        let db = try Database(configuration: configuration)
        try seed(db)
        let person = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
        let reference = ThreadSafeReference(to: person)
        try db.write { db.delete(person) }
        #expect(db.resolve(reference) == nil)
    }

    @Test func anOlderDestinationIsRefreshedToFindTheObject() async throws {
        let config = configuration
        let receiver = try await Receiver(config)  // reads the empty version
        let reference = try { () throws -> ThreadSafeReference<Person> in
            let db = try openHere(config)
            try seed(db)
            return ThreadSafeReference(to: try #require(db.object(ofType: Person.self, forPrimaryKey: 3)))
        }()
        #expect(await receiver.name(of: reference) == "Cy")
    }

    @Test func resolvingInsideAWriteTransaction() throws {
        let config = configuration
        let db = try Database(configuration: config)
        try seed(db)
        let reference = ThreadSafeReference(to: try #require(db.object(ofType: Person.self, forPrimaryKey: 1)))
        let queue = DispatchQueue(label: "writer")
        try queue.sync {
            let other = try Database(configuration: config, queue: queue)
            try other.write {
                let person = try #require(other.resolve(reference))
                person.name = "Changed"
            }
        }
        db.refresh()
        #expect(db.object(ofType: Person.self, forPrimaryKey: 1)?.name == "Changed")
    }

    @Test func resultsKeepTheirQuery() async throws {
        let config = configuration
        let (oslo, all) = try { () throws -> (ThreadSafeReference<Results<Person>>, ThreadSafeReference<Results<Person>>) in
            let db = try openHere(config)
            try seed(db)
            return (ThreadSafeReference(to: db.objects(Person.self).where { $0.city == "Oslo" }),
                    ThreadSafeReference(to: db.objects(Person.self)))
        }()
        let receiver = try await Receiver(config)
        #expect(await receiver.count(of: oslo) == 2)
        #expect(await receiver.count(of: all) == 3)
    }

    @Test func sortedResultsKeepTheirOrder() throws {
        let config = configuration
        let db = try Database(configuration: config)
        try seed(db)
        let sorted = db.objects(Person.self).where { $0.city == "Oslo" }.sorted(byKeyPath: "name", ascending: false)
        let reference = ThreadSafeReference(to: sorted)
        let queue = DispatchQueue(label: "sorted")
        let names: [String] = try queue.sync {
            let other = try Database(configuration: config, queue: queue)
            return other.resolve(reference).map { $0.map(\.name) } ?? []
        }
        #expect(names == ["Cy", "Ann"])
    }

    @Test func aListResolvesToTheSameObjectsList() throws {
        let config = configuration
        let db = try Database(configuration: config)
        try seed(db)
        let tags = try #require(db.object(ofType: Person.self, forPrimaryKey: 1)).tags
        let reference = ThreadSafeReference(to: tags)
        let queue = DispatchQueue(label: "list")
        let values: [String]? = try queue.sync {
            let other = try Database(configuration: config, queue: queue)
            return other.resolve(reference).map { Array($0) }
        }
        #expect(values == ["a", "b"])
    }

    @Test func aListOfADeletedOwnerResolvesToNil() throws {
        let db = try Database(configuration: configuration)
        try seed(db)
        let person = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
        let reference = ThreadSafeReference(to: person.tags)
        try db.write { db.delete(person) }
        #expect(db.resolve(reference) == nil)
    }

    @Test func referencesAreSendable() {
        func requireSendable<T: Sendable>(_: T.Type) {}
        requireSendable(ThreadSafeReference<Person>.self)
        requireSendable(ThreadSafeReference<Results<Person>>.self)
        requireSendable(ThreadSafeReference<List<String>>.self)
        requireSendable(ThreadSafe<Person>.self)
    }
}

@Suite struct ThreadSafeWrapperTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Person.self, Dog.self]) }

    @Test func aLocalIsReadableOnAnotherQueueAndAfterwardsHere() throws {
        let config = configuration
        let db = try Database(configuration: config)
        try db.write { db.create(Person.self, value: ["id": 1, "name": "Ann"]) }
        @ThreadSafe var person = db.object(ofType: Person.self, forPrimaryKey: 1)
        let wrapper = $person
        let queue = DispatchQueue(label: "reader")
        let name: String? = try queue.sync {
            let other = try Database(configuration: config, queue: queue)
            let resolved = wrapper.wrappedValue
            #expect(resolved?.database == other)
            return resolved?.name
        }
        #expect(name == "Ann")
        // Read many times, in the original context too, where it is this thread's instance.
        #expect(person?.name == "Ann")
        #expect(person?.database == db)
    }

    @Test func becomesNilWhenTheObjectIsDeleted() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Person.self, value: ["id": 1, "name": "Ann"]) }
        @ThreadSafe var person = db.object(ofType: Person.self, forPrimaryKey: 1)
        #expect(person != nil)
        try db.write { db.deleteAll() }
        #expect(person == nil)
        person = nil
        #expect(person == nil)
    }

    @Test func aParameterCrossesActorsInSwift6() async throws {
        let config = configuration
        let person = try seedWrapper(config, id: 7, name: "Ann")
        let receiver = try await Receiver(config)
        #expect(try await receiver.rename($person: person, to: "Renamed"))
        let check = try openHere(config)
        #expect(check.object(ofType: Person.self, forPrimaryKey: 7)?.name == "Renamed")
    }

    @Test func aStoredPropertyOfASendableStructCrossesActors() async throws {
        let config = configuration
        let holder = PersonHolder(person: try seedWrapper(config, id: 8, name: "Ann", city: "Lima"))
        let receiver = try await Receiver(config)
        #expect(await receiver.cityOfHolder(holder) == "Lima")
    }

    @Test func aCapturedWrapperIsReadInsideAnotherActor() async throws {
        let config = configuration
        let wrapper = try seedWrapper(config, id: 9, name: "Zed")
        let receiver = try await Receiver(config)
        let name = await receiver.run { _ in wrapper.wrappedValue?.name }
        #expect(name == "Zed")
        let explicit = await receiver.run { receiver in wrapper.value(in: receiver.db)?.name }
        #expect(explicit == "Zed")
    }
}

extension Receiver {
    /// Runs `body` isolated to this actor.
    func run<T: Sendable>(_ body: @Sendable (isolated Receiver) -> T) -> T { body(self) }
}


@Suite struct ThreadSafeManyActorsTests {
    /// With several actors holding instances of the same file, a read inside one resolves in
    /// that actor's instance (finding the current actor asks the runtime without trapping).
    @Test func eachActorResolvesInItsOwnInstance() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Person.self, Dog.self])
        let wrapper = try seedWrapper(config, id: 1, name: "Ann")
        var receivers: [Receiver] = []
        for _ in 0..<4 { receivers.append(try await Receiver(config)) }
        for receiver in receivers {
            let same = await receiver.run { receiver in wrapper.wrappedValue?.database == receiver.db }
            #expect(same)
        }
    }
}
