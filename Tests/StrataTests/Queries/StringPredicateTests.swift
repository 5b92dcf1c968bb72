import Foundation
import Testing
@testable import Strata
import StrataStore

/// String predicates, parsed and run through the query engine on the data set of
/// `QueryTests`, give the same objects as the equivalent typed queries.
@Suite struct StringPredicateTests {
    let data = QueryTests()

    /// The ids of the owners matching `format` with `arguments`.
    func ids(_ owners: Results<QOwner>, _ format: String, _ arguments: Any...) throws -> [Int] {
        var converted: [QueryArgument] = []
        for argument in arguments { converted.append(try queryArgument(argument)) }
        let predicate = try PredicateParser.parse(format, arguments: converted)
        return try owners.adding(predicate).map(\.id)
    }

    func ids(_ results: Results<QOwner>) -> [Int] { results.map(\.id) }

    @Test func comparisonsMatchTheTypedQueries() throws {
        let db = try data.seeded()
        let owners = db.objects(QOwner.self)
        #expect(try ids(owners, "group == 1") == ids(owners.where { $0.group == 1 }))
        #expect(try ids(owners, "group <> 1") == ids(owners.where { $0.group != 1 }))
        #expect(try ids(owners, "score > %@", 9.0) == ids(owners.where { $0.score > 9 }))
        #expect(try ids(owners, "9.0 <= score") == ids(owners.where { $0.score >= 9 }))
        #expect(try ids(owners, "ratio < 0.5") == ids(owners.where { $0.ratio < 0.5 }))
        #expect(try ids(owners, "active == true") == ids(owners.where { $0.active }))
        #expect(try ids(owners, "active = %@", false) == ids(owners.where { !$0.active }))
        #expect(try ids(owners, "born > %@", Date(timeIntervalSince1970: 7 * 86_400)) == [8, 9])
        #expect(try ids(owners, "born > 1970-01-08@00:00:00") == [8, 9])
        #expect(try ids(owners, "born > T604800:0") == [8, 9])
        #expect(try ids(owners, "amount >= %@", Decimal128(80)) == ids(owners.where { $0.amount >= Decimal128(80) }))
        #expect(try ids(owners, "blob == B64\"AwEC\"") == [3])
        #expect(try ids(owners, "%K == %@", "name", "Cleo") == [2])
        #expect(try ids(owners, "score > ratio") == [1, 2, 3, 4, 5, 6, 7, 8, 9])
    }

    @Test func stringsAndNil() throws {
        let db = try data.seeded()
        let owners = db.objects(QOwner.self)
        #expect(try ids(owners, "name BEGINSWITH 'd'") == ids(owners.where { $0.name.starts(with: "d") }))
        #expect(try ids(owners, "name BEGINSWITH[c] %@", "D") == ids(owners.where { $0.name.starts(with: "D", options: .caseInsensitive) }))
        #expect(try ids(owners, "name ENDSWITH 'a'") == ids(owners.where { $0.name.ends(with: "a") }))
        #expect(try ids(owners, "name CONTAINS 'an'") == ids(owners.where { $0.name.contains("an") }))
        #expect(try ids(owners, "name ==[c] 'ANN'") == [0])
        #expect(try ids(owners, "name ==[cd] 'eva'") == [4])
        #expect(try ids(owners, "name LIKE '?a*'") == [3, 7])
        #expect(try ids(owners, "age == nil") == ids(owners.where { $0.age == nil }))
        #expect(try ids(owners, "age != NULL") == ids(owners.where { $0.age != nil }))
        #expect(try ids(owners, "nickname == %@", NSNull()) == ids(owners.where { $0.nickname == nil }))
        #expect(try ids(owners, "best.name == 'pet4-0'") == [4])
    }

    @Test func inBetweenListsAndSubqueries() throws {
        let db = try data.seeded()
        let owners = db.objects(QOwner.self)
        #expect(try ids(owners, "group IN {0, 3}") == ids(owners.where { $0.group.in([0, 3]) }))
        #expect(try ids(owners, "name IN %@", ["Ann", "Gus", "nobody"]) == [0, 6])
        #expect(try ids(owners, "score BETWEEN {3.0, 6.0}") == ids(owners.where { $0.score.contains(3.0...6.0) }))
        #expect(try ids(owners, "age BETWEEN %@", [21, 22]) == [1, 2])
        #expect(try ids(owners, "pets.@count == 2") == ids(owners.where { $0.pets.count == 2 }))
        #expect(try ids(owners, "ANY pets.name == 'pet5-1'") == [5])
        #expect(try ids(owners, "pets.age > 8") == [8])
        #expect(try ids(owners, "ANY scores == 6") == ids(owners.where { $0.scores.contains(6) }))
        #expect(try ids(owners, "'odd' IN labels") == ids(owners.where { $0.labels.contains("odd") }))
        #expect(try ids(owners, "labels.@size > 1") == ids(owners.where { $0.labels.count > 1 }))
        #expect(try ids(owners, "scores.@max >= 14") == [7])
        #expect(try ids(owners, "scores.@sum == 9") == [3])
        #expect(try ids(owners, "scores.@avg >= 3") == ids(owners.where { $0.scores.avg >= 3 }))
        #expect(try ids(owners, "scores.@min == 0") == ids(owners.where { $0.scores.min == 0 }))
        #expect(try ids(owners, "pets.@max.age >= 7") == [7, 8])
        #expect(try ids(owners, "pets.@sum.weight > 0") == [2, 5, 8])
        #expect(try ids(owners, "SUBQUERY(pets, $p, $p.age > 5 AND $p.name ENDSWITH '0').@count > 0") == [7, 8])
        #expect(try ids(owners, "SUBQUERY(pets, $p, $p.age > 4).@count == 2") == [5, 8])
        #expect(try ids(owners, "ALL pets.age > 4") == ids(owners.where { $0.pets.allSatisfy { $0.age > 4 } }))
        #expect(try ids(owners, "NONE pets.age > 4") == ids(owners.where { $0.pets.none { $0.age > 4 } }))
    }

    @Test func combinations() throws {
        let db = try data.seeded()
        let owners = db.objects(QOwner.self)
        #expect(try ids(owners, "active == true AND group == 1") == [1, 5, 9])
        #expect(try ids(owners, "group == 2 || name == $0", "Ann") == [0, 2, 6])
        #expect(try ids(owners, "NOT (group == 2 OR active == YES)") == [0, 4, 8])
        #expect(try ids(owners, "!(group == 2 || active == true)") == [0, 4, 8])
        #expect(try ids(owners, "TRUEPREDICATE").count == 10)
        #expect(try ids(owners, "FALSEPREDICATE") == [])
    }

    @Test func unknownPropertiesAreReportedByTheCompiler() throws {
        let db = try data.seeded()
        let owners = db.objects(QOwner.self)
        do {
            _ = try ids(owners, "nope == 1")
            Issue.record("an unknown property was accepted")
        } catch let error as QueryError {
            #expect(error.kind == .unknownProperty)
        }
    }
}
