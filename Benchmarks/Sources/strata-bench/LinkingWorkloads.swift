// The cost of reading `LinkingObjects`, which Strata evaluates as a query over the origin
// property (nothing is stored for them). Strata only: the peers have no inverse relationships
// (in SQL, the same question is a `count(*) … WHERE dog_id = ?`, which an index on the foreign
// key answers in O(log n)).
//
//   strata-bench linking [--objects N] [--samples N] [--dir PATH]
//
// N owners, each with a to-one `favourite` and a two-element list `dogs` of the 1,000 dogs;
// each sample counts one random dog's `fans` (through the to-one link) and `owners` (through
// the list), and iterates the fans. Then 25 counts of the dogs that have an owner with a small
// id: a query over every dog that goes through `owners`. Last, the cost of a commit that renames
// one dog while all owners are observed (without key paths, so a linked dog's change counts as a
// modification of its owners): against the same commit with no observer.

#if !NO_STRATA
import Foundation
import Strata

final class LinkDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(originProperty: "favourite") var fans: LinkingObjects<LinkOwner>
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<LinkOwner>
}

final class LinkOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var favourite: LinkDog?
    @Persisted var dogs: List<LinkDog>
}

actor LinkingBench {
    var db: Database!
    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func fill(owners: Int, dogs: Int) throws {
        try db.write {
            let all = (0..<dogs).map { db.create(LinkDog.self, value: ["id": $0]) }
            for id in 0..<owners {
                let owner = db.create(LinkOwner.self, value: ["id": id, "favourite": all[id % dogs]])
                owner.dogs.append(objectsIn: [all[id % dogs], all[(id * 7 + 1) % dogs]])
            }
        }
    }

    /// µs for counting one dog's fans, counting its owners, and iterating its fans.
    func sample(dog id: Int) throws -> (fans: Double, owners: Double, iterate: Double, found: Int) {
        guard let dog = db.object(ofType: LinkDog.self, forPrimaryKey: id) else { throw BenchError("no dog \(id)") }
        let clock = ContinuousClock()
        func micro(_ d: Duration) -> Double { Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12 }
        var start = clock.now
        let fans = dog.fans.count
        let fansTime = micro(clock.now - start)
        start = clock.now
        let owners = dog.owners.count
        let ownersTime = micro(clock.now - start)
        start = clock.now
        var seen = 0
        for owner in dog.fans { seen &+= owner.id }
        let iterateTime = micro(clock.now - start)
        return (fansTime, ownersTime, iterateTime, fans + owners + (seen & 1))
    }

    /// µs for a query over all dogs through their linking objects: the dogs with an owner
    /// whose id is below `bound` (and how many there are).
    func queryThrough(bound: Int) throws -> (time: Double, found: Int) {
        let clock = ContinuousClock()
        let start = clock.now
        let found = db.objects(LinkDog.self).where { $0.owners.id < bound }.count
        let elapsed = clock.now - start
        return (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12, found)
    }

    private var token: NotificationToken?
    private(set) var modified = 0

    /// Starts or stops observing every owner.
    func observeOwners(_ on: Bool) {
        token?.invalidate()
        token = nil
        guard on else { return }
        token = db.objects(LinkOwner.self).observe { [unowned self] change in
            if case .update(_, _, _, let modifications) = change { modified += modifications.count }
        }
    }

    /// µs for a commit that renames dog `id` (observers, if any, called before it returns).
    func rename(dog id: Int, _ name: String) throws -> Double {
        guard let dog = db.object(ofType: LinkDog.self, forPrimaryKey: id) else { throw BenchError("no dog \(id)") }
        let clock = ContinuousClock()
        let start = clock.now
        try db.write { dog.name = name }
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
    }
}

func runLinkingBenchmark(_ arguments: [String]) async throws {
    let (objects, samples, dir) = try subcommandOptions(arguments, command: "linking", objects: 100_000, samples: 200)
    let parent = dir ?? FileManager.default.currentDirectoryPath
    let folder = try makeTemporaryDirectory(in: parent, prefix: "strata-bench-linking-")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let dogs = 1_000
    print("linking: \(objects) owners, \(dogs) dogs, \(samples) samples, \(fileSystemName(folder))")
    let configuration = Database.Configuration(fileURL: URL(fileURLWithPath: folder).appendingPathComponent("linking.strata"),
                                               objectTypes: [LinkDog.self, LinkOwner.self])
    let bench = try await LinkingBench(configuration)
    try await bench.fill(owners: objects, dogs: dogs)
    var fans: [Double] = [], owners: [Double] = [], iterate: [Double] = []
    var rng = SplitMix64(seed: 42)
    for _ in 0..<(samples + 5) {
        let result = try await bench.sample(dog: rng.next(below: dogs))
        fans.append(result.fans); owners.append(result.owners); iterate.append(result.iterate)
    }
    var through: [Double] = []
    for sample in 0..<25 {
        let result = try await bench.queryThrough(bound: 10 + sample)
        guard result.found > 0 else { throw BenchError("linking: the query through owners found no dog") }
        through.append(result.time)
    }
    var unobserved: [Double] = [], observed: [Double] = []
    for round in 0..<30 {
        await bench.observeOwners(false)
        unobserved.append(try await bench.rename(dog: rng.next(below: dogs), "u\(round)"))
        await bench.observeOwners(true)
        observed.append(try await bench.rename(dog: rng.next(below: dogs), "o\(round)"))
    }
    await bench.observeOwners(false)
    guard await bench.modified > 0 else { throw BenchError("linking: renaming dogs modified no observed owner") }
    func median(_ values: [Double]) -> Double { values.dropFirst(5).sorted()[(values.count - 5) / 2] }
    print(String(format: "count through a to-one link (fans):  median %9.1f µs  (%.1f ns per owner)", median(fans), median(fans) * 1000 / Double(objects)))
    print(String(format: "count through a list (owners):       median %9.1f µs  (%.1f ns per owner)", median(owners), median(owners) * 1000 / Double(objects)))
    print(String(format: "iterate the fans (~%d objects):      median %9.1f µs", objects / dogs, median(iterate)))
    print(String(format: "query %d dogs through owners (owners.id < k): median %9.1f µs  (%.1f ns per owner)", dogs, median(through), median(through) * 1000 / Double(objects)))
    print(String(format: "rename a dog, no observer:           median %9.1f µs", median(unobserved)))
    print(String(format: "rename a dog, all owners observed:   median %9.1f µs  (%.1f ns per owner)", median(observed), (median(observed) - median(unobserved)) * 1000 / Double(objects)))
}

#endif
