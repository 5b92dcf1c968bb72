// The query workloads (BENCHMARKS.md, object workloads 6 and 7): counting the objects that match
// a condition, unindexed and through an index, and reading the first 100 objects of a sort.
// They read a store of their own, `Member` objects with an indexed `team`, built once per
// engine and invocation (untimed), so the stores and data of the other object workloads stay as
// they were.

// MARK: - The model

/// The object the query workloads store: like `Person`, plus `team`, which every engine
/// indexes. Ages and `active` follow their own distribution so that the filter thresholds
/// select exactly 1% and 50% (see `MemberDataset`).
struct Member: Equatable, Sendable {
    var id: Int
    var name: String
    var age: Int
    var score: Double
    var active: Bool
    var team: Int
}

/// `count` members generated from a fixed seed: ids `1...count` in insertion order, names of
/// 12–20 ASCII letters as for `Person`, ages uniform in 0–74, `active` true for 3 in 4, teams
/// uniform in 0–99, scores multiples of 1/8 below 12,500 (so about ten members share each score
/// at 1,000,000 members: the top 100 include ties). With these, `age > 73 && active` holds
/// for 1/75 × 3/4 = 1% of members and `age > 24 && active` for 50/75 × 3/4 = 50%, in
/// expectation; the exact counts are computed here, and every engine's answer is checked.
final class MemberDataset: Sendable {
    /// `filter-1pct` counts members with `age > onePercentAge && active`.
    static let onePercentAge = 73
    /// `filter-50pct` counts members with `age > halfAge && active`.
    static let halfAge = 24
    /// `filter-indexed` counts members of this team (1% of them).
    static let queriedTeam = 42
    /// `sort-top100` reads this many members, highest score first.
    static let topCount = 100

    let members: [Member]
    let expectedOnePercent: Int
    let expectedHalf: Int
    let expectedTeam: Int
    /// The scores of the first `topCount` members by descending score. Which members tie at a
    /// score is up to each engine; the scores at each position are not.
    let expectedTopScores: [Double]

    init(count: Int, seed: UInt64 = 0x5354_5241_5441_5157) {
        precondition(count > 0)
        var rng = SplitMix64(seed: seed)
        var members: [Member] = []
        members.reserveCapacity(count)
        var onePercent = 0, half = 0, team = 0
        for i in 0..<count {
            let length = 12 + rng.next(below: 9)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(length)
            for _ in 0..<length { bytes.append(UInt8(ascii: "a") + UInt8(rng.next(below: 26))) }
            let member = Member(
                id: i + 1,
                name: String(decoding: bytes, as: UTF8.self),
                age: rng.next(below: 75),
                score: Double(rng.next(below: 100_000)) / 8,
                active: rng.next() & 3 != 0,
                team: rng.next(below: 100))
            if member.active, member.age > Self.onePercentAge { onePercent += 1 }
            if member.active, member.age > Self.halfAge { half += 1 }
            if member.team == Self.queriedTeam { team += 1 }
            members.append(member)
        }
        self.members = members
        expectedOnePercent = onePercent
        expectedHalf = half
        expectedTeam = team
        expectedTopScores = Array(members.map(\.score).sorted(by: >).prefix(Self.topCount))
    }

    /// Checks what `sort-top100` read: the expected scores in order, and every member exactly
    /// as stored (all six properties, found by id).
    func checkTop(_ top: [Member], engine: String) throws {
        guard top.map(\.score) == expectedTopScores else {
            throw BenchError("\(engine): sort-top100 read scores \(top.map(\.score).prefix(5))…, "
                + "expected \(expectedTopScores.prefix(5))… (\(top.count) of \(expectedTopScores.count))")
        }
        for member in top {
            guard member.id >= 1, member.id <= members.count, members[member.id - 1] == member else {
                throw BenchError("\(engine): sort-top100 read member \(member.id) with wrong values: \(member)")
            }
        }
    }
}

// MARK: - Engines

/// One store under test in the query workloads. As for `ObjectEngine`, each method runs a whole
/// query through the engine's own API, the way an app would write it. The stores hold one
/// table of `Member`s with an index on `team` (and the primary key on `id`), nothing else.
///
/// To add an engine, write a class conforming to this protocol and make `QueryEngineCatalog`
/// list it; Strata's engine joins through `StrataQueryEngineSlot`, as for the object engines.
protocol QueryEngine: AnyObject {
    static var name: String { get }
    /// Opens the store in `directory`: a new one in an empty directory, or the one a previous
    /// instance built there.
    init(directory: String) async throws
    /// Inserts `members`, in order, in one write transaction (building the store, untimed).
    func insertAll(_ members: [Member]) async throws
    /// `filter-1pct`, `filter-50pct`: the number of members with `age > age && active`.
    func countActive(olderThan age: Int) async throws -> Int
    /// `filter-indexed`: the number of members with `team == team`, through the index.
    func count(inTeam team: Int) async throws -> Int
    /// `sort-top100`: the first `limit` members by descending score, every property read.
    func highestScores(limit: Int) async throws -> [Member]
    func close() async throws
}

