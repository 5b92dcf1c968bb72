// Frozen snapshots: immutable views of one version, readable from any thread or actor at once,
// thawed back into live data, released with their last reference. The concurrent tests are
// meant to run under the thread sanitizer too.

import Foundation
import StrataTestWorkloads
import Testing
@testable import Strata

final class Account: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var balance = 0
    @Persisted var history: List<Int>
}

/// Reads a frozen person the way a report would (Frozen crosses into the actor).
actor Reporter {
    func describe(_ person: Frozen<Person>) -> String {
        "\(person.name) \(person.value.tags.count) \(person.dog?.name ?? "-")"
    }

    func thawHere(_ person: Frozen<Person>) -> (name: String?, isFrozen: Bool?, sameActor: Bool) {
        let live = person.value.thaw()
        return (live?.name, live?.isFrozen, live?.database?.core.confinement.actor === self)
    }
}

@Suite(.timeLimit(.minutes(10))) struct FrozenTests {
    /// A file with people 1...count, each with a dog and tags; returns the thread instance.
    static func populated(_ folder: TemporaryFolder, count: Int = 50) throws -> Database {
        let db = try Database(configuration: folder.configuration(objectTypes: [Person.self, Dog.self]))
        try db.write {
            for id in 1...count {
                db.create(Person.self, value: ["id": id, "name": "p\(id)", "dog": ["name": "d\(id)", "age": id],
                                               "tags": ["a", "b", "t\(id)"]])
            }
        }
        return db
    }

    @Test func aFrozenObjectKeepsItsVersion() throws {
        let folder = TemporaryFolder()
        let db = try Self.populated(folder, count: 3)
        let person = db.object(ofType: Person.self, forPrimaryKey: 1)!
        let frozen = person.freeze()
        #expect(frozen.isFrozen && !person.isFrozen)
        #expect(frozen.database!.isFrozen)
        #expect(frozen.freeze() === frozen, "freezing frozen data gives it back")
        let frozenTags = person.tags.freeze()
        let frozenAll = db.objects(Person.self).freeze()
        let frozenDb = db.freeze()
        #expect(frozenTags.isFrozen && frozenAll.isFrozen && frozenDb.isFrozen && !db.isFrozen)
        #expect(db.freeze() == frozenDb, "freezing the same version again shares one snapshot")
        try db.write {
            person.name = "changed"
            person.tags.append("new")
            db.create(Person.self, value: ["id": 4, "name": "p4"])
        }
        #expect(person.name == "changed")
        #expect(frozen.name == "p1")
        #expect(frozen.dog?.name == "d1")
        #expect(frozen.dog?.isFrozen == true, "links from frozen objects are frozen")
        #expect(Array(frozenTags) == ["a", "b", "t1"])
        #expect(frozenAll.count == 3)
        #expect(frozenAll.where { $0.name == "p2" }.count == 1)
        #expect(frozenDb.objects(Person.self).count == 3)
        #expect(frozenDb.object(ofType: Person.self, forPrimaryKey: 4) == nil)
        #expect(frozenDb.autorefresh == false)
    }

    @Test func queriesOfAFrozenListKeepTheirVersion() throws {
        let folder = TemporaryFolder()
        let db = try Self.populated(folder, count: 4)
        let person = db.object(ofType: Person.self, forPrimaryKey: 1)!
        try db.write { person.friends.append(objectsIn: db.objects(Person.self).where { $0.id > 1 }) }
        let frozenQuery = person.friends.where { $0.id >= 3 }.freeze()
        let queryOfFrozen = person.friends.freeze().sorted(byKeyPath: "id", ascending: false)
        try db.write { person.friends.removeAll() }
        #expect(person.friends.where { $0.id >= 3 }.count == 0)
        #expect(frozenQuery.isFrozen && frozenQuery.map(\.id) == [3, 4])
        #expect(queryOfFrozen.isFrozen && queryOfFrozen.map(\.id) == [4, 3, 2])
    }

    @Test func thawGivesTheLiveVersion() throws {
        let folder = TemporaryFolder()
        let db = try Self.populated(folder, count: 3)
        let frozenDb = db.freeze()
        let frozenPerson = frozenDb.object(ofType: Person.self, forPrimaryKey: 1)!
        let frozenDogs = frozenDb.objects(Dog.self)
        try db.write { db.object(ofType: Person.self, forPrimaryKey: 1)!.name = "renamed" }
        let thawed = try #require(frozenPerson.thaw())
        #expect(!thawed.isFrozen)
        #expect(thawed.name == "renamed", "thawing gives the newest version")
        #expect(thawed.database == db, "and the live database of this thread")
        #expect(frozenDb.thaw() == db)
        try thawed.database!.write { thawed.name = "written" }
        #expect(frozenPerson.name == "p1")
        let liveDogs = try #require(frozenDogs.thaw())
        #expect(!liveDogs.isFrozen && liveDogs.count == 3)
        let liveTags = try #require(frozenPerson.tags.thaw())
        try db.write { liveTags.append("x") }
        #expect(liveTags.count == 4 && frozenPerson.tags.count == 3)
        // The seeds' rule: appending frozen data to a live list needs both thawed.
        let frozenDog = frozenDb.objects(Dog.self)[2]
        let thawedFriends = try #require(frozenPerson.friends.thaw())
        let thawedOwner = try #require(frozenDb.object(ofType: Person.self, forPrimaryKey: 2)!.thaw())
        try db.write { thawedFriends.append(thawedOwner); thawed.dog = frozenDog.thaw() }
        #expect(thawed.friends.map(\.id) == [2])
        #expect(thawed.dog?.name == "d3")
        #expect(db.thaw(frozenPerson)?.name == "written")
    }

    @Test func thawingADeletedObjectGivesNil() throws {
        let folder = TemporaryFolder()
        let db = try Self.populated(folder, count: 2)
        let person = db.object(ofType: Person.self, forPrimaryKey: 2)!
        let frozen = person.freeze()
        let frozenTags = person.tags.freeze()
        try db.write { db.delete(person) }
        #expect(frozen.thaw() == nil)
        #expect(frozenTags.thaw() == nil)
        #expect(frozen.name == "p2", "the frozen copy still reads its version")
        #expect(!frozen.isInvalidated)
    }

    @Test func aFrozenSnapshotReleasesItsVersionWithItsLastReference() throws {
        let folder = TemporaryFolder()
        let db = try Self.populated(folder, count: 2)
        #expect(db.numberOfActiveVersions == 1)
        var frozenPerson: Person? = db.object(ofType: Person.self, forPrimaryKey: 1)!.freeze()
        var frozenTags: List<String>? = frozenPerson!.tags
        try db.write { db.create(Person.self, value: ["id": 3]) }
        #expect(db.numberOfActiveVersions == 2, "the snapshot pins the old version")
        frozenPerson = nil
        #expect(db.numberOfActiveVersions == 2, "its list still refers to the snapshot")
        #expect(frozenTags?.count == 3)
        frozenTags = nil
        #expect(db.numberOfActiveVersions == 1, "the last reference is gone")
    }

    @Test func frozenDataIsReadFromManyTasksAtOnce() async throws {
        let folder = TemporaryFolder()
        let (results, person, tags, byAge) = try {
            let db = try Self.populated(folder)
            let people = db.objects(Person.self)
            let one = people.where { $0.id == 7 }.first!
            try db.write { one.friends.append(objectsIn: people.where { $0.id <= 5 }) }
            // Sorted results sort lazily on first read: that too happens concurrently.
            let sorted = people.sorted(byKeyPath: "dog.age", ascending: false)
            return (Frozen(people), one.frozen, Frozen(one.tags), sorted.frozen)
        }()
        let expected = (1...50).reduce(0, +)
        let sums = await withTaskGroup(of: [Int].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var seen: [Int] = []
                    for round in 0..<5 {
                        // One shared Results value, object and list, read by every task.
                        let people = results.value
                        var sum = 0
                        for p in people { sum += p.id; _ = p.name; _ = p.dog?.age; _ = p.tags.count }
                        seen.append(sum)
                        seen.append(people.count * 1000 + people.where { $0.name == "p\((task + round) % 50 + 1)" }.count)
                        seen.append(person.value.dog!.age + person.tags.count + tags.value.count
                                    + person.value.friends.where { $0.id > 2 }.count * 100)
                        seen.append(people[task * 3].id == task * 3 + 1 && !people[task].isInvalidated
                                    && byAge.value[task].id == 50 - task && byAge.value.first?.id == 50 ? 1 : 0)
                    }
                    return seen
                }
            }
            var all: [[Int]] = []
            for await seen in group { all.append(seen) }
            return all
        }
        for seen in sums {
            for round in 0..<5 {
                #expect(seen[round * 4] == expected)
                #expect(seen[round * 4 + 1] == 50_001)
                #expect(seen[round * 4 + 2] == 7 + 3 + 3 + 300)
                #expect(seen[round * 4 + 3] == 1)
            }
        }
    }

    @Test func frozenCrossesActorsAndThawsThere() async throws {
        let folder = TemporaryFolder()
        let frozen = try {
            let db = try Self.populated(folder, count: 3)
            return db.object(ofType: Person.self, forPrimaryKey: 2)!.frozen
        }()
        let reporter = Reporter()
        #expect(await reporter.describe(frozen) == "p2 3 d2")
        let thawed = await reporter.thawHere(frozen)
        #expect(thawed.name == "p2")
        #expect(thawed.isFrozen == false)
        #expect(thawed.sameActor, "thawing inside an actor gives that actor's database")
    }
}

