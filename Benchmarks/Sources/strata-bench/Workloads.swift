#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Deterministic data

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast and fully determined by its seed.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in 0..<bound (Lemire's multiply-shift; the tiny bias is irrelevant here).
    mutating func next(below bound: Int) -> Int {
        Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(bound)).high)
    }
}

let keySize = 16
let valueSize = 100

/// `count` key/value pairs in one flat allocation each, generated from a fixed seed.
/// Key `i` is 8 pseudo-random bytes followed by `i` big-endian, so keys are unique and their
/// generation order is a random order with respect to the sort order.
/// Also holds `getOrder`: indices of existing keys in random order for `kv-random-get`.
final class Dataset {
    let count: Int
    let keys: UnsafeMutableRawPointer
    let values: UnsafeMutableRawPointer
    let getCount: Int
    let getOrder: UnsafeMutablePointer<Int32>

    init(count: Int, getCount: Int, seed: UInt64 = 0x5754_5241_5441_2024) {
        precondition(count > 0 && count <= Int(Int32.max))
        self.count = count
        self.getCount = getCount
        keys = UnsafeMutableRawPointer.allocate(byteCount: count * keySize, alignment: 16)
        values = UnsafeMutableRawPointer.allocate(byteCount: count * valueSize, alignment: 16)
        getOrder = UnsafeMutablePointer<Int32>.allocate(capacity: max(getCount, 1))
        var rng = SplitMix64(seed: seed)
        for i in 0..<count {
            let k = keys + i * keySize
            k.storeBytes(of: rng.next().bigEndian, toByteOffset: 0, as: UInt64.self)
            k.storeBytes(of: UInt64(i).bigEndian, toByteOffset: 8, as: UInt64.self)
            let v = values + i * valueSize
            var offset = 0
            while offset < valueSize {
                var word = rng.next()
                let n = min(8, valueSize - offset)
                withUnsafeBytes(of: &word) { w in
                    (v + offset).copyMemory(from: w.baseAddress!, byteCount: n)
                }
                offset += n
            }
        }
        for i in 0..<getCount { getOrder[i] = Int32(rng.next(below: count)) }
    }

    deinit {
        keys.deallocate()
        values.deallocate()
        getOrder.deallocate()
    }

    @inline(__always) func key(_ i: Int) -> UnsafeRawPointer { UnsafeRawPointer(keys + i * keySize) }
    @inline(__always) func value(_ i: Int) -> UnsafeRawPointer { UnsafeRawPointer(values + i * valueSize) }

    /// What `randomGets` must return: the sum of the first value byte of every key looked up.
    func expectedGetChecksum() -> UInt64 {
        var sum: UInt64 = 0
        for j in 0..<getCount { sum &+= UInt64(value(Int(getOrder[j])).load(as: UInt8.self)) }
        return sum
    }

    /// What `scan` must return: over all pairs, first key byte + last value byte (order-free).
    func expectedScanChecksum() -> UInt64 {
        var sum: UInt64 = 0
        for i in 0..<count {
            sum &+= UInt64(key(i).load(as: UInt8.self))
            sum &+= UInt64(value(i).load(fromByteOffset: valueSize - 1, as: UInt8.self))
        }
        return sum
    }
}

// MARK: - Engines