/// The query engines, by name: the SQLite peers, and Strata's when its file declares
///
///     extension QueryEngineCatalog {
///         static var strata: (any QueryEngine.Type)? { StrataQueryEngine.self }
///     }
///
/// (with `-DNO_STRATA` that file builds empty and the `nil` default stands). The JSON
/// repository has no query engine: it would filter and sort its in-memory dictionary.
enum QueryEngineCatalog: StrataQueryEngineSlot {
    static func engine(named name: String) -> (any QueryEngine.Type)? {
        switch name {
        case GRDBQueryEngine.name: return GRDBQueryEngine.self
        case SQLiteQueryEngine.name: return SQLiteQueryEngine.self
        case StrataEngineName: return strata
        default: return nil
        }
    }
}

/// Supplies `QueryEngineCatalog.strata` until Strata's query engine file declares its own.
protocol StrataQueryEngineSlot {}
extension StrataQueryEngineSlot {
    static var strata: (any QueryEngine.Type)? { nil }
}

// MARK: - Measuring

/// The members (generated once, untimed) and each engine's store of them (built once per
/// engine and invocation, untimed, then only read).
final class QueryBench {
    let count: Int
    private let base: String
    private var cachedData: MemberDataset?
    private var builtStores: [String: String] = [:]
    /// Seconds spent building stores so far (left out of a workload's time budget).
    private(set) var buildSeconds = 0.0

    init(count: Int, base: String) {
        self.count = count
        self.base = base
    }

    var data: MemberDataset {
        if let cachedData { return cachedData }
        let made = MemberDataset(count: count)
        cachedData = made
        return made
    }

    /// The directory of engine `E`'s store of members, building it the first time.
    func store<E: QueryEngine>(_ engine: E.Type) async throws -> String {
        if let directory = builtStores[E.name] { return directory }
        let members = data.members
        let directory = try makeTemporaryDirectory(in: base, prefix: "\(E.name)-members-")
        let start = monotonicNanos()
        let store = try await E(directory: directory)
        do {
            try await store.insertAll(members)
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        let seconds = Double(monotonicNanos() - start) / 1e9
        buildSeconds += seconds
        logProgress("  built the \(members.count)-member \(E.name) store for the query workloads in "
            + "\(formatNumber(seconds)) s (untimed)")
        builtStores[E.name] = directory
        return directory
    }

    func removeStores() {
        for directory in builtStores.values { removeDirectory(directory) }
        builtStores = [:]
    }
}

/// Runs query workload `workload` once for engine `E` and returns its time in ms. Untimed:
/// building the store (the first time), opening it, one warm-up run of the same query (so
/// every engine starts with its pages mapped or cached), and checking the answer.
func measureQueries<E: QueryEngine>(_ engine: E.Type, _ workload: Workload, bench: QueryBench) async throws -> Double {
    let data = bench.data
    let store = try await E(directory: try await bench.store(E.self))
    do {
        let result = try await measureQuery(store, workload, data: data)
        try await store.close()
        return result
    } catch {
        try? await store.close()
        throw error
    }
}

private func measureQuery<E: QueryEngine>(_ store: E, _ workload: Workload, data: MemberDataset) async throws -> Double {
    func milliseconds(_ elapsed: UInt64) -> Double { Double(elapsed) / 1e6 }
    func check(_ count: Int, _ expected: Int) throws {
        guard count == expected else { throw BenchError("\(E.name): \(workload.rawValue) counted \(count), expected \(expected)") }
    }
    switch workload {
    case .filterOnePercent, .filterHalf:
        let age = workload == .filterOnePercent ? MemberDataset.onePercentAge : MemberDataset.halfAge
        let expected = workload == .filterOnePercent ? data.expectedOnePercent : data.expectedHalf
        try check(try await store.countActive(olderThan: age), expected)   // warm-up
        let start = monotonicNanos()
        let count = try await store.countActive(olderThan: age)
        let elapsed = monotonicNanos() - start
        try check(count, expected)
        return milliseconds(elapsed)

    case .filterIndexed:
        try check(try await store.count(inTeam: MemberDataset.queriedTeam), data.expectedTeam)   // warm-up
        let start = monotonicNanos()
        let count = try await store.count(inTeam: MemberDataset.queriedTeam)
        let elapsed = monotonicNanos() - start
        try check(count, data.expectedTeam)
        return milliseconds(elapsed)

    case .sortTop100:
        try data.checkTop(try await store.highestScores(limit: MemberDataset.topCount), engine: E.name)   // warm-up
        let start = monotonicNanos()
        let top = try await store.highestScores(limit: MemberDataset.topCount)
        let elapsed = monotonicNanos() - start
        try data.checkTop(top, engine: E.name)
        return milliseconds(elapsed)

    default:
        throw BenchError("\(workload.rawValue) is not a query workload")
    }
}
