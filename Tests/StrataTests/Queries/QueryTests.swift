import Foundation
import Testing
@testable import Strata
import StrataStore
import StrataTestWorkloads

/// Each construct of the typed DSL, sorting, distinct and aggregates, on a small fixed data set.
@Suite struct QueryTests {
    let folder = TemporaryFolder()

    /// Owners 0…9 with names, ages (every third nil), groups, scores, pets and lists.
    func seeded() throws -> Database {
        let db = try Database(configuration: folder.configuration(objectTypes: [QOwner.self, QPet.self]))
        let names = ["Ann", "bob", "Cleo", "dave", "Éva", "frank", "Gus", "hana", "Ivo", "Júlia"]
        try db.write {
            for i in 0..<10 {
                let owner = QOwner()
                owner.id = i
                owner.name = names[i]
                owner.nickname = i % 2 == 0 ? "n\(i)" : nil
                owner.age = i % 3 == 0 ? nil : 20 + i
                owner.group = i % 4
                owner.score = Double(i) * 1.5
                owner.ratio = Float(i) / 4
                owner.active = i % 2 == 1
                owner.born = Date(timeIntervalSince1970: Double(i) * 86_400)
                owner.amount = Decimal128(i * 10)
                owner.blob = Data([UInt8(i), 1, 2])
                for j in 0..<(i % 3) {
                    let pet = QPet()
                    pet.name = "pet\(i)-\(j)"
                    pet.age = i + j
                    pet.weight = j == 0 ? nil : Double(j) * 2
                    owner.pets.append(pet)
                }
                owner.best = owner.pets.first
                owner.scores.append(objectsIn: (0..<(i % 4)).map { $0 * i })
                owner.labels.append(objectsIn: i % 2 == 0 ? ["even", "x\(i)"] : ["odd"])
                db.add(owner)
            }
        }
        return db
    }

    func ids(_ results: Results<QOwner>) -> [Int] { results.map(\.id) }

    @Test func comparisonsOnEveryKind() throws {
        let db = try seeded()
        let owners = db.objects(QOwner.self)
        #expect(ids(owners.where { $0.group == 1 }) == [1, 5, 9])
        #expect(ids(owners.where { $0.group != 1 }).count == 7)
        #expect(ids(owners.where { $0.score > 9 }) == [7, 8, 9])
        #expect(ids(owners.where { $0.score >= 9 }) == [6, 7, 8, 9])
        #expect(ids(owners.where { $0.ratio < 0.5 }) == [0, 1])
        #expect(ids(owners.where { $0.ratio <= 0.5 }) == [0, 1, 2])
        #expect(ids(owners.where { $0.active }) == [1, 3, 5, 7, 9])
        #expect(ids(owners.where { !$0.active }) == [0, 2, 4, 6, 8])
        #expect(ids(owners.where { $0.born > Date(timeIntervalSince1970: 7 * 86_400) }) == [8, 9])
        #expect(ids(owners.where { $0.amount >= Decimal128(80) }) == [8, 9])
        #expect(ids(owners.where { $0.name == "Cleo" }) == [2])
        #expect(ids(owners.where { $0.name > "a" }) == [1, 3, 4, 5, 7])  // by UTF-8 bytes: lower case after upper case, "É" after both
        #expect(ids(owners.where { $0.blob == Data([3, 1, 2]) }) == [3])
    }

    @Test func optionalsAndNil() throws {
        let db = try seeded()
        let owners = db.objects(QOwner.self)
        #expect(ids(owners.where { $0.age == nil }) == [0, 3, 6, 9])
        #expect(ids(owners.where { $0.age != nil }) == [1, 2, 4, 5, 7, 8])
        #expect(ids(owners.where { $0.age > 25 }) == [7, 8])  // nil never orders
        #expect(ids(owners.where { $0.age != 21 }) == [0, 2, 3, 4, 5, 6, 7, 8, 9])  // nil != 21
        #expect(ids(owners.where { $0.nickname == nil }) == [1, 3, 5, 7, 9])
        #expect(ids(owners.where { $0.best == nil }) == [0, 3, 6, 9])
        #expect(ids(owners.where { $0.best.name == "pet4-0" }) == [4])
        let nilName = try owners.adding(.comparison(QueryComparison(.keyPath(["best", "name"]), .equal, .constant(.null))))
        #expect(ids(nilName) == [0, 3, 6, 9])  // a nil link reads as nil
        #expect(ids(owners.where { $0.best.weight == nil }).count == 10)
    }

