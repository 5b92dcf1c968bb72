// The object workloads (BENCHMARKS.md, "Object workloads"): what an app does with its model
// objects, measured through each engine's object API, or, for raw SQLite, its C API.

import Foundation

// MARK: - The model

/// The object every engine stores: five properties, `id` the primary key. Codable because the
/// JSON repository encodes it; the GRDB engine gives it hand-written record conformances.
struct Person: Codable, Sendable {
    var id: Int
    var name: String
    var age: Int
    var score: Double
    var active: Bool
}

/// What a scan returns, summed so the reads cannot be optimised away and can be checked:
/// the object count, the sum of each name's UTF-8 length plus its first byte, and the sums of
/// ages and scores. Scores are multiples of 1/8 below 12,500, so their sum is exact in any
/// order (engines iterate in different orders).
struct ObjectScanSums: Equatable, Sendable {
    var count = 0
    var nameChecksum = 0
    var ageSum = 0
    var scoreSum = 0.0

    @inline(__always) mutating func add(nameLength: Int, nameFirstByte: UInt8, age: Int, score: Double) {
        count += 1
        nameChecksum &+= nameLength &+ Int(nameFirstByte)
        ageSum &+= age
        scoreSum += score
    }

    @inline(__always) mutating func add(name: String, age: Int, score: Double) {
        let utf8 = name.utf8
        add(nameLength: utf8.count, nameFirstByte: utf8.first ?? 0, age: age, score: score)
    }
}

/// `count` people generated from a fixed seed, ids `1...count` in insertion order (as an
/// autoincrementing key would give), names of 12–20 ASCII letters (16 on average; Swift keeps
/// names up to 15 bytes inline, longer ones on the heap, as real names are), ages 0–99, scores
/// multiples of 1/8, `active` random. Also `lookupIDs`, random existing ids for `pk-lookup`.
/// With `STRATA_BENCH_SCATTERED_IDS` set in the environment, ids are instead unrelated to the
/// insertion order (a bijective scramble of the index), as random or natural keys are: for
/// measuring lookups that no key guess can shortcut.
final class ObjectDataset: Sendable {
    let people: [Person]
    let lookupIDs: [Int]
    let expectedScan: ObjectScanSums
    let expectedLookupAgeSum: Int
    /// The id `open` reads, and its age.
    let openID: Int
    let openAge: Int

    init(count: Int, lookups: Int, seed: UInt64 = 0x5354_5241_5441_4F42) {
        precondition(count > 0)
        var rng = SplitMix64(seed: seed)
        var people: [Person] = []
        people.reserveCapacity(count)
        var sums = ObjectScanSums()
        let scattered = ProcessInfo.processInfo.environment["STRATA_BENCH_SCATTERED_IDS"] != nil
        for i in 0..<count {
            let length = 12 + rng.next(below: 9)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(length)
            for _ in 0..<length { bytes.append(UInt8(ascii: "a") + UInt8(rng.next(below: 26))) }
            let person = Person(
                id: scattered ? Int(bitPattern: UInt(UInt64(i) &* 0x9E37_79B9_7F4A_7C15)) : i + 1,
                name: String(decoding: bytes, as: UTF8.self),
                age: rng.next(below: 100),
                score: Double(rng.next(below: 100_000)) / 8,
                active: rng.next() & 1 == 1)
            sums.add(name: person.name, age: person.age, score: person.score)
            people.append(person)
        }
        var lookupIDs: [Int] = []
        lookupIDs.reserveCapacity(lookups)
        var lookupSum = 0
        for _ in 0..<lookups {
            let index = rng.next(below: count)
            lookupIDs.append(people[index].id)
            lookupSum += people[index].age
        }
        self.people = people
        self.lookupIDs = lookupIDs
        expectedScan = sums
        expectedLookupAgeSum = lookupSum
        let openIndex = rng.next(below: count)
        openID = people[openIndex].id
        openAge = people[openIndex].age
    }

