import Foundation
#if !NO_STRATA
import Logging
#endif

let usage = """
    usage: strata-bench [--json FILE] [--workloads a,b] [--engines x,y] [--scale F] [--runs N] [--dir PATH] [--postgres URL]
      --workloads  any of: \(Workload.allCases.filter(\.isSelectable).map(\.rawValue).joined(separator: ","))
                   (default: all but the sync-* workloads)
      --engines    any of: \(allEngines.joined(separator: ",")) (default: all built in)
      --scale      multiply the sizes by F (default 1): N = 100,000 pairs, objects and lookups;
                   1,000 durable commits; L = 1,000,000 objects for open and peak-rss,
                   and members for the query workloads (filter-*, sort-top100)
      --runs       runs per workload and engine; the median is reported (default 5)
      --dir        folder for the databases, on the disk to measure (default: a new folder
                   strata-bench-XXXXXX in the current directory, removed afterwards)
      --json       also write the results as JSON to FILE
      --postgres   the PostgreSQL for the sync workloads' strata-postgres and postgres engines
                   (default: STRATA_TEST_POSTGRES_URL, else a throwaway cluster started with
                   the repository's scripts/with-postgres.sh)
    """

#if NO_STRATA
let allEngines = ["lmdb", "sqlite", "grdb", "json", "floor"]
#else
let allEngines = ["strata", "lmdb", "sqlite", "grdb", "json", "floor", "strata-postgres", "postgres"]
#endif

/// A workload whose runs for one engine have taken this long in all is not run again for that
/// engine (the JSON repository at 1,000,000 objects is slow); the output says so.
let timeBudgetPerWorkload = 60.0   // seconds

struct Options {
    var json: String?
    var workloads = Workload.allCases.filter(\.isDefault)
    var engines = allEngines
    var scale = 1.0
    var runs = 5
    var dir: String?
    var postgres: String?

    init(_ arguments: [String]) throws {
        var it = arguments.makeIterator()
        func value(_ flag: String) throws -> String {
            guard let v = it.next() else { throw BenchError("\(flag) needs a value\n\(usage)") }
            return v
        }
        func list(_ flag: String) throws -> [String] {
            try value(flag).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        while let arg = it.next() {
            switch arg {
            case "--json": json = try value(arg)
            case "--workloads":
                workloads = try list(arg).map {
                    guard let w = Workload(rawValue: $0), w.isSelectable else { throw BenchError("unknown workload \($0)\n\(usage)") }
                    return w
                }
            case "--engines":
                engines = try list(arg)
                for e in engines where !allEngines.contains(e) {
                    throw BenchError("unknown or not built engine \(e)\n\(usage)")
                }
            case "--scale":
                guard let s = Double(try value(arg)), s > 0, s.isFinite else { throw BenchError("bad --scale\n\(usage)") }
                scale = s
            case "--runs":
                guard let n = Int(try value(arg)), n > 0 else { throw BenchError("bad --runs\n\(usage)") }
                runs = n
            case "--dir": dir = try value(arg)
            case "--postgres": postgres = try value(arg)
            case "-h", "--help":
                print(usage)
                exit(0)
            default: throw BenchError("unknown argument \(arg)\n\(usage)")
            }
        }
    }
}

/// Runs `workload` once for the engine named `engine` in `directory`; nil when the engine has
/// nothing to measure for that workload (the floor exists only for durable commits and the
/// object scan, where it is `ScanFloor`: building the names as `String`s without a store; `lmdb`
/// and, until its object engine exists, `strata` only for the kv workloads; `grdb` and `json`
/// only for the object workloads, and `json` not for the query workloads).
func runOnce(_ engine: String, _ workload: Workload, kv: () -> Dataset, objects: ObjectBench, directory: String) async throws -> Double? {
    if workload == .realmImport {
        #if NO_STRATA
        return nil
        #else
        return engine == StrataEngineName ? try measureRealmImport(directory: directory) : nil
        #endif
    }
    if workload.isQueryWorkload {
        guard let type = QueryEngineCatalog.engine(named: engine) else { return nil }
        return try await measureQueries(type, workload, bench: objects.queries)
    }
    if workload.isRepoWorkload {
        guard let type = RepoEngineCatalog.engine(named: engine) else { return nil }
        return try await measureRepository(type, workload, bench: objects.repositories, directory: directory)
    }
    if workload == .objectScan, engine == "floor" { return try measureScanFloor(objects.data) }
    if workload.isObjectWorkload {
        guard let type = ObjectEngineCatalog.engine(named: engine) else { return nil }
        if workload == .spaceGrowth && !(type is any SnapshotGrowthEngine.Type) { return nil }
        return try await measureObjects(type, workload, bench: objects, directory: directory)
    }
    let sizes = objects.sizes
    switch engine {
    #if !NO_STRATA
    case "strata": return try await measure(StrataEngine.self, workload, data: kv(), sizes: sizes, directory: directory)
    #endif
    case "lmdb": return try await measure(LMDBEngine.self, workload, data: kv(), sizes: sizes, directory: directory)
    case "sqlite": return try await measure(SQLiteEngine.self, workload, data: kv(), sizes: sizes, directory: directory)
    case "floor":
        guard workload == .durableCommit else { return nil }
        return try measureFloor(directory: directory, count: sizes.commits)
    case "grdb", "json", "strata-postgres", "postgres": return nil
    default: throw BenchError("unknown engine \(engine)")
    }
}

/// Creates a new uniquely named folder `<parent>/<prefix>XXXXXX`.
func makeTemporaryDirectory(in parent: String, prefix: String) throws -> String {
    var template = Array((parent + "/" + prefix + "XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw BenchError("cannot create a folder in \(parent): errno \(errno)")
    }
    return String(cString: made)
}

/// The type of the file system holding `path` (e.g. "ext4", "tmpfs"), from /proc/mounts:
/// the mount point that is the longest prefix of the path's real location.
func fileSystemName(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return "unknown" }
    let real = String(cString: resolved)
    free(resolved)
    guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return "unknown" }
    var best = (length: -1, type: "unknown")
    for line in mounts.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count >= 3 else { continue }
        let point = fields[1].replacingOccurrences(of: "\\040", with: " ")
        let isPrefix = point == "/" || real == point || real.hasPrefix(point + "/")
        if isPrefix, point.count > best.length { best = (point.count, String(fields[2])) }
    }
    return best.type
}