    @Test func stringOperatorsAndOptions() throws {
        let db = try seeded()
        let owners = db.objects(QOwner.self)
        #expect(ids(owners.where { $0.name.starts(with: "d") }) == [3])
        #expect(ids(owners.where { $0.name.starts(with: "D", options: .caseInsensitive) }) == [3])
        #expect(ids(owners.where { $0.name.ends(with: "a") }) == [4, 7, 9])
        #expect(ids(owners.where { $0.name.contains("an") }) == [5, 7])
        #expect(ids(owners.where { $0.name.contains("AN", options: .caseInsensitive) }) == [0, 5, 7])
        #expect(ids(owners.where { $0.name.equals("eva", options: [.caseInsensitive, .diacriticInsensitive]) }) == [4])
        #expect(ids(owners.where { $0.name.equals("eva", options: .caseInsensitive) }) == [])
        #expect(ids(owners.where { $0.name.notEquals("ann", options: .caseInsensitive) }).count == 9)
        #expect(ids(owners.where { $0.name.like("?a*") }) == [3, 7])
        #expect(ids(owners.where { $0.name.like("J*A") }) == [])
        #expect(ids(owners.where { $0.name.like("j*A", caseInsensitive: true) }) == [9])
        #expect(ids(owners.where { $0.name.like("j*A", options: [.caseInsensitive, .diacriticInsensitive]) }) == [9])
        #expect(ids(owners.where { $0.nickname.starts(with: "n") }) == [0, 2, 4, 6, 8])
        #expect(ids(owners.where { $0.blob.starts(with: Data([2])) }) == [2])
        #expect(ids(owners.where { $0.blob.contains(Data([1, 2])) }).count == 10)
    }

    @Test func inBetweenAndRanges() throws {
        let db = try seeded()
        let owners = db.objects(QOwner.self)
        #expect(ids(owners.where { $0.group.in([0, 3]) }) == [0, 3, 4, 7, 8])
        #expect(ids(owners.where { $0.name.in(["Ann", "Gus", "nobody"]) }) == [0, 6])
        #expect(ids(owners.where { $0.group.in([Int]()) }) == [])
        #expect(ids(owners.where { $0.score.contains(3.0...6.0) }) == [2, 3, 4])
        #expect(ids(owners.where { $0.score.contains(3.0..<6.0) }) == [2, 3])
        #expect(ids(owners.where { $0.age.contains(21...22) }) == [1, 2])
        #expect(ids(owners.where { $0.age.in([21, nil]) }) == [0, 1, 3, 6, 9])
    }

