// The repository workloads (BENCHMARKS.md, "Workloads added for … repositories"): plain
// `Codable` values kept by id in a repository, the pattern of the project's seed 004 — one
// save, lookups by id through an actor hop, opening a large repository, decoding every item,
// and the memory a large repository holds once it has served lookups.

import Foundation

// MARK: - The model

/// The value every repository engine stores: a plain `Codable` struct with an `Int` id, the
/// same five properties as `Person` (and generated the same way), so the object and repository
/// tables read alike. No engine gets a hand-written coding for it: that is the point.
struct RepoItem: Codable, Identifiable, Equatable, Sendable {
    var id: Int
    var name: String
    var age: Int
    var score: Double
    var active: Bool

    init(_ person: Person) {
        id = person.id
        name = person.name
        age = person.age
        score = person.score
        active = person.active
    }
}

// MARK: - Engines

/// One repository under test, used the way an app uses its repository: every method is one
/// call (or one call per item) of the repository's own API from outside its actor or queue.
protocol RepoEngine: AnyObject {
    static var name: String { get }
    /// How many single saves `repo-save` times in a run (the JSON repository rewrites its
    /// whole file per save, so it gets fewer; the unit is per save either way).
    static var savesPerRun: Int { get }
    /// Opens the repository in `directory`: a new one in an empty directory, or the one a
    /// previous instance left there.
    init(directory: String) async throws
    /// Saves `items` in one transaction (building a store, untimed).
    func saveAll(_ items: [RepoItem]) async throws
    /// Saves `item` (insert or replace) durably: one transaction, one call.
    func save(_ item: RepoItem) async throws
    /// Finds each id with one call of the repository's lookup and sums the ages.
    func sumAges(ofIDs ids: [Int]) async throws -> Int
    /// Every item, decoded from what the store keeps (for the JSON repository: its file).
    func decodeAll() async throws -> [RepoItem]
    func close() async throws
}

/// The repository engines by name; Strata's joins from `StrataRepoEngine.swift` through
/// `StrataRepoEngineSlot` (with `-DNO_STRATA` that file builds empty and the `nil` stands).
enum RepoEngineCatalog: StrataRepoEngineSlot {
    static func engine(named name: String) -> (any RepoEngine.Type)? {
        switch name {
        case JSONRepoEngine.name: return JSONRepoEngine.self
        case GRDBRepoEngine.name: return GRDBRepoEngine.self
        case StrataEngineName: return strata
        default: return nil
        }
    }
}

/// Supplies `RepoEngineCatalog.strata` until Strata's repository engine file declares its own.
protocol StrataRepoEngineSlot {}
extension StrataRepoEngineSlot {
    static var strata: (any RepoEngine.Type)? { nil }
}

// MARK: - Measuring

/// The items (generated once, untimed) and each engine's stores of them, built once per engine
/// and invocation (untimed): N items for `repo-save`, `repo-find` and `repo-load-all`, L items
/// for `repo-open` and `repo-rss`.
final class RepoBench {
    let sizes: Sizes
    private let base: String
    private var cachedSmall: ObjectDataset?
    private var cachedLarge: ObjectDataset?
    private var smallStores: [String: String] = [:]
    private var largeStores: [String: String] = [:]
    /// Seconds spent building stores so far (left out of a workload's time budget).
    private(set) var buildSeconds = 0.0

    init(sizes: Sizes, base: String) {
        self.sizes = sizes
        self.base = base
    }

    /// N people as items, and random existing ids for the lookups.
    var small: ObjectDataset {
        if let cachedSmall { return cachedSmall }
        let made = ObjectDataset(count: sizes.n, lookups: sizes.lookups)
        cachedSmall = made
        return made
    }

    /// L people as items, and random existing ids for the lookups of `repo-rss`.
    var large: ObjectDataset {
        if let cachedLarge { return cachedLarge }
        let made = ObjectDataset(count: sizes.largeN, lookups: sizes.lookups, seed: 0x5354_5241_5441_5250)
        cachedLarge = made
        return made
    }

