// Deleting objects clears the links to them everywhere: to-one links become nil, lists drop
// them, maps keep the key with nil. Seeded random link changes and deletes, in one write and
// across writes, checked against a model of who links to whom (the store's link clearing
// reads the transaction's own lists and the stored ones in one pass; a mistake there leaves a
// dangling link or drops a live one).

import Foundation
import StrataTestWorkloads
import Testing
@testable import Strata

final class Kid: Object {
    @Persisted(primaryKey: true) var id = 0
}

final class Guardian: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var favorite: Kid?
    @Persisted var kids: List<Kid>
    @Persisted var byName: Map<String, Kid?>
    @Persisted var visits = 0
}

@Suite struct DeleteClearsLinksTests {
    let folder = TemporaryFolder()

    /// A guardian's links as ids: favorite, kids in order, byName in key order (nil as -1).
    struct Links: Equatable {
        var favorite: Int?
        var kids: [Int]
        var byName: [String: Int]
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func randomLinksAndDeletesMatchAModel(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let db = try Database(configuration: folder.configuration(objectTypes: [Kid.self, Guardian.self]))
        var live = Set<Int>()
        var model: [Int: Links] = [:]
        var nextKid = 0
        try db.write {
            for g in 0..<40 { db.create(Guardian.self, value: ["id": g]); model[g] = Links(favorite: nil, kids: [], byName: [:]) }
        }
        func kid(_ id: Int) -> Kid? { db.object(ofType: Kid.self, forPrimaryKey: id) }
        for round in 0..<8 {
            try db.write {
                for _ in 0..<150 {
                    let g = random.int(0..<40)
                    let guardian = try #require(db.object(ofType: Guardian.self, forPrimaryKey: g))
                    switch random.int(0..<10) {
                    case 0, 1:  // a new kid, linked somewhere
                        let k = db.create(Kid.self, value: ["id": nextKid])
                        live.insert(nextKid)
                        guardian.kids.append(k)
                        model[g]!.kids.append(nextKid)
                        nextKid += 1
                    case 2 where !live.isEmpty:
                        let id = live.randomElement(using: &random)!
                        guardian.favorite = kid(id)
                        model[g]!.favorite = id
                    case 3 where !live.isEmpty:
                        let id = live.randomElement(using: &random)!
                        guardian.kids.append(try #require(kid(id)))
                        model[g]!.kids.append(id)
                    case 4 where !live.isEmpty:
                        let id = live.randomElement(using: &random)!
                        let name = "n\(random.int(0..<5))"
                        guardian.byName[name] = kid(id)
                        model[g]!.byName[name] = id
                    case 5 where !model[g]!.kids.isEmpty:
                        let at = random.int(0..<model[g]!.kids.count)
                        guardian.kids.remove(at: at)
                        model[g]!.kids.remove(at: at)
                    case 6...8 where !live.isEmpty:  // delete a kid: every link to it goes
                        let id = live.randomElement(using: &random)!
                        db.delete(try #require(kid(id)))
                        live.remove(id)
                        for key in model.keys {
                            if model[key]!.favorite == id { model[key]!.favorite = nil }
                            model[key]!.kids.removeAll { $0 == id }
                            for (name, value) in model[key]!.byName where value == id { model[key]!.byName[name] = -1 }
                        }
                    default:
                        break
                    }
                }
                try check(db, model, "round \(round), in the write")
            }
            try check(db, model, "round \(round)")
        }
        #expect(problems(db).isEmpty)
    }

    /// Runs of single deletes, with value writes to the holders between them (which leave the
    /// store's holder index valid) and link writes now and then (which make it build again).
    @Test(arguments: [UInt64(7), 8])
    func runsOfSingleDeletesMatchAModel(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let db = try Database(configuration: folder.configuration(objectTypes: [Kid.self, Guardian.self]))
        var model: [Int: Links] = [:]
        try db.write {
            for k in 0..<600 { db.create(Kid.self, value: ["id": k]) }
            for g in 0..<60 {
                let guardian = db.create(Guardian.self, value: ["id": g])
                var links = Links(favorite: nil, kids: [], byName: [:])
                for _ in 0..<random.int(0..<12) {
                    let k = random.int(0..<600)
                    guardian.kids.append(try #require(db.object(ofType: Kid.self, forPrimaryKey: k)))
                    links.kids.append(k)
                }
                let favorite = random.int(0..<600)
                guardian.favorite = db.object(ofType: Kid.self, forPrimaryKey: favorite)
                links.favorite = favorite
                let named = random.int(0..<600)
                guardian.byName["n"] = db.object(ofType: Kid.self, forPrimaryKey: named)
                links.byName["n"] = named
                model[g] = links
            }
        }
        var live = Array(0..<600)
        live.shuffle(using: &random)
        for round in 0..<3 {
            try db.write {
                for step in 0..<150 {
                    let id = live.removeLast()
                    db.delete(try #require(db.object(ofType: Kid.self, forPrimaryKey: id)))
                    for key in model.keys {
                        if model[key]!.favorite == id { model[key]!.favorite = nil }
                        model[key]!.kids.removeAll { $0 == id }
                        for (name, value) in model[key]!.byName where value == id { model[key]!.byName[name] = -1 }
                    }
                    let g = random.int(0..<60)
                    let guardian = try #require(db.object(ofType: Guardian.self, forPrimaryKey: g))
                    guardian.visits += 1
                    if step % 25 == 24, let k = live.last {  // a link write: the index is built again
                        guardian.kids.append(try #require(db.object(ofType: Kid.self, forPrimaryKey: k)))
                        model[g]!.kids.append(k)
                    }
                }
                try check(db, model, "round \(round), in the write")
            }
            try check(db, model, "round \(round)")
        }
        #expect(problems(db).isEmpty)
    }

    private func check(_ db: Database, _ model: [Int: Links], _ label: String) throws {
        for (g, expected) in model {
            let guardian = try #require(db.object(ofType: Guardian.self, forPrimaryKey: g))
            var byName: [String: Int] = [:]
            for entry in guardian.byName { byName[entry.key] = entry.value?.id ?? -1 }
            let found = Links(favorite: guardian.favorite?.id, kids: guardian.kids.map(\.id), byName: byName)
            #expect(found == expected, "\(label): guardian \(g)")
        }
    }
}

final class Knot: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var next: Knot?
    @Persisted var ties: List<Knot>
    @Persisted var named: Map<String, Knot?>
}

/// Links within one type (a graph of knots): deleting knots one by one clears every link to
/// them, from knots that are themselves deleted later or were deleted before.
@Suite struct SelfLinkDeleteTests {
    let folder = TemporaryFolder()

    struct Links: Equatable {
        var next: Int?
        var ties: [Int]
        var named: [String: Int]
    }

    @Test(arguments: [UInt64(31), 32])
    func runsOfSingleDeletesInALinkedGraphMatchAModel(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let db = try Database(configuration: folder.configuration(objectTypes: [Knot.self]))
        var model: [Int: Links] = [:]
        let count = 300
        try db.write {
            for id in 0..<count { db.create(Knot.self, value: ["id": id]) }
            for id in 0..<count {
                let knot = try #require(db.object(ofType: Knot.self, forPrimaryKey: id))
                var links = Links(next: nil, ties: [], named: [:])
                let next = random.int(0..<count)
                knot.next = db.object(ofType: Knot.self, forPrimaryKey: next)
                links.next = next
                for _ in 0..<random.int(0..<5) {
                    let tie = random.int(0..<count)
                    knot.ties.append(try #require(db.object(ofType: Knot.self, forPrimaryKey: tie)))
                    links.ties.append(tie)
                }
                let named = random.int(0..<count)
                knot.named["n"] = db.object(ofType: Knot.self, forPrimaryKey: named)
                links.named["n"] = named
                model[id] = links
            }
        }
        var order = Array(0..<count)
        order.shuffle(using: &random)
        for round in 0..<3 {
            try db.write {
                for step in 0..<80 {
                    let id = order.removeLast()
                    db.delete(try #require(db.object(ofType: Knot.self, forPrimaryKey: id)))
                    model[id] = nil
                    for key in model.keys {
                        if model[key]!.next == id { model[key]!.next = nil }
                        model[key]!.ties.removeAll { $0 == id }
                        for (name, value) in model[key]!.named where value == id { model[key]!.named[name] = -1 }
                    }
                    if step % 20 == 19, let from = model.keys.randomElement(using: &random), let to = order.last {
                        // A link write between deletes: the holders are found again.
                        try #require(db.object(ofType: Knot.self, forPrimaryKey: from)).ties.append(try #require(db.object(ofType: Knot.self, forPrimaryKey: to)))
                        model[from]!.ties.append(to)
                    }
                }
                try check(db, model, "round \(round), in the write")
            }
            try check(db, model, "round \(round)")
        }
        #expect(problems(db).isEmpty)
    }

    private func check(_ db: Database, _ model: [Int: Links], _ label: String) throws {
        #expect(db.objects(Knot.self).count == model.count, "\(label)")
        for (id, expected) in model {
            let knot = try #require(db.object(ofType: Knot.self, forPrimaryKey: id))
            var named: [String: Int] = [:]
            for entry in knot.named { named[entry.key] = entry.value?.id ?? -1 }
            #expect(Links(next: knot.next?.id, ties: knot.ties.map(\.id), named: named) == expected, "\(label): knot \(id)")
        }
    }
}