    @Test func listsCountsAggregatesAndSubqueries() throws {
        let db = try seeded()
        let owners = db.objects(QOwner.self)
        #expect(ids(owners.where { $0.pets.count == 2 }) == [2, 5, 8])
        #expect(ids(owners.where { $0.pets.name == "pet5-1" }) == [5])
        #expect(ids(owners.where { $0.pets.age > 8 }) == [8])
        #expect(ids(owners.where { $0.scores.contains(6) }) == [3, 6])
        #expect(ids(owners.where { $0.scores > 10 }) == [7])
        #expect(ids(owners.where { $0.scores.containsAny(in: [14, 2]) }) == [2, 7])
        #expect(ids(owners.where { $0.labels.contains("odd") }) == [1, 3, 5, 7, 9])
        #expect(ids(owners.where { $0.labels.count > 1 }) == [0, 2, 4, 6, 8])
        #expect(ids(owners.where { $0.scores.max >= 14 }) == [7])
        #expect(ids(owners.where { $0.scores.sum == 9 }) == [3])
        #expect(ids(owners.where { $0.scores.avg >= 3 }) == [3, 6, 7])
        #expect(ids(owners.where { $0.scores.min == 0 }) == [1, 2, 3, 5, 6, 7, 9])
        #expect(ids(owners.where { $0.pets.age.max >= 7 }) == [7, 8])
        #expect(ids(owners.where { $0.pets.weight.sum > 0 }) == [2, 5, 8])
        #expect(ids(owners.where { ($0.pets.age > 4).count == 2 }) == [5, 8])
        #expect(ids(owners.where { $0.pets.contains { $0.age > 5 && $0.name.ends(with: "0") } }) == [7, 8])
        #expect(ids(owners.where { $0.pets.allSatisfy { $0.age > 4 } }) == [0, 3, 5, 6, 7, 8, 9])
        #expect(ids(owners.where { $0.pets.none { $0.age > 4 } }) == [0, 1, 2, 3, 4, 6, 9])
        #expect(ids(owners.where { $0.scores.contains(where: { $0 > 6 }) }) == [7])
    }

    @Test func combinations() throws {
        let db = try seeded()
        let owners = db.objects(QOwner.self)
        #expect(ids(owners.where { $0.active && $0.group == 1 }) == [1, 5, 9])
        // A condition compared with a Bool is the condition or its negation.
        #expect(ids(owners.where { $0.name.starts(with: "A") == false }).count == 9)
        #expect(ids(owners.where { ($0.group == 1) == true }) == [1, 5, 9])
        #expect(ids(owners.where { ($0.group == 1) != true }).count == 7)
        #expect(ids(owners.where { ($0.group == 1) != false }) == [1, 5, 9])
        #expect(ids(owners.where { $0.group == 2 || $0.name == "Ann" }) == [0, 2, 6])
        #expect(ids(owners.where { !($0.group == 2 || $0.active) }) == [0, 4, 8])
        let ages = try owners.adding(.comparison(QueryComparison(.keyPath(["score"]), .greater, .keyPath(["ratio"]))))
        #expect(ids(ages) == [1, 2, 3, 4, 5, 6, 7, 8, 9])  // two properties of different number types
        #expect(ids(owners.where { $0.score == $0.score }).count == 10)
        #expect(ids(owners.where { $0.active }.where { $0.score < 6 }) == [1, 3])
    }

    @Test func sortingIsStableWithNilsFirst() throws {
        let db = try seeded()
        let owners = db.objects(QOwner.self)
        #expect(ids(owners.sorted(byKeyPath: "score", ascending: false)) == [9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
        #expect(ids(owners.sorted(byKeyPath: "age")) == [0, 3, 6, 9, 1, 2, 4, 5, 7, 8])
        #expect(ids(owners.sorted(byKeyPath: "age", ascending: false)) == [8, 7, 5, 4, 2, 1, 0, 3, 6, 9])
        #expect(ids(owners.sorted(by: \.group)) == [0, 4, 8, 1, 5, 9, 2, 6, 3, 7])
        #expect(ids(owners.sorted(by: ["group", SortDescriptor(keyPath: "id", ascending: false)])) == [8, 4, 0, 9, 5, 1, 6, 2, 7, 3])
        #expect(ids(owners.sorted(byKeyPath: "id", ascending: false).sorted(byKeyPath: "group")) == [8, 4, 0, 9, 5, 1, 6, 2, 7, 3])
        #expect(ids(owners.sorted(byKeyPath: "name")) == [0, 2, 6, 8, 9, 1, 3, 5, 7, 4])  // by UTF-8 bytes: "É" sorts last
        #expect(ids(owners.sorted(byKeyPath: "best.age").where { $0.best != nil }) == [1, 2, 4, 5, 7, 8])
        #expect(ids(owners.sorted(byKeyPath: "nickname")) == [1, 3, 5, 7, 9, 0, 2, 4, 6, 8])
        let sorted = owners.where { $0.group < 3 }.sorted(byKeyPath: "score", ascending: false)
        #expect(sorted.first?.id == 9)
        #expect(sorted.last?.id == 0)
        #expect(sorted[1].id == 8)
        #expect(sorted.count == 8)
        #expect(sorted.index(of: sorted[3]) == 3)
        #expect(sorted.objects(at: IndexSet([0, 2])).map(\.id) == [9, 6])
    }