    func store<E: RepoEngine>(_ engine: E.Type, large: Bool) async throws -> String {
        if let directory = large ? largeStores[E.name] : smallStores[E.name] { return directory }
        let people = large ? self.large.people : small.people
        let directory = try makeTemporaryDirectory(in: base, prefix: "\(E.name)-repo-")
        let start = monotonicNanos()
        let store = try await E(directory: directory)
        do {
            try await store.saveAll(people.map(RepoItem.init))
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        let seconds = Double(monotonicNanos() - start) / 1e9
        buildSeconds += seconds
        logProgress("  built the \(people.count)-item \(E.name) repository in \(formatNumber(seconds)) s (untimed)")
        if large { largeStores[E.name] = directory } else { smallStores[E.name] = directory }
        return directory
    }

    func removeStores() {
        for directory in Array(smallStores.values) + Array(largeStores.values) { removeDirectory(directory) }
        smallStores = [:]
        largeStores = [:]
    }
}

/// Runs repository workload `workload` once for engine `E` in the fresh, empty `directory`
/// and returns the measured number in the workload's unit. Untimed: building the stores (the
/// first time), copying the N-item store for `repo-save` (whose saves change it), opening the
/// store for the other workloads but `repo-open`, and checking what was read or written.
func measureRepository<E: RepoEngine>(_ engine: E.Type, _ workload: Workload, bench: RepoBench, directory: String) async throws -> Double {
    func perSecond(_ count: Int, _ elapsed: UInt64) -> Double { Double(count) / (Double(max(elapsed, 1)) / 1e9) }
    switch workload {
    case .repoSave, .repoSaveVersusFloor:
        let data = bench.small
        let source = try await bench.store(E.self, large: false)
        for file in try FileManager.default.contentsOfDirectory(atPath: source) {
            try FileManager.default.copyItem(atPath: source + "/" + file, toPath: directory + "/" + file)
        }
        // Edits of existing items spread over the store (an app's usual save), each a new age.
        let count = min(E.savesPerRun, data.people.count)
        var rng = SplitMix64(seed: 0x5245_504F_5341_5645)
        var edited: [RepoItem] = []
        for _ in 0..<count {
            var item = RepoItem(data.people[rng.next(below: data.people.count)])
            item.age += 1_000
            edited.append(item)
        }
        // Made before the store opens, so its first sync is not inside a timed block.
        let floor = workload == .repoSaveVersusFloor ? try FloorFile(directory: directory) : nil
        let store = try await E(directory: directory)
        do {
            _ = try await store.sumAges(ofIDs: [edited[0].id])   // opened and warm, as an app's repository is
            let measured: Double
            if let floor {
                // Each block of saves follows as many floor rounds, so both meet the disk at the
                // same speed; the ratio, unlike saves/s, compares engines run minutes apart.
                measured = try await pairedWithFloor(floor, count: count) { range in
                    for item in edited[range] { try await store.save(item) }
                }
            } else {
                let start = monotonicNanos()
                for item in edited { try await store.save(item) }
                measured = perSecond(count, monotonicNanos() - start)
            }
            var latest: [Int: Int] = [:]
            for item in edited { latest[item.id] = item.age }
            let expected = latest.values.reduce(0, +)
            guard try await store.sumAges(ofIDs: Array(latest.keys)) == expected else {
                throw BenchError("\(E.name): \(workload.rawValue): the saved ages do not read back")
            }
            try await store.close()
            return measured
        } catch {
            try? await store.close()
            throw error
        }

    case .repoFind:
        let data = bench.small
        let store = try await E(directory: try await bench.store(E.self, large: false))
        do {
            _ = try await store.sumAges(ofIDs: data.lookupIDs)   // untimed warm-up
            let start = monotonicNanos()
            let sum = try await store.sumAges(ofIDs: data.lookupIDs)
            let elapsed = monotonicNanos() - start
            guard sum == data.expectedLookupAgeSum else { throw BenchError("\(E.name): repo-find read wrong ages") }
            try await store.close()
            return perSecond(data.lookupIDs.count, elapsed)
        } catch {
            try? await store.close()
            throw error
        }

    case .repoLoadAll:
        let data = bench.small
        let store = try await E(directory: try await bench.store(E.self, large: false))
        do {
            _ = try await store.decodeAll()   // untimed warm-up: pages cached for every engine
            let start = monotonicNanos()
            let items = try await store.decodeAll()
            let elapsed = monotonicNanos() - start
            var sums = ObjectScanSums()
            for item in items { sums.add(name: item.name, age: item.age, score: item.score) }
            guard sums == data.expectedScan else { throw BenchError("\(E.name): repo-load-all read \(sums), expected \(data.expectedScan)") }
            try await store.close()
            return Double(elapsed) / 1e6
        } catch {
            try? await store.close()
            throw error
        }

    case .repoOpen:
        let data = bench.large
        let storeDirectory = try await bench.store(E.self, large: true)
        let start = monotonicNanos()
        let store = try await E(directory: storeDirectory)
        let age = try await store.sumAges(ofIDs: [data.openID])
        let elapsed = monotonicNanos() - start
        try await store.close()
        guard age == data.openAge else { throw BenchError("\(E.name): repo-open read a wrong age") }
        return Double(elapsed) / 1e6

    case .repoMemory:
        let data = bench.large
        let storeDirectory = try await bench.store(E.self, large: true)
        let sampler = try AnonymousMemorySampler()
        let store = try await E(directory: storeDirectory)
        let opened = sampler.sample()
        let sum: Int
        do {
            sum = try await store.sumAges(ofIDs: data.lookupIDs)
        } catch {
            _ = sampler.finish()
            try? await store.close()
            throw error
        }
        let held = sampler.sample()
        let peak = sampler.finish()
        try await store.close()
        guard sum == data.expectedLookupAgeSum else { throw BenchError("\(E.name): repo-rss lookups read wrong ages") }
        logProgress("    \(E.name) repo-rss: \(formatBytes(opened)) after open, \(formatBytes(held)) after "
            + "\(data.lookupIDs.count) lookups, peak \(formatBytes(peak)) (anonymous memory above \(formatBytes(sampler.baseline)))")
        return Double(held)

    default:
        throw BenchError("\(workload.rawValue) is not a repository workload")
    }
}