// MARK: Stress: consistent views while writers commit

/// Moves money between accounts: the total never changes.
actor Teller {
    var db: Database!
    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func transfer(seed: UInt64, count: Int, accounts: Int) async throws {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<count {
            let from = Int(rng.next() % UInt64(accounts))
            let to = (from + 1 + Int(rng.next() % UInt64(accounts - 1))) % accounts
            let amount = Int(rng.next() % 50)
            try await db.asyncWrite {
                let a = db.object(ofType: Account.self, forPrimaryKey: from)!
                let b = db.object(ofType: Account.self, forPrimaryKey: to)!
                a.balance -= amount
                b.balance += amount
                a.history.append(-amount)
                b.history.append(amount)
            }
        }
    }
}

/// Reads the accounts repeatedly, letting auto-refresh move it between reads.
actor Auditor {
    var db: Database!
    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    /// Each read: (version, total of balances, total of histories + initial balances, frozen total).
    func audit(rounds: Int, initial: Int) async -> [(UInt64, Int, Int)] {
        var views: [(UInt64, Int, Int)] = []
        for _ in 0..<rounds {
            let accounts = db.objects(Account.self)
            let total = accounts.reduce(0) { $0 + $1.balance }
            let replayed = accounts.reduce(0) { $0 + initial + $1.history.reduce(0, +) }
            views.append((db.version, total, replayed))
            await Task.yield()
        }
        return views
    }

    func frozenAccounts() -> Frozen<Results<Account>> { db.objects(Account.self).frozen }

    /// Waits, without asking, until auto-refresh has brought the instance to `version`.
    func reach(_ version: UInt64) async -> UInt64 {
        if db.version >= version { return db.version }
        let (moves, continuation) = AsyncStream.makeStream(of: UInt64.self)
        db.core.refreshHandlers.append { _, new in continuation.yield(new) }
        for await reached in moves where reached >= version { break }
        return db.version
    }
}