    @Test func distinctKeepsTheFirstOfEachCombination() throws {
        let db = try seeded()
        let owners = db.objects(QOwner.self)
        #expect(ids(owners.distinct(by: ["group"])) == [0, 1, 2, 3])
        #expect(ids(owners.sorted(byKeyPath: "id", ascending: false).distinct(by: ["group"])) == [9, 8, 7, 6])
        #expect(ids(owners.distinct(by: ["group", "active"])) == [0, 1, 2, 3])
        #expect(ids(owners.distinct(by: [\QOwner.active])) == [0, 1])
        #expect(owners.distinct(by: ["age"]).count == 7)
        #expect(ids(owners.distinct(by: ["group"]).sorted(byKeyPath: "id", ascending: false)) == [3, 2, 1, 0])
    }

    @Test func aggregatesIgnoreNils() throws {
        let db = try seeded()
        let owners = db.objects(QOwner.self)
        #expect(owners.sum(ofProperty: "group") as Int == 13)
        #expect(owners.min(ofProperty: "age") as Int? == 21)
        #expect(owners.max(ofProperty: "age") as Int? == 28)
        #expect(owners.average(ofProperty: "age") as Double? == Double(21 + 22 + 24 + 25 + 27 + 28) / 6)
        #expect(owners.sum(of: \.score) == 67.5)
        #expect(owners.max(of: \.born) == Date(timeIntervalSince1970: 9 * 86_400))
        #expect(owners.min(of: \.age) == 21)
        #expect(owners.average(of: \.ratio) == Float(1.125))
        #expect(owners.sum(of: \.amount) == Decimal128(450))
        #expect(owners.where { $0.active }.sum(of: \.group) == 1 + 3 + 1 + 3 + 1)
        #expect(owners.where { $0.id > 100 }.max(of: \.score) == nil)
        #expect(owners.where { $0.id > 100 }.sum(of: \.score) == 0)
        #expect(owners.where { $0.id > 100 }.average(of: \.age) == nil)
        #expect(owners.min(ofProperty: "best.age") as Int? == 1)
        #expect(owners.distinct(by: ["group"]).sum(of: \.id) == 6)
    }

    @Test func badQueriesAreTypedErrors() throws {
        let db = try seeded()
        let owners = db.objects(QOwner.self)
        #expect(throws: QueryError.self) { try owners.adding(.comparison(QueryComparison(.keyPath(["nope"]), .equal, .constant(.int(1))))) }
        do {
            _ = try owners.adding(.comparison(QueryComparison(.keyPath(["name"]), .greater, .constant(.int(1)))))
            Issue.record("comparing a string with an int was accepted")
        } catch {
            #expect(error.kind == .typeMismatch)
            #expect(error.message.contains("name"))
        }
        do {
            _ = try owners.adding(.comparison(QueryComparison(.keyPath(["best", "nope"]), .equal, .constant(.int(1)))))
            Issue.record("an unknown linked property was accepted")
        } catch {
            #expect(error.kind == .unknownProperty)
            #expect(error.message.contains("QPet"))
            #expect(error.message.contains("nope"))
        }
        #expect(throws: QueryError.self) { try owners.adding(.comparison(QueryComparison(.keyPath(["score"]), .beginsWith, .constant(.string("1"))))) }
        #expect(throws: QueryError.self) { try owners.adding(.comparison(QueryComparison(.count(["name"]), .equal, .constant(.int(1))))) }
        #expect(throws: QueryError.self) { try owners.adding(.comparison(QueryComparison(.keyPath(["name", "x"]), .equal, .constant(.int(1))))) }
    }

