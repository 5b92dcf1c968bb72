// ObjectCollection and AnyObjectCollection: code written once for Results, Lists of objects
// and LinkingObjects.

import Foundation
import Testing
@testable import Strata

@Suite struct ObjectCollectionTests {
    let folder = TemporaryFolder()

    /// Generic over any collection of walkers.
    private func summary<C: ObjectCollection<Walker>>(_ walkers: C) -> String {
        let sorted = walkers.sorted(byKeyPath: "name", ascending: false).map(\.name)
        let ranked = walkers.filter("rank >= %@", 2).map(\.name)
        let total: Int = walkers.sum(ofProperty: "rank")
        let top: Int? = walkers.max(ofProperty: "rank")
        return "\(walkers.count) \(sorted) \(ranked) sum \(total) max \(top.map(String.init) ?? "nil") frozen \(walkers.isFrozen)"
    }

    private func populated() throws -> (Database, Hound) {
        let db = try Database(configuration: folder.configuration(objectTypes: [Walker.self, Hound.self]))
        let rex = try db.write {
            let rex = db.create(Hound.self, value: ["id": 1, "name": "Rex"])
            let ann = db.create(Walker.self, value: ["id": 1, "name": "Ann", "rank": 2, "hounds": [rex]])
            db.create(Walker.self, value: ["id": 2, "name": "Bob", "rank": 1, "hounds": [rex]])
            db.create(Walker.self, value: ["id": 3, "name": "Cy", "rank": 3])
            ann.hounds.append(rex)
            return rex
        }
        return (db, rex)
    }

    @Test func oneFunctionServesResultsListsAndLinkingObjects() throws {
        let (db, rex) = try populated()
        let all = db.objects(Walker.self)
        #expect(summary(all) == "3 [\"Cy\", \"Bob\", \"Ann\"] [\"Ann\", \"Cy\"] sum 6 max 3 frozen false")
        #expect(summary(rex.walkers) == "2 [\"Bob\", \"Ann\"] [\"Ann\"] sum 3 max 2 frozen false")
        let friends = try db.write {
            let list = db.create(Walker.self, value: ["id": 4, "name": "Di", "rank": 0]).favouriteWalkers
            list.append(objectsIn: all.where { $0.rank > 1 })
            return list
        }
        #expect(summary(friends) == "2 [\"Cy\", \"Ann\"] [\"Ann\", \"Cy\"] sum 5 max 3 frozen false")
        #expect(summary(all.freeze()).hasSuffix("frozen true"))
    }

    @Test func anyObjectCollectionWrapsEachKind() throws {
        let (db, rex) = try populated()
        let kinds: [AnyObjectCollection<Walker>] = [AnyObjectCollection(db.objects(Walker.self).sorted(byKeyPath: "id")),
                                                    AnyObjectCollection(rex.walkers)]
        #expect(kinds.map { $0.map(\.name) } == [["Ann", "Bob", "Cy"], ["Ann", "Bob"]])
        #expect(kinds.map { $0.where { $0.rank == 1 }.map(\.name) } == [["Bob"], ["Bob"]])
        let bob = try #require(db.object(ofType: Walker.self, forPrimaryKey: 2))
        #expect(kinds.map { $0.index(of: bob) } == [1, 1])
        #expect(kinds.map { $0.average(ofProperty: "rank") as Double? } == [2, 1.5])
        let frozen = kinds[1].freeze()
        #expect(frozen.isFrozen && frozen.count == 2)
        // Observation delivers the wrapper with each change.
        var seen: [Int] = []
        let token = kinds[1].observe { change in
            switch change {
            case .initial(let walkers): seen.append(walkers.count)
            case .update(let walkers, _, _, _): seen.append(walkers.count)
            case .error: seen.append(-1)
            }
        }
        try db.write { db.create(Walker.self, value: ["id": 9, "name": "Eve", "hounds": [rex]]) }
        #expect(seen == [2, 3])
        #expect(frozen.count == 2)
        token.invalidate()
    }
}
