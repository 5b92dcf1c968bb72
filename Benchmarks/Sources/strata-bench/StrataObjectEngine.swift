// Strata's object layer in the object workloads: the `Person` model as an `Object` subclass, a
// database isolated to the engine's actor, full durability.

#if !NO_STRATA
import Foundation
import Strata

final class StrataPerson: Object {
    override class func className() -> String { "Person" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var score = 0.0
    @Persisted var active = false
}

extension ObjectEngineCatalog {
    static var strata: (any ObjectEngine.Type)? { StrataObjectEngine.self }
}

actor StrataObjectEngine: ObjectEngine {
    static let name = StrataEngineName
    private(set) var db: Database!
    private let configuration: Database.Configuration

    init(directory: String) async throws {
        configuration = Database.Configuration(
            fileURL: URL(fileURLWithPath: directory).appendingPathComponent("objects.strata"),
            objectTypes: [StrataPerson.self], durability: .full)
        db = try await Database(configuration: configuration, actor: self)
    }

    /// One durable commit per object, synchronously on the actor.
    func insertEach(_ people: [Person]) async throws {
        for person in people {
            try db.write { db.add(StrataPerson(person)) }
        }
    }

    /// `writers` actors, each with its own instance, each starting one async write per object
    /// of its share with `commitAsyncWrite(allowGrouping: true)`; done when every completion
    /// has run (each runs once its commit is durable).
    func insertGrouped(_ people: [Person], writers: Int) async throws {
        let configuration = self.configuration
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let share = stride(from: writer, to: people.count, by: writers).map { people[$0] }
                group.addTask {
                    let actor = try await StrataGroupedWriter(configuration)
                    try await actor.insert(share)
                }
            }
            try await group.waitForAll()
        }
        db.refresh()
    }

    func insertAll(_ people: [Person]) async throws {
        try db.write {
            for person in people {
                let object = StrataPerson()
                object.id = person.id
                object.name = person.name
                object.age = person.age
                object.score = person.score
                object.active = person.active
                db.add(object)
            }
        }
    }

    func scan() async throws -> ObjectScanSums {
        var sums = ObjectScanSums()
        for person in db.objects(StrataPerson.self) {
            sums.add(name: person.name, age: person.age, score: person.score)
        }
        return sums
    }

    func sumAges(ofIDs ids: [Int]) async throws -> Int {
        var sum = 0
        for id in ids {
            guard let person = db.object(ofType: StrataPerson.self, forPrimaryKey: id) else {
                throw BenchError("strata: no person \(id)")
            }
            sum &+= person.age
        }
        return sum
    }

    func incrementAllAges(_ people: [Person]) async throws {
        try db.write {
            for person in people {
                guard let object = db.object(ofType: StrataPerson.self, forPrimaryKey: person.id) else { continue }
                object.age += 1
            }
        }
    }

    func deleteAll(_ people: [Person]) async throws {
        try db.write {
            for person in people {
                guard let object = db.object(ofType: StrataPerson.self, forPrimaryKey: person.id) else { continue }
                db.delete(object)
            }
        }
    }

    func close() async throws {
        db = nil
    }
}

extension StrataPerson {
    convenience init(_ person: Person) {
        self.init()
        id = person.id
        name = person.name
        age = person.age
        score = person.score
        active = person.active
    }
}

/// One writer of `grouped-async`.
actor StrataGroupedWriter {
    private var db: Database!

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func insert(_ people: [Person]) async throws {
        guard !people.isEmpty else { return }
        let failed: Bool = await withCheckedContinuation { continuation in
            var remaining = people.count
            var failed = false
            for person in people {
                db.beginAsyncWrite {
                    self.db.add(StrataPerson(person))
                    self.db.commitAsyncWrite(allowGrouping: true) { error in
                        if error != nil { failed = true }
                        remaining -= 1
                        if remaining == 0 { continuation.resume(returning: failed) }
                    }
                }
            }
        }
        if failed { throw BenchError("strata: a grouped commit failed") }
    }
}
#endif