    /// What a scan of a store holding exactly `people` reads.
    static func sums(of people: [Person]) -> ObjectScanSums {
        var sums = ObjectScanSums()
        for person in people { sums.add(name: person.name, age: person.age, score: person.score) }
        return sums
    }
}

// MARK: - Engines

/// One object store under test. As with `KVEngine`, each method runs a whole workload with the
/// engine's own loop over its own API, so no protocol or existential call happens per object.
/// Every write transaction commits with full durability. Methods are `async` because the JSON
/// repository is an actor; the runner calls them from a nonisolated async context, so awaiting
/// an uncontended actor does not switch threads.
///
/// To add an engine, write one file with a class conforming to this protocol and make
/// `ObjectEngineCatalog` list it (see there): for Strata's object layer that file is all.
protocol ObjectEngine: AnyObject {
    static var name: String { get }
    /// Opens the store in `directory`: a new, empty one in an empty directory, or the one a
    /// previous instance wrote and closed there (`open` and `peak-rss` reopen a built store).
    init(directory: String) async throws
    /// `bulk-insert`: inserts `people`, in order, in one write transaction.
    func insertAll(_ people: [Person]) async throws
    /// `scan`: visits every object, reading `name`, `age` and `score`.
    func scan() async throws -> ObjectScanSums
    /// `pk-lookup` (and `open`, with one id): fetches each object by primary key in one read
    /// transaction, reading its `age`; returns the sum of the ages.
    func sumAges(ofIDs ids: [Int]) async throws -> Int
    /// `update-all`: adds 1 to the `age` of every object, one write transaction. `people` are
    /// the objects the store holds (as inserted), for engines that address objects by key.
    func incrementAllAges(_ people: [Person]) async throws
    /// `delete-all`: deletes every object, one at a time, in one write transaction. `people`
    /// as for `incrementAllAges`.
    func deleteAll(_ people: [Person]) async throws
    /// `durable-commit`: inserts each of `people` in a transaction of its own, each committed
    /// durably before the next starts.
    func insertEach(_ people: [Person]) async throws
    /// `grouped-async`: inserts each of `people` in a transaction of its own, from `writers`
    /// concurrent writers, letting the engine group commits; returns once every commit is
    /// durable. Engines without grouped commits commit each durably (the default).
    func insertGrouped(_ people: [Person], writers: Int) async throws
    func close() async throws
}

extension ObjectEngine {
    func insertEach(_ people: [Person]) async throws {
        for person in people { try await insertAll([person]) }
    }

    func insertGrouped(_ people: [Person], writers: Int) async throws {
        try await insertEach(people)
    }
}

/// The object engines, by name. The peers are listed here; Strata's object engine joins with
/// one new file that declares, next to its `ObjectEngine` class,
///
///     extension ObjectEngineCatalog {
///         static var strata: (any ObjectEngine.Type)? { StrataObjectEngine.self }
///     }
///
/// which the compiler prefers to the `nil` default of `StrataObjectEngineSlot` below.
enum ObjectEngineCatalog: StrataObjectEngineSlot {
    static func engine(named name: String) -> (any ObjectEngine.Type)? {
        switch name {
        case GRDBObjectEngine.name: return GRDBObjectEngine.self
        case SQLiteObjectEngine.name: return SQLiteObjectEngine.self
        case JSONObjectEngine.name: return JSONObjectEngine.self
        case StrataEngineName: return strata
        default: return nil
        }
    }
}

/// Supplies `ObjectEngineCatalog.strata` until Strata's object engine file declares its own.
protocol StrataObjectEngineSlot {}
extension StrataObjectEngineSlot {
    static var strata: (any ObjectEngine.Type)? { nil }
}

// MARK: - Measuring