    @Test func resultsAreLiveAndFollowWrites() throws {
        let db = try seeded()
        let active = db.objects(QOwner.self).where { $0.active }.sorted(byKeyPath: "score", ascending: false)
        #expect(active.count == 5)
        #expect(active.first?.id == 9)
        try db.write {
            let owner = QOwner()
            owner.id = 100
            owner.active = true
            owner.score = 1000
            db.add(owner)
        }
        #expect(active.count == 6)
        #expect(active.first?.id == 100)
        try db.write { db.object(ofType: QOwner.self, forPrimaryKey: 9)?.active = false }
        #expect(active.count == 5)
        #expect(!active.contains { $0.id == 9 })
        #expect(!active.isEmpty)
        try db.write { db.delete(db.objects(QOwner.self)) }
        #expect(active.isEmpty)
        #expect(active.count == 0)
        #expect(active.first == nil)
    }

    @Test func everyPropertyTypeCanBeQueried() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [AllTypes.self]))
        let ids = (0..<3).map { _ in ObjectId.generate() }
        let uuids = [UUID(), UUID(), UUID()]
        try db.write {
            for i in 0..<3 {
                let o = AllTypes()
                o.id = ids[i]
                o.bool = i == 1
                o.int = i; o.int8 = Int8(i); o.int16 = Int16(i); o.int32 = Int32(i); o.int64 = Int64(i)
                o.float = Float(i) + 0.5; o.double = Double(i) + 0.25
                o.string = "s\(i)"; o.data = Data([UInt8(i)])
                o.date = Date(timeIntervalSince1970: Double(i) * 1000)
                o.uuid = uuids[i]; o.objectId = ids[i]; o.decimal = Decimal128(i) + Decimal128(0.5)
                o.mood = [Mood.happy, .sad, .calm][i]; o.level = [Level.low, .mid, .high][i]
                o.optInt = i == 0 ? nil : i
                o.optString = i == 2 ? nil : "o\(i)"
                o.optUUID = i == 1 ? uuids[0] : nil
                o.optMood = i == 2 ? .calm : nil
                o.ints.append(objectsIn: Array(0...i))
                o.optStrings.append(objectsIn: i == 0 ? [nil] : ["a", nil])
                o.dates.append(Date(timeIntervalSince1970: Double(i)))
                db.add(o)
            }
        }
        let all = db.objects(AllTypes.self)
        func positions(_ r: Results<AllTypes>) -> [Int] { r.map(\.int) }
        #expect(positions(all.where { $0.bool }) == [1])
        #expect(positions(all.where { $0.int8 > 0 && $0.int16 < 2 }) == [1])
        #expect(positions(all.where { $0.int32 >= 1 && $0.int64 != 2 }) == [1])
        #expect(positions(all.where { $0.float > 1.0 }) == [1, 2])
        #expect(positions(all.where { $0.double < 1.3 }) == [0, 1])
        #expect(positions(all.where { $0.string == "s2" }) == [2])
        #expect(positions(all.where { $0.data == Data([1]) }) == [1])
        #expect(positions(all.where { $0.date >= Date(timeIntervalSince1970: 1000) }) == [1, 2])
        #expect(positions(all.where { $0.uuid == uuids[2] }) == [2])
        #expect(positions(all.where { $0.objectId == ids[0] }) == [0])
        #expect(positions(all.where { $0.id == ids[1] }) == [1])
        #expect(positions(all.where { $0.objectId > ids[0] }) == [1, 2])
        #expect(positions(all.where { $0.decimal > Decimal128(1) }) == [1, 2])
        #expect(positions(all.where { $0.mood == .sad }) == [1])
        #expect(positions(all.where { $0.mood.in([.happy, .calm]) }) == [0, 2])
        #expect(positions(all.where { $0.level > .low }) == [1, 2])
        #expect(positions(all.where { $0.optInt == nil }) == [0])
        #expect(positions(all.where { $0.optInt >= 1 }) == [1, 2])
        #expect(positions(all.where { $0.optString != nil }) == [0, 1])
        #expect(positions(all.where { $0.optUUID == uuids[0] }) == [1])
        #expect(positions(all.where { $0.optMood == .calm }) == [2])
        #expect(positions(all.where { $0.ints.count == 2 }) == [1])
        #expect(positions(all.where { $0.ints.contains(2) }) == [2])
        #expect(positions(all.where { $0.ints.sum >= 1 }) == [1, 2])
        #expect(positions(all.where { $0.optStrings.contains(nil) }) == [0, 1, 2])
        #expect(positions(all.where { $0.optStrings.contains("a") }) == [1, 2])
        #expect(positions(all.where { $0.dates.contains(Date(timeIntervalSince1970: 2)) }) == [2])
        #expect(positions(all.sorted(by: \.decimal, ascending: false)) == [2, 1, 0])
        #expect(positions(all.sorted(by: \.uuid)) == (0..<3).sorted { uuids[$0].uuidString.lowercased() < uuids[$1].uuidString.lowercased() })
        #expect(all.max(of: \.decimal) == Decimal128(2) + Decimal128(0.5))
        #expect(all.sum(of: \.int8) == 3)
        #expect(all.average(of: \.float) == Float(1.5))
    }

    @Test func listsOfObjectsCanBeQueriedInListOrder() throws {
        let db = try seeded()
        let owner = try #require(db.object(ofType: QOwner.self, forPrimaryKey: 8))
        try db.write {
            let extra = QPet()
            extra.name = "aardvark"
            extra.age = 3
            owner.pets.insert(extra, at: 0)
        }
        #expect(owner.pets.map(\.name) == ["aardvark", "pet8-0", "pet8-1"])
        let older = owner.pets.where { $0.age > 5 }
        #expect(older.map(\.name) == ["pet8-0", "pet8-1"])
        #expect(older.count == 2)
        #expect(owner.pets.sorted(byKeyPath: "age", ascending: false).map(\.name) == ["pet8-1", "pet8-0", "aardvark"])
        #expect(owner.pets.sorted(byKeyPath: "name").first?.name == "aardvark")
        #expect(owner.pets.sum(ofProperty: "age") as Int == 3 + 8 + 9)
        #expect(owner.pets.max(ofProperty: "age") as Int? == 9)
        #expect(owner.pets.where { $0.name.starts(with: "pet") }.average(ofProperty: "age") as Double? == 8.5)
        try db.write { owner.pets.remove(at: 1) }
        #expect(older.map(\.name) == ["pet8-1"])  // live
        #expect(owner.pets.distinct(by: ["age"]).count == 2)
    }

    @Test func indexedEqualityExaminesOnlyTheMatches() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [QOwner.self, QPet.self]))
        try db.write {
            for i in 0..<2_000 {
                let owner = QOwner()
                owner.id = i
                owner.group = i % 100
                owner.active = i % 3 == 0
                db.add(owner)
            }
        }
        let owners = db.objects(QOwner.self)
        let inGroup = owners.where { $0.group == 42 }
        // A count is answered by the index alone (its entries are counted): no object is read.
        #expect(inGroup.count == 20)
        #expect(inGroup.lastStatistics?.index == "index on 'group'")
        #expect(inGroup.lastStatistics?.objectsExamined == 0)
        #expect(inGroup.lastStatistics?.clustersScanned == 0)
        // Reading the matches examines exactly them.
        #expect(Array(inGroup).map(\.id) == ids(owners).filter { $0 % 100 == 42 })
        #expect(inGroup.lastStatistics?.index == "index on 'group'")
        #expect(inGroup.lastStatistics?.objectsExamined == 20)
        #expect(inGroup.lastStatistics?.clustersScanned == 0)
        let both = owners.where { $0.active && $0.group == 42 }
        #expect(both.count == ids(owners).filter { $0 % 100 == 42 && $0 % 3 == 0 }.count)
        #expect(both.lastStatistics?.objectsExamined == 20)
        let byKey = owners.where { $0.id == 1_234 }
        #expect(byKey.first?.id == 1_234)
        #expect(byKey.lastStatistics?.index == "primary key 'id'")
        #expect(byKey.lastStatistics?.objectsExamined == 1)
        #expect(byKey.explain().contains("primary key 'id'"))
        let scan = owners.where { $0.score > 1 }
        #expect(scan.count == 0)
        #expect(scan.lastStatistics?.index == nil)
        #expect(scan.lastStatistics?.clustersScanned ?? 0 > 1)
        #expect(scan.lastStatistics?.objectsExamined == 0)  // column kernels read chunks, not objects
    }

    @Test func topOfALargeSortIsSelectedNotFullySorted() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [QOwner.self, QPet.self]))
        var random = SplitMix64(seed: 7)
        var scores: [(Double, Int)] = []
        try db.write {
            for i in 0..<3_000 {
                let owner = QOwner()
                owner.id = i
                owner.score = Double(random.next() % 500)
                scores.append((owner.score, i))
                db.add(owner)
            }
        }
        let expected = scores.enumerated().sorted { a, b in a.element.0 != b.element.0 ? a.element.0 > b.element.0 : a.offset < b.offset }.map(\.element.1)
        let sorted = db.objects(QOwner.self).sorted(byKeyPath: "score", ascending: false)
        #expect((0..<100).map { sorted[$0].id } == Array(expected.prefix(100)))
        #expect(sorted[2_500].id == expected[2_500])
        #expect(ids(sorted) == expected)
    }
}