/// One storage engine under test. Each method runs a whole workload with its own per-op loop,
/// so the loops are monomorphic and there is no existential or protocol call per operation.
/// Every store is opened with full durability (each commit waits for the disk), in every
/// workload; only `kv-durable-commit` commits more than once in its timed part.
protocol KVEngine: AnyObject {
    static var name: String { get }
    /// Opens (creating) a new, empty store inside the existing empty directory `directory`.
    init(directory: String) throws
    /// Puts pairs `0..<count` of `data`, in their (random) generation order, in one transaction.
    func putAll(_ data: Dataset, count: Int) throws
    /// Puts the pairs of `range`, one transaction (one durable commit) each.
    func putEach(_ data: Dataset, range: Range<Int>) throws
    /// Looks up `data.getOrder[0..<data.getCount]`, summing the first byte of each value.
    func randomGets(_ data: Dataset) throws -> UInt64
    /// Scans every pair in key order; returns the pair count and the sum of the first key byte
    /// and the last value byte of each pair. Must also check that keys come in ascending order.
    func scan() throws -> (count: Int, checksum: UInt64)
    func close()
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Workloads

enum Workload: String, CaseIterable {
    // Engine level: keys and values.
    case bulkPut = "kv-bulk-put"
    case durableCommit = "kv-durable-commit"
    case durableVersusFloor = "kv-durable-floor"
    case randomGet = "kv-random-get"
    case scan = "kv-scan"
    // Object level: BENCHMARKS.md object workloads 1, 4, 5, 6, 7, 8, 9, 10 and 13.
    case bulkInsert = "bulk-insert"
    case objectScan = "scan"
    case pkLookup = "pk-lookup"
    case filterOnePercent = "filter-1pct"
    case filterHalf = "filter-50pct"
    case filterIndexed = "filter-indexed"
    case sortTop100 = "sort-top100"
    case updateAll = "update-all"
    case deleteAll = "delete-all"
    case open = "open"
    case peakMemory = "peak-rss"
    // Object level, workload 12 (SpaceGrowth.swift).
    case spaceGrowth = "space-growth"
    // Object level: BENCHMARKS.md object workloads 2 and 3.
    case objectDurableCommit = "durable-commit"
    case objectDurableVersusFloor = "durable-floor"
    case groupedAsync = "grouped-async"
    // Sync (SyncWorkloads.swift): not in the default set; selected with --workloads.
    case syncUpload = "sync-upload"
    case syncLatency = "sync-latency"
    /// Reported by `sync-latency` runs, not selectable on its own.
    case syncLatencyP99 = "sync-latency-p99"
    case syncBootstrap = "sync-bootstrap"
    case syncServer = "sync-server"
    // Codable repositories (RepoWorkloads.swift).
    case repoSave = "repo-save"
    case repoSaveVersusFloor = "repo-save-floor"
    case repoFind = "repo-find"
    case repoOpen = "repo-open"
    case repoLoadAll = "repo-load-all"
    case repoMemory = "repo-rss"
    // Importing a Realm file (RealmImportWorkload.swift), Strata only.
    case realmImport = "realm-import"

    var isObjectWorkload: Bool {
        switch self {
        case .bulkPut, .durableCommit, .durableVersusFloor, .randomGet, .scan: return false
        case .bulkInsert, .objectScan, .pkLookup, .updateAll, .deleteAll, .open, .peakMemory, .spaceGrowth,
             .objectDurableCommit, .objectDurableVersusFloor, .groupedAsync: return true
        case .filterOnePercent, .filterHalf, .filterIndexed, .sortTop100: return true
        case .syncUpload, .syncLatency, .syncLatencyP99, .syncBootstrap, .syncServer: return false
        case .repoSave, .repoSaveVersusFloor, .repoFind, .repoOpen, .repoLoadAll, .repoMemory: return false
        case .realmImport: return false
        }
    }

    /// The Codable repository workloads (RepoWorkloads.swift).
    var isRepoWorkload: Bool {
        switch self {
        case .repoSave, .repoSaveVersusFloor, .repoFind, .repoOpen, .repoLoadAll, .repoMemory: return true
        default: return false
        }
    }

    /// The sync workloads: a sync server and its clients in this process (SyncWorkloads.swift).
    var isSyncWorkload: Bool {
        switch self {
        case .syncUpload, .syncLatency, .syncLatencyP99, .syncBootstrap, .syncServer: return true
        default: return false
        }
    }

    /// Run when --workloads is not given: all but the sync workloads, which need a minute or
    /// more and (`strata-postgres`, `sync-server`) PostgreSQL.
    var isDefault: Bool { !isSyncWorkload }

    /// Whether --workloads may name it (`sync-latency-p99` comes with `sync-latency`).
    var isSelectable: Bool { self != .syncLatencyP99 }

    /// The object workloads that read the store of `Member`s (`QueryWorkloads.swift`).
    var isQueryWorkload: Bool {
        switch self {
        case .filterOnePercent, .filterHalf, .filterIndexed, .sortTop100: return true
        default: return false
        }
    }