/// What the object workloads share across runs: the datasets (generated once, untimed) and the
/// large stores `open` and `peak-rss` read, built once per engine and reused by every run.
final class ObjectBench {
    let sizes: Sizes
    private let base: String
    private var cachedData: ObjectDataset?
    private var cachedLarge: ObjectDataset?
    private var builtStores: [String: String] = [:]
    private var largeBuildSeconds = 0.0
    /// The members and stores of the query workloads (`QueryWorkloads.swift`).
    let queries: QueryBench
    /// Seconds spent building the large stores and the query stores so far, which the runner
    /// leaves out of a workload's time budget.
    var buildSeconds: Double { largeBuildSeconds + queries.buildSeconds + repositories.buildSeconds }
    /// The items and stores of the repository workloads (`RepoWorkloads.swift`).
    let repositories: RepoBench

    init(sizes: Sizes, base: String) {
        self.sizes = sizes
        self.base = base
        queries = QueryBench(count: sizes.largeN, base: base)
        repositories = RepoBench(sizes: sizes, base: base)
    }

    /// N objects for the workloads that build their own store each run.
    var data: ObjectDataset {
        if let cachedData { return cachedData }
        let made = ObjectDataset(count: sizes.n, lookups: sizes.lookups)
        cachedData = made
        return made
    }

    /// The 1,000,000 (scaled) objects of the stores `open` and `peak-rss` read.
    var large: ObjectDataset {
        if let cachedLarge { return cachedLarge }
        let made = ObjectDataset(count: sizes.largeN, lookups: 0)
        cachedLarge = made
        return made
    }

    /// The directory of engine `E`'s large store, building it (untimed) the first time.
    func largeStore<E: ObjectEngine>(_ engine: E.Type) async throws -> String {
        if let directory = builtStores[E.name] { return directory }
        let directory = try makeTemporaryDirectory(in: base, prefix: "\(E.name)-large-")
        let start = monotonicNanos()
        let store = try await E(directory: directory)
        try await store.insertAll(large.people)
        try await store.close()
        let seconds = Double(monotonicNanos() - start) / 1e9
        largeBuildSeconds += seconds
        logProgress("  built the \(large.people.count)-object \(E.name) store for open and peak-rss in "
            + "\(formatNumber(seconds)) s (untimed)")
        builtStores[E.name] = directory
        return directory
    }

    /// Removes the large stores and the query stores.
    func removeStores() {
        for directory in builtStores.values { removeDirectory(directory) }
        builtStores = [:]
        queries.removeStores()
        repositories.removeStores()
    }
}

/// Runs object workload `workload` once for engine `E`, in the fresh, empty directory
/// `directory` (unused by `open` and `peak-rss`, which read the engine's prebuilt large store),
/// and returns the measured number in the workload's unit. Untimed: generating data, loading
/// the store, one warm-up scan before the read workloads (as for the kv workloads), and the
/// checks of what the workload read or wrote.
func measureObjects<E: ObjectEngine>(
    _ engine: E.Type, _ workload: Workload, bench: ObjectBench, directory: String
) async throws -> Double {
    switch workload {
    case .open:
        let data = bench.large
        let storeDirectory = try await bench.largeStore(E.self)
        let start = monotonicNanos()
        let store = try await E(directory: storeDirectory)
        let age = try await store.sumAges(ofIDs: [data.openID])
        let elapsed = monotonicNanos() - start
        try await store.close()
        guard age == data.openAge else { throw BenchError("\(E.name): open read a wrong age") }
        return Double(elapsed) / 1e6

    case .peakMemory:
        let data = bench.large
        let storeDirectory = try await bench.largeStore(E.self)
        let sampler = try AnonymousMemorySampler()
        let store = try await E(directory: storeDirectory)
        let opened = sampler.sample()
        let sums = try await store.scan()
        let peak = sampler.finish()
        try await store.close()
        guard sums == data.expectedScan else { throw BenchError("\(E.name): peak-rss scan read wrong values") }
        logProgress("    \(E.name) peak-rss: \(formatBytes(opened)) after open, peak \(formatBytes(peak)) "
            + "(anonymous memory above the baseline of \(formatBytes(sampler.baseline)))")
        return Double(peak)

    default:
        break
    }

    let data = bench.data
    let store = try await E(directory: directory)
    do {
        let result = try await measureInFreshStore(store, workload, data: data, bench: bench, directory: directory)
        try await store.close()
        return result
    } catch {
        try? await store.close()
        throw error
    }
}

