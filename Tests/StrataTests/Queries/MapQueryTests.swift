// Queries through maps: a key's value (`scores['a']`), any key (`@allKeys`), any value
// (`@allValues`, `ANY scores`), `@count` and aggregates, properties of a map's objects; the
// typed DSL and string predicates agree; errors for misuse.

import Foundation
import Testing
@testable import Strata
import StrataStore

@Suite struct MapQueryTests {
    let folder = TemporaryFolder()

    /// Ann {a: 1, b: 5} friends {best: Bo}; Bo {a: 7} notes {x: nil}; Cy {} friends {best: nil};
    /// Di {level 1: 3, z: 9} notes {x: "hi"} friends {old: Ann, best: Cy}.
    private func seeded() throws -> Database {
        let db = try Database(configuration: folder.configuration(objectTypes: [Player.self]))
        try db.write {
            let ann = db.create(Player.self, value: ["id": 1, "name": "Ann", "scores": ["a": 1, "b": 5]])
            let bo = db.create(Player.self, value: ["id": 2, "name": "Bo", "scores": ["a": 7], "notes": ["x": NSNull()]])
            let cy = db.create(Player.self, value: ["id": 3, "name": "Cy"])
            let di = db.create(Player.self, value: ["id": 4, "name": "Di", "scores": ["level 1": 3, "z": 9], "notes": ["x": "hi"]])
            ann.friends["best"] = bo
            cy.friends["best"] = .some(nil)
            di.friends["old"] = ann
            di.friends["best"] = cy
        }
        return db
    }

    private func names(_ results: Results<Player>) -> [String] { results.map(\.name).sorted() }

    private func names(_ db: Database, _ format: String, _ arguments: Any...) throws -> [String] {
        names(try db.objects(Player.self).filter(FilterPredicate(format, argumentArray: arguments)))
    }

    @Test func aKeysValue() throws {
        let db = try seeded()
        #expect(names(db.objects(Player.self).where { $0.scores["a"] > 2 }) == ["Bo"])
        #expect(try names(db, "scores['a'] > 2") == ["Bo"])
        #expect(try names(db, "scores[\"a\"] == 1") == ["Ann"])
        // Keys after the first: the value at the key's own position.
        #expect(try names(db, "scores['b'] == 5 OR scores['z'] == 9") == ["Ann", "Di"])
        #expect(names(db.objects(Player.self).where { $0.scores["z"] == 3 }).isEmpty)
        #expect(try names(db, "scores[%@] >= %@", "level 1", 3) == ["Di"])
        // A missing key reads as nil.
        #expect(try names(db, "scores['a'] == nil") == ["Cy", "Di"])
        #expect(try names(db, "notes['x'] == nil") == ["Ann", "Bo", "Cy"])
        #expect(names(db.objects(Player.self).where { $0.notes["x"] == "hi" }) == ["Di"])
        #expect(try names(db, "notes['x'] BEGINSWITH[c] 'H'") == ["Di"])
    }

    @Test func anyKeyAndAnyValue() throws {
        let db = try seeded()
        #expect(names(db.objects(Player.self).where { $0.scores.keys == "a" }) == ["Ann", "Bo"])
        #expect(try names(db, "scores.@allKeys == 'z'") == ["Di"])
        #expect(try names(db, "ANY scores.@allKeys BEGINSWITH 'level'") == ["Di"])
        #expect(names(db.objects(Player.self).where { $0.scores.values > 6 }) == ["Bo", "Di"])
        #expect(try names(db, "scores.@allValues > 6") == ["Bo", "Di"])
        #expect(try names(db, "ANY scores > 6") == ["Bo", "Di"])
        #expect(try names(db, "ALL scores.@allValues < 6") == ["Ann", "Cy"])
        #expect(names(db.objects(Player.self).where { $0.scores.contains(5) }) == ["Ann"])
        #expect(try names(db, "5 IN scores") == ["Ann"])
    }

    @Test func countsAndAggregates() throws {
        let db = try seeded()
        #expect(names(db.objects(Player.self).where { $0.scores.count == 2 }) == ["Ann", "Di"])
        #expect(try names(db, "scores.@count == 0") == ["Cy"])
        #expect(names(db.objects(Player.self).where { $0.scores.values.sum > 10 }) == ["Di"])
        #expect(try names(db, "scores.@max > 6") == ["Bo", "Di"])
        #expect(try names(db, "scores.@allValues.@min == 1") == ["Ann"])
    }

    @Test func theObjectsOfAMap() throws {
        let db = try seeded()
        #expect(names(db.objects(Player.self).where { $0.friends["best"].name == "Bo" }) == ["Ann"])
        #expect(try names(db, "friends['best'].name == 'Cy'") == ["Di"])
        #expect(try names(db, "friends['old'].name == 'Ann'") == ["Di"])
        #expect(try names(db, "friends['best'] == nil") == ["Bo", "Cy"])
        #expect(names(db.objects(Player.self).where { $0.friends.values.name == "Ann" }) == ["Di"])
        #expect(try names(db, "ANY friends.name == 'Bo'") == ["Ann"])
        #expect(try names(db, "friends.@allValues.scores['a'] == 1") == ["Di"])
        let ann = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        #expect(try names(db, "ANY friends == %@", ann) == ["Di"])
        // The map's own results: its objects, nil values left out.
        let di = try #require(db.object(ofType: Player.self, forPrimaryKey: 4))
        #expect(di.friends.where { $0.name != "" }.map(\.name) == ["Cy", "Ann"])  // key order: best, old
        #expect(di.friends.sorted(byKeyPath: "name").map(\.name) == ["Ann", "Cy"])
        #expect(di.friends.filter("name == 'Ann'").count == 1)
    }

    @Test func liveResultsFollowTheirMaps() throws {
        let db = try seeded()
        let high = db.objects(Player.self).where { $0.scores["a"] > 2 }
        var changes: [String] = []
        let token = high.observe { change in
            if case .update(let results, let deletions, let insertions, _) = change {
                changes.append("-\(deletions) +\(insertions) \(results.map(\.name))")
            }
        }
        let ann = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        try db.write { ann.scores["a"] = 10 }
        try db.write { ann.scores.removeObject(for: "a") }
        #expect(changes == ["-[] +[0] [\"Ann\", \"Bo\"]", "-[0] +[] [\"Bo\"]"])
        token.invalidate()
    }

    @Test func predicatesPrintAndParseBack() throws {
        let predicate = try FilterPredicate("scores['a b'] > 2 AND scores.@allKeys == 'x' AND friends[%@].name == 'Bo' AND ANY scores.@allValues > 1", "best")
        let printed = predicate.predicate.description
        #expect(printed.contains("scores[\"a b\"]") && printed.contains("friends[\"best\"].name") && printed.contains("scores.@allKeys"))
        #expect(try FilterPredicate(printed).predicate == predicate.predicate)
    }

    @Test func misuseIsAClearError() throws {
        let db = try seeded()
        func message(_ format: String, _ arguments: Any...) -> String {
            do {
                _ = try db.objects(Player.self).filter(FilterPredicate(format, argumentArray: arguments)).count
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(message("name['a'] == 1").contains("not a map"))
        #expect(message("scores.@allKeys.x == 1").contains("must end"))
        #expect(message("scores['a'].x == 1").contains("no property"))
        #expect(message("scores[%@] == 1", 5).contains("must be a string"))
        #expect(message("scores['a' == 1").contains("']'"))
        #expect(message("scores['a'] == 'text'").contains("cannot compare"))
    }
}