    /// `ops/s` is higher-is-better; the others lower-is-better.
    var unit: String {
        switch self {
        case .scan, .objectScan: return "ns/op"
        case .open, .filterOnePercent, .filterHalf, .filterIndexed, .sortTop100: return "ms"
        case .syncLatency, .syncLatencyP99, .syncBootstrap: return "ms"
        case .peakMemory, .spaceGrowth: return "bytes"
        case .repoOpen, .repoLoadAll: return "ms"
        case .repoMemory: return "bytes"
        case .durableVersusFloor, .objectDurableVersusFloor, .repoSaveVersusFloor: return "x floor"
        default: return "ops/s"
        }
    }

    var summary: String {
        switch self {
        case .bulkPut: return "N puts in random key order, one transaction (incl. its commit)"
        case .durableCommit: return "M transactions of one put each, each committed durably"
        case .durableVersusFloor: return "kv-durable-commit's commits in blocks of 50 alternating with 50 rounds of the floor; the commits' time over the floor rounds' (lower is better)"
        case .randomGet: return "N random gets of existing keys from an N-key store"
        case .scan: return "full ordered scan of an N-key store, per key"
        case .bulkInsert: return "N objects inserted in one transaction (incl. its commit), objects/s"
        case .objectScan: return "all N objects visited reading name, age, score, ns per object"
        case .pkLookup: return "N random primary-key lookups reading age, in one read transaction, lookups/s"
        case .filterOnePercent: return "count of the L members with age > 73 && active (1%), unindexed, ms"
        case .filterHalf: return "count of the L members with age > 24 && active (50%), unindexed, ms"
        case .filterIndexed: return "count of the L members with team == 42 (1%), through an index on team, ms"
        case .sortTop100: return "the first 100 of the L members by descending score, every property read, ms"
        case .updateAll: return "age changed on all N objects, one by one, in one transaction, objects/s"
        case .deleteAll: return "all N objects deleted one by one in one transaction, objects/s"
        case .open: return "open an existing store of L objects and read one object by primary key, ms"
        case .peakMemory: return "peak growth of anonymous memory while opening a store of L objects and scanning it, bytes"
        case .spaceGrowth: return "file growth over 10·M one-object update commits of an N-object store while a snapshot from before them is held, bytes"
        case .objectDurableCommit: return "N/100 one-object transactions, each committed durably (full sync), commits/s"
        case .objectDurableVersusFloor: return "durable-commit's transactions in blocks of 50 alternating with 50 rounds of the floor; their time over the floor rounds' (lower is better)"
        case .groupedAsync: return "N/10 one-object async writes from 8 concurrent writers, grouping allowed, each durable before it completes, objects/s"
        case .syncUpload: return "20,000 objects written by one client in transactions of 10, from the first local commit until the server acknowledged all, objects/s"
        case .syncLatency: return "a one-object write on device A until device B's Results callback sees it, 100 idle clients connected, median of 300 samples, ms"
        case .syncLatencyP99: return "sync-latency's 99th percentile, ms"
        case .syncBootstrap: return "a fresh client's first open with downloadBeforeOpen: .always of a 100,000-object subscription (login not timed), ms"
        case .repoSave: return "one save (insert or replace, durable) into a repository of N Codable items, one call each, saves/s"
        case .repoSaveVersusFloor: return "repo-save's saves in blocks of 50 alternating with 50 rounds of the floor; their time over the floor rounds' (lower is better; compares engines whose runs meet the disk at different speeds)"
        case .repoFind: return "N lookups by id in a repository of N items, one call (an actor or queue hop) each, lookups/s"
        case .repoOpen: return "open a repository of L items and find one by id, ms"
        case .repoLoadAll: return "every item of an N-item repository decoded (json: JSONDecoder on its file), ms"
        case .repoMemory: return "anonymous memory held after opening a repository of L items and serving N lookups, bytes"
        case .realmImport: return "the Realm Core 14 fixture people-50k.realm (44,961 objects; not scaled) imported into a new Strata file as `strata import-realm` does, from opening the Realm file to the renamed, synced copy, objects/s"
        case .syncServer: return "100 clients writing 1,000 objects each in transactions of 100 at once, until all acknowledged (strata: the sync server on PostgreSQL; postgres: postgres-nio's multi-row INSERTs of the same rows from 100 writers), objects/s"
        }
    }
}

struct Sizes {
    let n: Int          // pairs for bulk put, random get, scan; gets performed; objects
    let commits: Int    // transactions for the durable workload
    let lookups: Int    // primary-key lookups
    let largeN: Int     // objects in the stores `open` and `peak-rss` read; members the query workloads read

