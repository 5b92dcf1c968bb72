// Lists appended to and maps changed in place in the store (a loop of changes in one write
// costs each change its own values, not a copy of the collection): the same contents as the
// whole-collection writes, through commit, reopen, cancel and notifications; seeded random
// map operations checked against a dictionary.

import Foundation
import StrataTestWorkloads
import Testing
@testable import Strata
import StrataStore

@Suite struct CollectionEditTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration {
        folder.configuration(objectTypes: [Person.self, Dog.self, Player.self, Recipe.self, Cook.self])
    }

    @Test func appendsInALoopKeepEveryElementInOrder() throws {
        do {
            let db = try Database(configuration: configuration)
            try db.write { db.create(Person.self, value: ["id": 1, "tags": ["first"]]) }
            let person = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
            var updates: [[Int]] = []
            let token = person.tags.observe { change in
                if case .update(_, _, let insertions, _) = change { updates.append(insertions) }
            }
            try db.write {
                for i in 0..<2_000 { person.tags.append("t\(i)") }
                #expect(person.tags.count == 2_001 && person.tags.last == "t1999")
                person.tags.append(contentsOf: ["x", "y"])
                let dogs = person.friends
                dogs.append(Person(value: ["id": 2, "name": "Bo"]))  // an unmanaged object: added
            }
            #expect(updates == [Array(1...2_002)])
            token.invalidate()
            // A cancelled write leaves the list as it was.
            db.beginWrite()
            for i in 0..<10 { person.tags.append("gone \(i)") }
            db.cancelWrite()
            #expect(person.tags.count == 2_003)
        }
        let db = try Database(configuration: configuration)
        let person = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
        #expect(Array(person.tags) == ["first"] + (0..<2_000).map { "t\($0)" } + ["x", "y"])
        #expect(person.friends.map(\.name) == ["Bo"])
        #expect(problems(db).isEmpty)
    }

    @Test func randomListChangesMatchAnArray() throws {
        var random = SplitMix64(seed: 0x11_57)
        var model: [String] = []
        do {
            let db = try Database(configuration: configuration)
            try db.write { db.create(Person.self, value: ["id": 1]) }
            let person = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
            for round in 0..<5 {
                try db.write {
                    for step in 0..<300 {
                        let tags = person.tags
                        let value = "r\(round)s\(step)"
                        switch random.int(0..<8) {
                        case 0, 1:
                            tags.append(value)
                            model.append(value)
                        case 2:
                            let at = random.int(0...model.count)
                            tags.insert(value, at: at)
                            model.insert(value, at: at)
                        case 3 where !model.isEmpty:
                            let at = random.int(0..<model.count)
                            tags.remove(at: at)
                            model.remove(at: at)
                        case 4 where !model.isEmpty:
                            let at = random.int(0..<model.count)
                            tags.replace(index: at, object: value)
                            model[at] = value
                        case 5 where !model.isEmpty:
                            let (from, to) = (random.int(0..<model.count), random.int(0..<model.count))
                            tags.move(from: from, to: to)
                            model.insert(model.remove(at: from), at: to)
                        case 6 where model.count > 1:
                            let (i, j) = (random.int(0..<model.count), random.int(0..<model.count))
                            tags.swapAt(i, j)
                            model.swapAt(i, j)
                        default:
                            // A read in the middle: the cache must not keep a stale copy.
                            #expect(tags.count == model.count && tags.last == model.last, "round \(round) step \(step)")
                        }
                    }
                }
                #expect(Array(person.tags) == model, "round \(round)")
            }
        }
        let db = try Database(configuration: configuration)
        #expect(Array(try #require(db.object(ofType: Person.self, forPrimaryKey: 1)).tags) == model)
        #expect(problems(db).isEmpty)
    }

    @Test func randomSetChangesKeepEachMemberOnceInInsertionOrder() throws {
        var random = SplitMix64(seed: 0x5E7)
        var model: [String] = []
        let db = try Database(configuration: configuration)
        try db.write { db.create(Recipe.self, value: ["id": 1]) }
        let recipe = try #require(db.object(ofType: Recipe.self, forPrimaryKey: 1))
        for round in 0..<5 {
            try db.write {
                for _ in 0..<300 {
                    let member = "m\(random.int(0..<200))"
                    switch random.int(0..<10) {
                    case 0..<6:
                        recipe.tags.insert(member)
                        if !model.contains(member) { model.append(member) }
                    case 6..<9:
                        recipe.tags.remove(member)
                        model.removeAll { $0 == member }
                    default:
                        #expect(recipe.tags.contains(member) == model.contains(member), "round \(round)")
                    }
                }
            }
            #expect(Array(recipe.tags) == model, "round \(round)")
        }
        // A cancelled write's inserts are gone, and the next write's inserts still see them gone.
        db.beginWrite()
        recipe.tags.insert("cancelled")
        db.cancelWrite()
        try db.write { recipe.tags.insert("cancelled"); recipe.tags.insert("cancelled") }
        #expect(Array(recipe.tags) == model + ["cancelled"])
        #expect(problems(db).isEmpty)
    }

    @Test func setsTellStringsApartByTheirBytes() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"  // equal to Swift, not byte for byte
        #expect(composed == decomposed)
        let unmanaged = Recipe()
        unmanaged.tags.insert(composed)
        unmanaged.tags.insert(decomposed)
        #expect(unmanaged.tags.count == 2)
        let db = try Database(configuration: configuration)
        try db.write { db.create(Recipe.self, value: ["id": 1]) }
        let recipe = try #require(db.object(ofType: Recipe.self, forPrimaryKey: 1))
        try db.write {
            recipe.tags.insert(composed)
            recipe.tags.insert(decomposed)
            recipe.tags.insert(composed)
        }
        #expect(recipe.tags.count == 2)
        try db.write { recipe.tags.remove(decomposed) }
        #expect(Array(recipe.tags).map { Array($0.utf8) } == [Array(composed.utf8)])
        #expect(recipe.tags.contains(composed) && !recipe.tags.contains(decomposed))
    }

    @Test func randomMapChangesMatchADictionary() throws {
        var random = SplitMix64(seed: 0x5EED_0A7)
        var model: [String: Int] = [:]
        let db = try Database(configuration: configuration)
        try db.write { db.create(Player.self, value: ["id": 1]) }
        let player = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        func sortedModel() -> [(String, Int)] {
            model.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, $0.value) }
        }
        for round in 0..<6 {
            try db.write {
                for _ in 0..<400 {
                    let key = "k\(random.int(0..<300))" + (random.chance(0.1) ? "é" : "")
                    switch random.int(0..<10) {
                    case 0..<6:
                        let value = random.int(0..<1_000)
                        player.scores[key] = value
                        model[key] = value
                    case 6..<9:
                        player.scores.removeObject(for: key)
                        model[key] = nil
                    default:
                        // A read in the middle: the cache must not keep a stale copy.
                        #expect(player.scores[key] == model[key], "round \(round)")
                    }
                }
                #expect(player.scores.keys == sortedModel().map(\.0), "round \(round), in the write")
            }
            #expect(player.scores.keys == sortedModel().map(\.0), "round \(round)")
            #expect(player.scores.values == sortedModel().map(\.1), "round \(round)")
        }
        #expect(problems(db).isEmpty)
    }

    @Test func mapChangesAreReportedByKey() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Player.self, value: ["id": 1, "scores": ["a": 1, "b": 2]]) }
        let player = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        var lines: [String] = []
        let token = player.scores.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change { lines.append("-\(deletions) +\(insertions) ~\(modifications)") }
        }
        try db.write {
            player.scores["c"] = 3
            player.scores["a"] = 10
            player.scores.removeObject(for: "b")
            player.scores.removeObject(for: "zz")
        }
        #expect(lines == ["-[\"b\"] +[\"c\"] ~[\"a\"]"])
        token.invalidate()
    }
}