func runBenchmarks(_ arguments: [String]) async throws {
    let options = try Options(arguments)
    let sizes = Sizes(scale: options.scale)
    let fm = FileManager.default

    let base: String
    let removeBase: Bool
    if let dir = options.dir {
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        base = dir
        removeBase = false
    } else {
        base = try makeTemporaryDirectory(in: fm.currentDirectoryPath, prefix: "strata-bench-")
        removeBase = true
    }
    defer { if removeBase { removeDirectory(base) } }
    let fsName = fileSystemName(base)

    let machine = machineDescription()
    let date = ISO8601DateFormatter().string(from: Date())
    let hasKV = options.workloads.contains { !$0.isObjectWorkload && !$0.isSyncWorkload && !$0.isRepoWorkload && $0 != .realmImport }
    let hasObjects = options.workloads.contains { $0.isObjectWorkload }
    print("strata-bench on \(machine), \(date)")
    print("data in \(base) (\(fsName)); median of \(options.runs) runs; every engine commits with full durability")
    if hasKV {
        print("kv: N = \(sizes.n) pairs (16-byte keys, 100-byte values), \(sizes.commits) durable commits; "
            + "sqlite: \(SQLiteEngine.settings); lmdb: 4 GiB map, MDB_NOTLS, synced commits")
    }
    if hasObjects {
        print("objects: N = \(sizes.n) (\(sizes.lookups) lookups), L = \(sizes.largeN) for open and peak-rss; "
            + "5 properties (id Int primary key, name ~16 bytes, age Int, score Double, active Bool)")
        print("  grdb: \(GRDBObjectEngine.settings)")
        print("  sqlite: \(SQLiteObjectEngine.settings)")
        print("  json: \(JSONObjectEngine.settings)")
        if options.workloads.contains(where: \.isQueryWorkload) {
            print("queries: L = \(sizes.largeN) members (a Person plus team, an Int 0-99) in a store of their own, "
                + "built once per engine; json: no query engine")
            print("  grdb: \(GRDBQueryEngine.settings)")
            print("  sqlite: \(SQLiteQueryEngine.settings)")
        }
        if ObjectEngineCatalog.strata == nil, options.engines.contains(StrataEngineName) {
            print("  strata: no object engine yet; it runs the kv workloads only")
        }
    }
    if options.workloads.contains(where: \.isRepoWorkload) {
        print("repositories: a Codable struct like Person (no hand-written coding), N = \(sizes.n) items, L = \(sizes.largeN) for repo-open "
            + "and repo-rss, stores built once per engine; strata: Repository<T>; json: the seed's actor with a dictionary, "
            + "whole file rewritten per save; grdb: Codable FetchableRecord & PersistableRecord in a DatabasePool")
        print("  load average at start: \(loadAverage())")
    }
    if fsName == "tmpfs" || fsName == "ramfs" {
        print("WARNING: \(base) is in memory (\(fsName)); durable-commit numbers do not measure a disk. Use --dir.")
    }
    #if NO_STRATA
    print("NOTE: built with NO_STRATA: Strata itself is not measured")
    if options.workloads.contains(where: \.isSyncWorkload) { throw BenchError("built with NO_STRATA: no sync workloads") }
    #else
    let sync = SyncBench(scale: options.scale, postgresURL: options.postgres)
    defer { sync.stop() }
    if options.workloads.contains(where: \.isSyncWorkload) {
        // The sync client's and server's libraries log through swift-log: warnings and worse
        // only, on standard error, so the table stays readable.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let s = sync.sizes
        print("sync: a SyncServer and full StrataSync clients in this process over loopback WebSockets (both on these cores); "
            + "sync-upload: \(s.uploadObjects) objects in transactions of \(s.uploadBatch); sync-latency: \(s.latencySamples) samples "
            + "(after \(s.latencyWarmUp) untimed), \(s.idleClients) idle clients (full clients, subscribed to a class nobody writes); "
            + "sync-bootstrap: \(s.bootstrapObjects) objects; sync-server: \(s.writers) clients x \(s.perWriter) objects in transactions of \(s.serverBatch)")
        print("  strata: embedded server store (sync-server: PostgreSQL store); strata-postgres: PostgreSQL store; "
            + "postgres: postgres-nio alone (sync-server only)")
        print("  load average at start: \(loadAverage())")
    }
    #endif

    var kvData: Dataset?
    func kv() -> Dataset {
        if let kvData { return kvData }
        let made = Dataset(count: sizes.n, getCount: sizes.n)
        kvData = made
        return made
    }
    let objects = ObjectBench(sizes: sizes, base: base)
    defer { objects.removeStores() }

    var results: [Result] = []
    var notes: [String] = []
    for workload in options.workloads {
        var runs: [String: [Double]] = [:]
        var extraRuns: [Workload: [String: [Double]]] = [:]   // figures a run reports besides its own (sync-latency's p99)
        var spent: [String: Double] = [:]   // seconds, per engine
        var capped: Set<String> = []
        for run in 1...options.runs {
            // Engines interleaved within each run, so drift on the machine hits them alike.
            for engine in options.engines where !capped.contains(engine) {
                let directory = try makeTemporaryDirectory(in: base, prefix: "\(engine)-")
                defer { removeDirectory(directory) }
                releaseFreedHeap()
                let start = monotonicNanos(), built = objects.buildSeconds
                let measured: Double?
                if workload.isSyncWorkload {
                    #if NO_STRATA
                    measured = nil
                    #else
                    let figures = try await sync.runOnce(engine, workload, directory: directory)
                    measured = figures?.first?.1
                    for (extra, value) in figures?.dropFirst() ?? [] { extraRuns[extra, default: [:]][engine, default: []].append(value) }
                    #endif
                } else {
                    measured = try await runOnce(engine, workload, kv: kv, objects: objects, directory: directory)
                }
                guard let value = measured else { continue }
                spent[engine, default: 0] += Double(monotonicNanos() - start) / 1e9 - (objects.buildSeconds - built)
                runs[engine, default: []].append(value)
                logProgress("  \(workload.rawValue) run \(run)/\(options.runs) \(engine): \(formatNumber(value)) \(workload.unit)")
                if run < options.runs, let seconds = spent[engine], seconds > timeBudgetPerWorkload {
                    capped.insert(engine)
                    let note = "\(workload.rawValue) \(engine): capped at \(run) of \(options.runs) runs "
                        + "(they took \(formatNumber(seconds)) s, over the \(Int(timeBudgetPerWorkload)) s budget)"
                    notes.append(note)
                    logProgress("  " + note)
                }
            }
        }
        for engine in options.engines {
            if let r = runs[engine] { results.append(Result(workload: workload, engine: engine, runs: r)) }
        }
        for (extra, byEngine) in extraRuns.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            for engine in options.engines {
                if let r = byEngine[engine] { results.append(Result(workload: extra, engine: engine, runs: r)) }
            }
        }
    }

    print("")
    if results.contains(where: { $0.engine == StrataEngineName }) {
        print("strata speedup = how many times faster Strata is than the row's engine: strata/engine for ops/s,")
        print("engine/strata for ns/op, ms and bytes; > 1 means Strata is faster (or smaller), < 1 slower;")
        print("against floor it is at most ~1. '-' where Strata has no result for the workload.")
        print("")
    }
    print(renderTable(results), terminator: "")
    print("")
    for w in options.workloads { print("\(w.rawValue): \(w.summary)") }
    for note in notes { print("NOTE: \(note)") }
    if let server = results.first(where: { $0.workload == .syncServer && $0.engine == StrataEngineName }),
       let peer = results.first(where: { $0.workload == .syncServer && $0.engine == "postgres" }) {
        print("sync-server: the sync server ingests \(String(format: "%.0f", 100 * server.median / peer.median))% of postgres-nio's rows/s")
    }

    if let imported = results.first(where: { $0.workload == .realmImport && $0.engine == StrataEngineName }),
       let inserted = results.first(where: { $0.workload == .bulkInsert && $0.engine == StrataEngineName }) {
        print("realm-import: the import runs at \(String(format: "%.2f", imported.median / inserted.median))x bulk-insert's objects/s (target: at least 0.5x)")
    }

    if let path = options.json {
        try renderJSON(machine: machine, date: date, results: results).write(toFile: path, atomically: true, encoding: .utf8)
        print("wrote \(path)")
    }
}

/// The 1, 5 and 15 minute load averages, from /proc/loadavg.
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

func logProgress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

func removeDirectory(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}