    init(scale: Double) {
        n = max(1, Int((100_000 * scale).rounded()))
        commits = max(1, Int((1_000 * scale).rounded()))
        lookups = max(1, Int((100_000 * scale).rounded()))
        largeN = max(1, Int((1_000_000 * scale).rounded()))
    }
}

@inline(__always) func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Runs one workload once for engine `E` in the fresh, empty directory `directory` and returns
/// the measured number in the workload's unit. Setup is not timed: loading the store, then one
/// warm-up scan so reads measure the hot path (pages mapped and cached) for every engine alike.
func measure<E: KVEngine>(
    _ engine: E.Type, _ workload: Workload, data: Dataset, sizes: Sizes, directory: String
) async throws -> Double {
    let store = try E(directory: directory)
    defer { store.close() }
    switch workload {
    case .bulkPut:
        let start = monotonicNanos()
        try store.putAll(data, count: sizes.n)
        let elapsed = monotonicNanos() - start
        return Double(sizes.n) / (Double(max(elapsed, 1)) / 1e9)
    case .durableCommit:
        let start = monotonicNanos()
        try store.putEach(data, range: 0..<sizes.commits)
        let elapsed = monotonicNanos() - start
        return Double(sizes.commits) / (Double(max(elapsed, 1)) / 1e9)
    case .durableVersusFloor:
        let floor = try FloorFile(directory: directory)
        return try await pairedWithFloor(floor, count: sizes.commits) { try store.putEach(data, range: $0) }
    case .randomGet:
        try store.putAll(data, count: sizes.n)
        _ = try store.scan()   // untimed warm-up: every engine starts with its pages mapped/cached
        let start = monotonicNanos()
        let sum = try store.randomGets(data)
        let elapsed = monotonicNanos() - start
        guard sum == data.expectedGetChecksum() else {
            throw BenchError("\(E.name): random gets returned wrong values")
        }
        return Double(data.getCount) / (Double(max(elapsed, 1)) / 1e9)
    case .scan:
        try store.putAll(data, count: sizes.n)
        _ = try store.scan()   // untimed warm-up, as for random gets
        let start = monotonicNanos()
        let (count, sum) = try store.scan()
        let elapsed = monotonicNanos() - start
        guard count == sizes.n, sum == data.expectedScanChecksum() else {
            throw BenchError("\(E.name): scan saw \(count) of \(sizes.n) pairs or wrong bytes")
        }
        return Double(elapsed) / Double(count)
    default:
        throw BenchError("\(workload.rawValue) is not a kv workload")
    }
}

/// Tracks what a scan has seen: the pair count, the checksum, and whether keys ascend.
/// A key is read as two big-endian words, so order is checked without copying the key.
struct ScanTally {
    var count = 0
    var checksum: UInt64 = 0
    private var previous: (UInt64, UInt64) = (0, 0)
    private(set) var ordered = true

    @inline(__always) mutating func add(key: UnsafeRawPointer, value: UnsafeRawPointer) {
        let hi = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
        let lo = UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        if count > 0, (hi, lo) <= previous { ordered = false }
        previous = (hi, lo)
        checksum &+= hi >> 56
        checksum &+= UInt64(value.load(fromByteOffset: valueSize - 1, as: UInt8.self))
        count += 1
    }

    func result(_ engine: String) throws -> (count: Int, checksum: UInt64) {
        guard ordered else { throw BenchError("\(engine): scan keys not in ascending order") }
        return (count, checksum)
    }
}