@Suite(.timeLimit(.minutes(10))) struct FrozenStressTests {
    @Test func readersSeeOneConsistentVersionWhileWritersCommit() async throws {
        let folder = TemporaryFolder()
        var config = folder.configuration(objectTypes: [Account.self])
        config.durability = .none
        let accounts = 8, initial = 100
        try {
            let db = try Database(configuration: config)
            try db.write { for id in 0..<accounts { db.create(Account.self, value: ["id": id, "balance": initial]) } }
        }()
        let total = accounts * initial
        let tellers = [try await Teller(config), try await Teller(config)]
        let auditors = [try await Auditor(config), try await Auditor(config), try await Auditor(config)]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, teller) in tellers.enumerated() {
                group.addTask { try await teller.transfer(seed: 0x5EED + UInt64(index), count: 40, accounts: accounts) }
            }
            for auditor in auditors {
                group.addTask {
                    let views = await auditor.audit(rounds: 60, initial: initial)
                    for (version, sum, replayed) in views {
                        #expect(sum == total, "version \(version) is not one consistent version")
                        #expect(replayed == total, "version \(version): balances and histories disagree")
                    }
                }
                group.addTask {
                    // A frozen snapshot, summed on other threads while commits go on.
                    for _ in 0..<5 {
                        let frozen = await auditor.frozenAccounts()
                        let sums = await withTaskGroup(of: Int.self) { inner in
                            for _ in 0..<3 { inner.addTask { frozen.value.reduce(0) { $0 + $1.balance } } }
                            return await inner.reduce(into: []) { $0.append($1) }
                        }
                        #expect(sums.allSatisfy { $0 == total })
                    }
                }
            }
            try await group.waitForAll()
        }
        // Every auditor reaches the final version on its own, with the same total.
        let finalConfig = config
        let final = try onAnotherThread { try Database(configuration: finalConfig).version }
        for auditor in auditors {
            #expect(await auditor.reach(final) == final)
            let last = await auditor.audit(rounds: 1, initial: initial)
            #expect(last[0].0 == final && last[0].1 == total && last[0].2 == total)
        }
    }
}
