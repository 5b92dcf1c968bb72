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

    init(directory: String) async throws {
        let configuration = Database.Configuration(
            fileURL: URL(fileURLWithPath: directory).appendingPathComponent("objects.strata"),
            objectTypes: [StrataPerson.self], durability: .full)
        db = try await Database(configuration: configuration, actor: self)
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
#endif