/// The public string-predicate API on Results and lists.
@Suite struct FilterStringTests {
    let folder = TemporaryFolder()

    @Test func filterStringsMatchTheDSL() throws {
        let db = try QueryTests().seeded()
        let owners = db.objects(QOwner.self)
        func ids(_ r: Results<QOwner>) -> [Int] { r.map(\.id) }
        #expect(ids(owners.filter("group == %@ AND active == true", 1)) == ids(owners.where { $0.group == 1 && $0.active }))
        #expect(ids(owners.filter("name BEGINSWITH[c] %@", "d")) == [3])
        #expect(ids(owners.filter("age == nil")) == [0, 3, 6, 9])
        #expect(ids(owners.filter("ANY pets.age > %d", 8)) == [8])
        #expect(ids(owners.filter("SUBQUERY(pets, $p, $p.age > 4).@count == 2")) == [5, 8])
        #expect(ids(owners.filter("%K IN %@", "group", [0, 3])) == [0, 3, 4, 7, 8])
        #expect(ids(owners.filter("score BETWEEN {3, 6}").sorted(byKeyPath: "id", ascending: false)) == [4, 3, 2])
        #expect(owners.index(matching: "name == %@", "Gus") == 6)
        let owner = try #require(db.object(ofType: QOwner.self, forPrimaryKey: 8))
        #expect(owner.pets.filter("age > 8").map(\.name) == ["pet8-1"])
    }

    @Test func malformedPredicatesAreTypedErrors() throws {
        let db = try QueryTests().seeded()
        let owners = db.objects(QOwner.self)
        do {
            _ = try owners.filter(FilterPredicate("name == 'unterminated"))
            Issue.record("an unterminated string was accepted")
        } catch {
            #expect(error.kind == .syntax)
            #expect(error.position != nil)
        }
        do {
            _ = try owners.filter(FilterPredicate("nope > %@", 3))
            Issue.record("an unknown property was accepted")
        } catch {
            #expect(error.kind == .unknownProperty)
            #expect(error.message.contains("nope"))
        }
        #expect(throws: QueryError.self) { try FilterPredicate("age > %d", "three") }
        #expect(throws: QueryError.self) { try FilterPredicate("(age > 3") }
    }
}
