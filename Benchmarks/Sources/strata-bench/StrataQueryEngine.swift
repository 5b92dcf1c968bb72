// Strata in the query workloads: `Member` as an `Object` subclass with `team` indexed, a
// database isolated to the engine's actor, full durability, and queries as an app writes them:
// `where { $0.age > age && $0.active }.count`, `where { $0.team == team }.count` (answered
// by the index), and `sorted(byKeyPath: "score", ascending: false)` read by position.

#if !NO_STRATA
import Foundation
import Strata

final class StrataMember: Object {
    override class func className() -> String { "Member" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var score = 0.0
    @Persisted var active = false
    @Persisted(indexed: true) var team = 0
}

extension QueryEngineCatalog {
    static var strata: (any QueryEngine.Type)? { StrataQueryEngine.self }
}

actor StrataQueryEngine: QueryEngine {
    static let name = StrataEngineName
    private var db: Database!

    init(directory: String) async throws {
        let configuration = Database.Configuration(
            fileURL: URL(fileURLWithPath: directory).appendingPathComponent("members.strata"),
            objectTypes: [StrataMember.self], durability: .full)
        db = try await Database(configuration: configuration, actor: self)
    }

    func insertAll(_ members: [Member]) async throws {
        try db.write {
            for member in members {
                let object = StrataMember()
                object.id = member.id
                object.name = member.name
                object.age = member.age
                object.score = member.score
                object.active = member.active
                object.team = member.team
                db.add(object)
            }
        }
    }

    func countActive(olderThan age: Int) async throws -> Int {
        db.objects(StrataMember.self).where { $0.age > age && $0.active }.count
    }

    func count(inTeam team: Int) async throws -> Int {
        db.objects(StrataMember.self).where { $0.team == team }.count
    }

    func highestScores(limit: Int) async throws -> [Member] {
        let sorted = db.objects(StrataMember.self).sorted(byKeyPath: "score", ascending: false)
        var members: [Member] = []
        members.reserveCapacity(limit)
        for i in 0..<min(limit, sorted.count) {
            let object = sorted[i]
            members.append(Member(
                id: object.id, name: object.name, age: object.age, score: object.score,
                active: object.active, team: object.team))
        }
        return members
    }

    func close() async throws {
        db = nil
    }
}
#endif