/// Lists and maps of embedded objects changed in place: each change adopts the objects it
/// adds and deletes the ones it removes (with the objects they embed), so the embedded tables
/// hold exactly what the parents hold, through cancel and reopen.
@Suite struct EmbeddedCollectionEditTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Inhabitant.self, Landlord.self]) }

    private func count(_ db: Database, _ type: String) -> Int { (try? db.core.session.table(named: type)?.count) ?? -1 }

    private func dwelling(_ city: String, door: Bool) -> Dwelling {
        let home = Dwelling()
        home.city = city
        if door {
            let doorway = Doorway()
            doorway.label = city
            home.door = doorway
        }
        return home
    }

    @Test func randomChangesKeepOneParentPerObject() throws {
        var random = SplitMix64(seed: 0xE3B_ED)
        var past: [String] = []
        var homes: [String: String?] = [:]
        var doors: Set<String> = []  // the cities whose dwelling has a door
        func check(_ db: Database) throws {
            let person = try #require(db.object(ofType: Inhabitant.self, forPrimaryKey: 1))
            let landlord = try #require(db.object(ofType: Landlord.self, forPrimaryKey: 1))
            #expect(person.past.map(\.city) == past)
            #expect(landlord.homes.keys == homes.keys.sorted { MapKeyOrder.precedes($0, $1) })
            for (key, city) in homes { #expect(landlord.homes[key].map { $0?.city } == city) }
            let held = past + homes.values.compactMap { $0 }
            #expect(count(db, "Dwelling") == held.count)
            #expect(count(db, "Doorway") == held.filter(doors.contains).count)
            #expect(person.past.allSatisfy { ($0.door?.label == $0.city) == doors.contains($0.city) })
        }
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                db.create(Inhabitant.self, value: ["id": 1])
                db.create(Landlord.self, value: ["id": 1])
            }
            let person = try #require(db.object(ofType: Inhabitant.self, forPrimaryKey: 1))
            let landlord = try #require(db.object(ofType: Landlord.self, forPrimaryKey: 1))
            for round in 0..<4 {
                let cancel = round == 2
                let (savedPast, savedHomes) = (past, homes)
                db.beginWrite()
                for step in 0..<150 {
                    let city = "r\(round)s\(step)"
                    let door = random.chance(0.3)
                    if door { doors.insert(city) }
                    switch random.int(0..<9) {
                    case 0, 1:
                        person.past.append(dwelling(city, door: door))
                        past.append(city)
                    case 2:
                        let at = random.int(0...past.count)
                        person.past.insert(dwelling(city, door: door), at: at)
                        past.insert(city, at: at)
                    case 3 where !past.isEmpty:
                        let at = random.int(0..<past.count)
                        person.past.remove(at: at)
                        past.remove(at: at)
                    case 4 where !past.isEmpty:
                        let at = random.int(0..<past.count)
                        person.past.replace(index: at, object: dwelling(city, door: door))
                        past[at] = city
                    case 5 where past.count > 1:
                        let (from, to) = (random.int(0..<past.count), random.int(0..<past.count))
                        person.past.move(from: from, to: to)
                        past.insert(past.remove(at: from), at: to)
                    case 6, 7:
                        let key = "k\(random.int(0..<40))"
                        let value: Dwelling? = random.chance(0.2) ? nil : dwelling(city, door: door)
                        landlord.homes[key] = .some(value)
                        homes[key] = .some(value.map { _ in city })
                    default:
                        let key = "k\(random.int(0..<40))"
                        landlord.homes[key] = nil
                        homes[key] = nil
                    }
                }
                if cancel {
                    db.cancelWrite()
                    (past, homes) = (savedPast, savedHomes)
                } else {
                    try db.commitWrite()
                }
                try check(db)
            }
            #expect(problems(db).isEmpty)
        }
        try check(try Database(configuration: configuration))
    }

    @Test func anObjectHeldAlreadyCannotBeAppendedAgain() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let person = db.create(Inhabitant.self, value: ["id": 1])
            person.past.append(dwelling("Oslo", door: false))
            // Replacing an element by itself keeps it.
            person.past.replace(index: 0, object: person.past[0])
            person.past.append(dwelling("Rome", door: true))
            person.past.swapAt(0, 1)
        }
        let person = try #require(db.object(ofType: Inhabitant.self, forPrimaryKey: 1))
        #expect(person.past.map(\.city) == ["Rome", "Oslo"])
        #expect(count(db, "Dwelling") == 2 && count(db, "Doorway") == 1)
    }
}
