import Foundation
import Testing
@testable import Strata
import StrataStore
import StrataTestWorkloads

/// Random data and random predicates, run through the query engine as the typed DSL, as a
/// compiled predicate and as a string predicate, and compared with a brute-force evaluation
/// over plain Swift values. Sorting and distinct are compared with Swift's stable sort.
@Suite struct QueryPropertyTests {
    let folder = TemporaryFolder()

    // MARK: Plain values

    struct Pet { var name: String; var age: Int; var weight: Double? }

    struct Owner {
        var id: Int
        var name: String
        var nickname: String?
        var age: Int?
        var group: Int
        var score: Double
        var active: Bool
        var born: Date
        var pets: [Pet]
        var scores: [Int]
        var best: Pet?
    }

    static let names = ["ann", "Ann", "bob", "Bobby", "cleo", "éva", "Eva", "", "zoë", "a*b", "bo?"]

    static func makeOwners(_ random: inout SplitMix64, count: Int) -> [Owner] {
        (0..<count).map { id in
            let pets = (0..<random.int(0..<4)).map { _ in
                Pet(name: names[random.int(0..<names.count)], age: random.int(0..<12),
                    weight: random.int(0..<3) == 0 ? nil : Double(random.int(0..<40)) / 4)
            }
            return Owner(
                id: id,
                name: names[random.int(0..<names.count)],
                nickname: random.int(0..<3) == 0 ? nil : names[random.int(0..<names.count)],
                age: random.int(0..<4) == 0 ? nil : random.int(0..<60),
                group: random.int(0..<6),
                score: Double(random.int(-20..<80)) / 2,
                active: random.int(0..<2) == 0,
                born: Date(timeIntervalSince1970: Double(random.int(0..<1000)) * 3600),
                pets: pets,
                scores: (0..<random.int(0..<4)).map { _ in random.int(-5..<20) },
                best: pets.isEmpty || random.int(0..<4) == 0 ? nil : pets[0])
        }
    }

    // MARK: Generated predicates

    /// One predicate in four forms.
    struct Generated {
        var ast: QueryPredicate
        var dsl: (Query<QOwner>) -> Query<Bool>
        var format: String
        var arguments: [Any]
        var check: (Owner) -> Bool
    }