private func measureInFreshStore<E: ObjectEngine>(_ store: E, _ workload: Workload, data: ObjectDataset, bench: ObjectBench,
                                                  directory: String) async throws -> Double {
    let n = data.people.count
    func perSecond(_ count: Int, _ elapsed: UInt64) -> Double { Double(count) / (Double(max(elapsed, 1)) / 1e9) }
    func check(_ sums: ObjectScanSums, _ expected: ObjectScanSums, _ what: String) throws {
        guard sums == expected else { throw BenchError("\(E.name): \(what): expected \(expected), read \(sums)") }
    }

    switch workload {
    case .bulkInsert:
        let start = monotonicNanos()
        try await store.insertAll(data.people)
        let elapsed = monotonicNanos() - start
        try check(try await store.scan(), data.expectedScan, "scan after bulk-insert")
        return perSecond(n, elapsed)

    case .objectScan:
        try await store.insertAll(data.people)
        _ = try await store.scan()   // untimed warm-up: every engine starts with its pages cached
        let start = monotonicNanos()
        let sums = try await store.scan()
        let elapsed = monotonicNanos() - start
        try check(sums, data.expectedScan, "scan")
        return Double(elapsed) / Double(n)

    case .pkLookup:
        try await store.insertAll(data.people)
        _ = try await store.scan()   // untimed warm-up, as for the scan
        let start = monotonicNanos()
        let sum = try await store.sumAges(ofIDs: data.lookupIDs)
        let elapsed = monotonicNanos() - start
        guard sum == data.expectedLookupAgeSum else { throw BenchError("\(E.name): lookups read wrong ages") }
        return perSecond(data.lookupIDs.count, elapsed)

    case .updateAll:
        try await store.insertAll(data.people)
        let start = monotonicNanos()
        try await store.incrementAllAges(data.people)
        let elapsed = monotonicNanos() - start
        var expected = data.expectedScan
        expected.ageSum += n
        try check(try await store.scan(), expected, "scan after update-all")
        return perSecond(n, elapsed)

    case .objectDurableCommit:
        let people = Array(data.people.prefix(max(1, n / 100)))
        let start = monotonicNanos()
        try await store.insertEach(people)
        let elapsed = monotonicNanos() - start
        try check(try await store.scan(), ObjectDataset.sums(of: people), "scan after durable-commit")
        return perSecond(people.count, elapsed)

    case .objectDurableVersusFloor:
        let people = Array(data.people.prefix(max(1, n / 100)))
        let floor = try FloorFile(directory: directory)
        let ratio = try await pairedWithFloor(floor, count: people.count) { try await store.insertEach(Array(people[$0])) }
        try check(try await store.scan(), ObjectDataset.sums(of: people), "scan after durable-floor")
        return ratio

    case .groupedAsync:
        let people = Array(data.people.prefix(max(1, n / 10)))
        let start = monotonicNanos()
        try await store.insertGrouped(people, writers: 8)
        let elapsed = monotonicNanos() - start
        try check(try await store.scan(), ObjectDataset.sums(of: people), "scan after grouped-async")
        return perSecond(people.count, elapsed)

    case .deleteAll:
        try await store.insertAll(data.people)
        let start = monotonicNanos()
        try await store.deleteAll(data.people)
        let elapsed = monotonicNanos() - start
        try check(try await store.scan(), ObjectScanSums(), "scan after delete-all")
        return perSecond(n, elapsed)

    case .spaceGrowth:
        guard let growing = store as? any SnapshotGrowthEngine else { throw BenchError("\(E.name) cannot hold a snapshot") }
        return try await measureSpaceGrowth(growing, data: data, commits: 10 * bench.sizes.commits)

    default:
        throw BenchError("\(workload.rawValue) is not an object workload")
    }
}