    static func bytesLess(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    static func order<V: Comparable>(_ op: QueryOperator, _ a: V, _ b: V) -> Bool {
        switch op {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        default: a >= b
        }
    }

    static func orderStrings(_ op: QueryOperator, _ a: String, _ b: String) -> Bool {
        switch op {
        case .equal: Array(a.utf8) == Array(b.utf8)
        case .notEqual: Array(a.utf8) != Array(b.utf8)
        case .less: bytesLess(a, b)
        case .lessOrEqual: !bytesLess(b, a)
        case .greater: bytesLess(b, a)
        default: !bytesLess(a, b)
        }
    }

    static func like(_ text: [Character], _ pattern: [Character]) -> Bool {
        guard let first = pattern.first else { return text.isEmpty }
        if first == "*" { return (0...text.count).contains { like(Array(text[$0...]), Array(pattern.dropFirst())) } }
        guard let head = text.first else { return false }
        return (first == "?" || first == head) && like(Array(text.dropFirst()), Array(pattern.dropFirst()))
    }

    static let orderingOps: [QueryOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]

    static func dslCompare<V: _PersistableInsideOptional & Comparable>(_ op: QueryOperator, _ q: Query<V>, _ v: V) -> Query<Bool> {
        switch op {
        case .equal: q == v
        case .notEqual: q != v
        case .less: q < v
        case .lessOrEqual: q <= v
        case .greater: q > v
        default: q >= v
        }
    }

    static func leaf(_ random: inout SplitMix64) -> Generated {
        let op = orderingOps[random.int(0..<orderingOps.count)]
        func cmp(_ path: [String], _ value: StoreValue) -> QueryPredicate { .comparison(QueryComparison(.keyPath(path), op, .constant(value))) }
        switch random.int(0..<15) {
        case 0:
            let c = random.int(-1..<7)
            return Generated(ast: cmp(["group"], .int(Int64(c))), dsl: { dslCompare(op, $0.group, c) },
                             format: "group \(op.rawValue) %@", arguments: [c], check: { order(op, $0.group, c) })
        case 1:
            let c = random.int(0..<60)
            return Generated(ast: cmp(["age"], .int(Int64(c))), dsl: { q in
                switch op {
                case .equal: q.age == c
                case .notEqual: q.age != c
                case .less: q.age < c
                case .lessOrEqual: q.age <= c
                case .greater: q.age > c
                default: q.age >= c
                }
            }, format: "age \(op.rawValue) %d", arguments: [c], check: { o in
                guard let age = o.age else { return op == .notEqual }
                return order(op, age, c)
            })
        case 2:
            let isNil = random.int(0..<2) == 0
            return Generated(ast: .comparison(QueryComparison(.keyPath(["age"]), isNil ? .equal : .notEqual, .constant(.null))),
                             dsl: { isNil ? $0.age == nil : $0.age != nil }, format: isNil ? "age == nil" : "age != NULL",
                             arguments: [], check: { ($0.age == nil) == isNil })
        case 3:
            let c = Double(random.int(-20..<80)) / 2
            return Generated(ast: cmp(["score"], .double(c)), dsl: { dslCompare(op, $0.score, c) },
                             format: "score \(op.rawValue) %f", arguments: [c], check: { order(op, $0.score, c) })
        case 4:
            let b = random.int(0..<2) == 0
            return Generated(ast: .comparison(QueryComparison(.keyPath(["active"]), .equal, .constant(.bool(b)))),
                             dsl: { b ? $0.active : !$0.active }, format: "active == \(b ? "true" : "FALSE")",
                             arguments: [], check: { $0.active == b })
        case 5:
            let c = names[random.int(0..<names.count)]
            return Generated(ast: cmp(["name"], .string(c)), dsl: { dslCompare(op, $0.name, c) },
                             format: "name \(op.rawValue) %@", arguments: [c], check: { orderStrings(op, $0.name, c) })
        case 6:
            let c = String(names[random.int(0..<names.count)].prefix(random.int(0..<3)))
            let insensitive = random.int(0..<2) == 0
            let textOps: [QueryOperator] = [.beginsWith, .endsWith, .contains, .like, .equal]
            let textOp = textOps[random.int(0..<textOps.count)]
            let pattern = textOp == .like ? (random.int(0..<2) == 0 ? c + "*" : "*" + c + "?") : c
            let options: StringOptions = insensitive ? .caseInsensitive : []
            return Generated(
                ast: .comparison(QueryComparison(.keyPath(["name"]), textOp, .constant(.string(pattern)), options: insensitive ? .caseInsensitive : [])),
                dsl: { q in
                    switch textOp {
                    case .beginsWith: q.name.starts(with: pattern, options: options)
                    case .endsWith: q.name.ends(with: pattern, options: options)
                    case .contains: q.name.contains(pattern, options: options)
                    case .like: q.name.like(pattern, caseInsensitive: insensitive)
                    default: q.name.equals(pattern, options: options)
                    }
                },
                format: "name \(textOp.rawValue)\(insensitive ? "[c]" : "") %@", arguments: [pattern],
                check: { o in
                    let text = insensitive ? o.name.lowercased() : o.name
                    let p = insensitive ? pattern.lowercased() : pattern
                    switch textOp {
                    case .beginsWith: return Array(text.utf8).starts(with: Array(p.utf8))
                    case .endsWith: return Array(text.utf8).reversed().starts(with: Array(p.utf8).reversed())
                    case .contains: return p.isEmpty || text.utf8.count >= p.utf8.count && (0...(text.utf8.count - p.utf8.count)).contains { Array(Array(text.utf8)[$0...]).starts(with: Array(p.utf8)) }
                    case .like: return like(Array(text.unicodeScalars.map(Character.init)), Array(p.unicodeScalars.map(Character.init)))
                    default: return Array(text.utf8) == Array(p.utf8)
                    }
                })
        case 7:
            let values = (0..<random.int(0..<4)).map { _ in random.int(0..<7) }
            return Generated(ast: .comparison(QueryComparison(.keyPath(["group"]), .in, .list(values.map { .int(Int64($0)) }))),
                             dsl: { $0.group.in(values) }, format: "group IN %@", arguments: [values],
                             check: { values.contains($0.group) })
        case 8:
            let low = Double(random.int(-20..<80)) / 2, high = low + Double(random.int(0..<30))
            return Generated(ast: .comparison(QueryComparison(.keyPath(["score"]), .between, .list([.double(low), .double(high)]))),
                             dsl: { $0.score.contains(low...high) }, format: "score BETWEEN {%@, %@}", arguments: [low, high],
                             check: { $0.score >= low && $0.score <= high })
        case 9:
            let c = random.int(0..<4)
            return Generated(ast: .comparison(QueryComparison(.count(["pets"]), op, .constant(.int(Int64(c))))),
                             dsl: { dslCompare(op, $0.pets.count, c) }, format: "pets.@count \(op.rawValue) %@", arguments: [c],
                             check: { order(op, $0.pets.count, c) })
        case 10:
            let c = random.int(0..<12)
            return Generated(ast: cmp(["pets", "age"], .int(Int64(c))), dsl: { dslCompare(op, $0.pets.age, c) },
                             format: "ANY pets.age \(op.rawValue) %@", arguments: [c], check: { $0.pets.contains { order(op, $0.age, c) } })
        case 11:
            let c = random.int(-5..<20)
            return Generated(ast: .comparison(QueryComparison(.keyPath(["scores"]), .equal, .constant(.int(Int64(c))))),
                             dsl: { $0.scores.contains(c) }, format: "%@ IN scores", arguments: [c], check: { $0.scores.contains(c) })
        case 12:
            let c = random.int(-5..<40)
            let useMax = random.int(0..<2) == 0
            return Generated(ast: .comparison(QueryComparison(.aggregate(useMax ? .max : .sum, list: ["scores"], element: []), op, .constant(.int(Int64(c))))),
                             dsl: { useMax ? dslCompare(op, $0.scores.max, c) : dslCompare(op, $0.scores.sum, c) },
                             format: "scores.\(useMax ? "@max" : "@sum") \(op.rawValue) %@", arguments: [c],
                             check: { o in
                                 if useMax { guard let m = o.scores.max() else { return op == .notEqual }; return order(op, m, c) }
                                 return order(op, o.scores.reduce(0, +), c)
                             })
        case 13:
            let c = random.int(0..<12), k = random.int(0..<3)
            let inner = QueryPredicate.comparison(QueryComparison(.variable("p", ["age"]), .greater, .constant(.int(Int64(c)))))
            return Generated(ast: .comparison(QueryComparison(.subqueryCount(list: ["pets"], variable: "p", predicate: inner), .greaterOrEqual, .constant(.int(Int64(k))))),
                             dsl: { ($0.pets.age > c).count >= k }, format: "SUBQUERY(pets, $p, $p.age > %@).@count >= %@", arguments: [c, k],
                             check: { o in o.pets.filter { $0.age > c }.count >= k })
        default:
            let c = random.int(0..<12)
            return Generated(ast: cmp(["best", "age"], .int(Int64(c))), dsl: { dslCompare(op, $0.best.age, c) },
                             format: "best.age \(op.rawValue) %@", arguments: [c], check: { o in
                                 guard let best = o.best else { return op == .notEqual }
                                 return order(op, best.age, c)
                             })
        }
    }

    static func predicate(_ random: inout SplitMix64, depth: Int) -> Generated {
        if depth == 0 || random.int(0..<3) == 0 { return leaf(&random) }
        let a = predicate(&random, depth: depth - 1)
        switch random.int(0..<3) {
        case 0:
            let b = predicate(&random, depth: depth - 1)
            return Generated(ast: .and([a.ast, b.ast]), dsl: { a.dsl($0) && b.dsl($0) }, format: "(\(a.format)) AND (\(b.format))",
                             arguments: a.arguments + b.arguments, check: { a.check($0) && b.check($0) })
        case 1:
            let b = predicate(&random, depth: depth - 1)
            return Generated(ast: .or([a.ast, b.ast]), dsl: { a.dsl($0) || b.dsl($0) }, format: "(\(a.format)) || (\(b.format))",
                             arguments: a.arguments + b.arguments, check: { a.check($0) || b.check($0) })
        default:
            return Generated(ast: .not(a.ast), dsl: { !a.dsl($0) }, format: "NOT (\(a.format))", arguments: a.arguments,
                             check: { !a.check($0) })
        }
    }

    func store(_ owners: [Owner], in db: Database) throws {
        try db.write {
            for value in owners {
                let owner = QOwner()
                owner.id = value.id
                owner.name = value.name
                owner.nickname = value.nickname
                owner.age = value.age
                owner.group = value.group
                owner.score = value.score
                owner.active = value.active
                owner.born = value.born
                for pet in value.pets {
                    let stored = QPet()
                    stored.name = pet.name
                    stored.age = pet.age
                    stored.weight = pet.weight
                    owner.pets.append(stored)
                }
                owner.best = owner.pets.first.flatMap { value.best == nil ? nil : $0 }
                owner.scores.append(objectsIn: value.scores)
                db.add(owner)
            }
        }
    }

    @Test func randomPredicatesMatchABruteForceEvaluation() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["STRATA_QUERY_SEED"] ?? "") ?? 20261122
        let rounds = Int(ProcessInfo.processInfo.environment["STRATA_QUERY_ROUNDS"] ?? "") ?? 300
        var random = SplitMix64(seed: seed)
        let owners = Self.makeOwners(&random, count: 600)  // three clusters
        let db = try Database(configuration: folder.configuration(objectTypes: [QOwner.self, QPet.self]))
        try store(owners, in: db)
        let all = db.objects(QOwner.self)
        for round in 0..<rounds {
            let generated = Self.predicate(&random, depth: 3)
            let expected = owners.filter(generated.check).map(\.id)
            let viaAST = try all.adding(generated.ast).map(\.id)
            #expect(viaAST == expected, "round \(round), seed \(seed): \(generated.ast)")
            let viaDSL = all.where(generated.dsl)
            #expect(viaDSL.map(\.id) == expected, "round \(round), seed \(seed) (DSL): \(generated.ast)")
            #expect(viaDSL.count == expected.count, "round \(round): count of \(generated.ast)")
            #expect(viaDSL.first?.id == expected.first, "round \(round): first of \(generated.ast)")
        }
    }

    /// The expected order of `owners` for sort keys, with Swift's stable sort.
    static func sortKeys(_ random: inout SplitMix64) -> [(String, Bool)] {
        let candidates = ["group", "score", "age", "name", "active", "nickname", "born", "best.age"]
        return (0..<random.int(1..<4)).map { _ in (candidates[random.int(0..<candidates.count)], random.int(0..<2) == 0) }
    }

    static func compare(_ a: Owner, _ b: Owner, by key: String) -> Int {
        func cmp<V: Comparable>(_ x: V?, _ y: V?) -> Int {
            switch (x, y) {
            case (nil, nil): 0
            case (nil, _): -1
            case (_, nil): 1
            case let (x?, y?): x < y ? -1 : (x == y ? 0 : 1)
            }
        }
        func bytes(_ s: String?) -> [UInt8]? { s.map { Array($0.utf8) } }
        switch key {
        case "group": return cmp(a.group, b.group)
        case "score": return cmp(a.score, b.score)
        case "age": return cmp(a.age, b.age)
        case "name", "nickname":
            let x = key == "name" ? bytes(a.name) : bytes(a.nickname)
            let y = key == "name" ? bytes(b.name) : bytes(b.nickname)
            switch (x, y) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case let (x?, y?): return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
            }
        case "active": return cmp(a.active ? 1 : 0, b.active ? 1 : 0)
        case "born": return cmp(a.born, b.born)
        default: return cmp(a.best?.age, b.best?.age)
        }
    }

    @Test func randomSortsAndDistinctsMatchSwift() throws {
        var random = SplitMix64(seed: 99)
        let owners = Self.makeOwners(&random, count: 600)
        let db = try Database(configuration: folder.configuration(objectTypes: [QOwner.self, QPet.self]))
        try store(owners, in: db)
        for round in 0..<60 {
            let filter = Self.predicate(&random, depth: 1)
            let keys = Self.sortKeys(&random)
            var expected = owners.filter(filter.check)
            // Stable sort by the keys: index order breaks ties.
            expected = expected.enumerated().sorted { x, y in
                for (key, ascending) in keys {
                    let c = Self.compare(x.element, y.element, by: key)
                    if c != 0 { return ascending ? c < 0 : c > 0 }
                }
                return x.offset < y.offset
            }.map(\.element)
            let results = db.objects(QOwner.self).where(filter.dsl)
                .sorted(by: keys.map { SortDescriptor(keyPath: $0.0, ascending: $0.1) })
            #expect(results.map(\.id) == expected.map(\.id), "round \(round): sort \(keys) of \(filter.ast)")
            if let first = expected.first { #expect(results.first?.id == first.id) }
            let probe = random.int(0..<max(expected.count, 1))
            if probe < expected.count { #expect(results[probe].id == expected[probe].id, "round \(round): element \(probe)") }
            // Distinct by one key, after the sort: the first of each value in sorted order.
            let distinctKey = ["group", "active", "age", "name"][random.int(0..<4)]
            var seen: [Int] = []
            var kept: [Int] = []
            for owner in expected where !seen.contains(where: { Self.compare(expected[$0], owner, by: distinctKey) == 0 }) {
                seen.append(expected.firstIndex { $0.id == owner.id }!)
                kept.append(owner.id)
            }
            #expect(results.distinct(by: [distinctKey]).map(\.id) == kept, "round \(round): distinct by \(distinctKey)")
        }
    }
}
