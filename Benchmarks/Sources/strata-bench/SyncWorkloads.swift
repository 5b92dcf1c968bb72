// The sync workloads (BENCHMARKS.md "Workloads added for sync"): a SyncServer started in this
// process for each run (embedded storage in the run's folder, or PostgreSQL), and full
// StrataSync clients (SyncClients.swift) in the same process, over loopback WebSockets. Client
// and server share the machine's two cores, so every figure includes both sides' CPU.
//
// Engines: `strata` — the server on its embedded store (except `sync-server`, which is about
// PostgreSQL: there `strata` is the server on its PostgreSQL store); `strata-postgres` — the
// server on PostgreSQL; `postgres` — postgres-nio alone, `sync-server`'s peer (PostgresPeer.swift).

#if !NO_STRATA

import Foundation
import Logging
import Strata
import StrataSync
import StrataSyncServer

/// The sync workloads' sizes, from `--scale`.
struct SyncSizes {
    /// `sync-upload`: objects written, in transactions of `uploadBatch`.
    let uploadObjects: Int
    let uploadBatch = 10
    /// `sync-latency`: idle clients connected besides the two devices, timed samples, untimed
    /// warm-up samples before them.
    let idleClients: Int
    let latencySamples: Int
    let latencyWarmUp = 10
    /// `sync-bootstrap`: objects in the subscription, seeded in transactions of 1,000.
    let bootstrapObjects: Int
    /// `sync-server`: writing clients, objects each, in transactions of `serverBatch`.
    let writers: Int
    let perWriter: Int
    let serverBatch = 100

    init(scale: Double) {
        func scaled(_ n: Double, atLeast minimum: Int) -> Int { max(minimum, Int((n * scale).rounded())) }
        uploadObjects = scaled(20_000, atLeast: 10)
        idleClients = scaled(100, atLeast: 1)
        latencySamples = scaled(300, atLeast: 20)
        bootstrapObjects = scaled(100_000, atLeast: 100)
        writers = scaled(100, atLeast: 2)
        perWriter = scaled(1_000, atLeast: 10)
    }
}

/// State shared by the sync runs of one invocation: the PostgreSQL to use (started on first
/// need) and a counter that makes app ids and table names unique.
final class SyncBench {
    let sizes: SyncSizes
    private let givenURL: String?
    private var throwaway: ThrowawayPostgres?
    private var counter = 0

    init(scale: Double, postgresURL: String?) {
        sizes = SyncSizes(scale: scale)
        givenURL = postgresURL ?? ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `--postgres`, else STRATA_TEST_POSTGRES_URL, else a throwaway cluster started now.
    func postgresURL() throws -> String {
        if let givenURL { return givenURL }
        if let throwaway { return throwaway.url }
        let started = try ThrowawayPostgres()
        throwaway = started
        logProgress("  PostgreSQL at \(started.url)")
        return started.url
    }

    /// Stops the throwaway cluster, if one was started.
    func stop() {
        throwaway?.stop()
        throwaway = nil
    }

    func uniqueName(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)_\(getpid())_\(counter)"
    }

    /// One run of `workload` for `engine`: the primary figure, then any extra figures (the p99
    /// of `sync-latency`) under their own workload ids; nil when the engine has nothing to
    /// measure for the workload.
    func runOnce(_ engine: String, _ workload: Workload, directory: String) async throws -> [(Workload, Double)]? {
        switch (workload, engine) {
        case (.syncUpload, "strata"), (.syncUpload, "strata-postgres"):
            return [(workload, try await withServer(engine, directory) { try await upload($0) })]
        case (.syncLatency, "strata"), (.syncLatency, "strata-postgres"):
            let (median, p99) = try await withServer(engine, directory) { try await latency($0) }
            return [(workload, median), (.syncLatencyP99, p99)]
        case (.syncBootstrap, "strata"), (.syncBootstrap, "strata-postgres"):
            return [(workload, try await withServer(engine, directory) { try await bootstrap($0) })]
        case (.syncServer, "strata"):
            return [(workload, try await withServer("strata-postgres", directory) { try await ingest($0) })]
        case (.syncServer, "postgres"):
            let rows = try await PostgresPeer.ingest(url: try postgresURL(), table: uniqueName("bench_rows"),
                                                     writers: sizes.writers, perWriter: sizes.perWriter, batch: sizes.serverBatch)
            return [(workload, rows)]
        default:
            return nil
        }
    }

    /// Starts a server (embedded storage in `directory`, or PostgreSQL for `strata-postgres`),
    /// runs `body` against a new app on it, and shuts the server down.
    private func withServer<R>(_ engine: String, _ directory: String, _ body: (SyncTarget) async throws -> R) async throws -> R {
        let storage: SyncServer.Storage = engine == "strata-postgres"
            ? .postgres(url: try postgresURL())
            : .embedded(directory: directory + "/server")
        var logger = Logger(label: "strata-bench.sync-server")
        logger.logLevel = .error
        let server = SyncServer(configuration: .init(port: 0, storage: storage), logger: logger)
        let port = try await server.start()
        let target = SyncTarget(baseURL: "http://127.0.0.1:\(port)", appID: uniqueName("bench"),
                                root: URL(fileURLWithPath: directory + "/clients", isDirectory: true))
        do {
            let result = try await body(target)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }

    /// `sync-upload`: objects/s from one client's local commits (transactions of
    /// `uploadBatch` objects) until the server acknowledged them all.
    private func upload(_ target: SyncTarget) async throws -> Double {
        let device = try await SyncDevice(target, subscribingTo: SyncPerson.self, behavior: .always)
        let session = try await device.session
        let n = sizes.uploadObjects
        let start = monotonicNanos()
        try await device.create(0..<n, batch: sizes.uploadBatch)
        try await session.wait(for: .upload)
        let elapsed = monotonicNanos() - start
        await device.close()
        return Double(n) / (Double(max(elapsed, 1)) / 1e9)
    }

    /// `sync-latency`: ms from the start of a one-object write on device A until device B's
    /// `Results` callback sees it, with `idleClients` other clients connected; (median, p99).
    private func latency(_ target: SyncTarget) async throws -> (Double, Double) {
        let idle = IdleDevices()
        try await idle.open(sizes.idleClients, target)
        let a = try await SyncDevice(target, subscribingTo: SyncPerson.self, behavior: .always)
        let b = try await SyncDevice(target, subscribingTo: SyncPerson.self, behavior: .always)
        await b.observe()
        var samples: [Double] = []
        samples.reserveCapacity(sizes.latencySamples)
        for i in 0..<(sizes.latencyWarmUp + sizes.latencySamples) {
            await b.expect(count: i + 1)
            let start = ContinuousClock.now
            try await a.create(i..<(i + 1), batch: 1)
            let arrived = await b.arrived()
            if i >= sizes.latencyWarmUp {
                let elapsed = arrived - start
                samples.append(Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15)
            }
        }
        let count = await b.count()
        guard count == sizes.latencyWarmUp + sizes.latencySamples else {
            throw BenchError("sync-latency: device B has \(count) objects, expected \(sizes.latencyWarmUp + sizes.latencySamples)")
        }
        await a.close()
        await b.close()
        await idle.close()
        samples.sort()
        let median = samples[samples.count / 2]
        let p99 = samples[min(samples.count - 1, Int((Double(samples.count) * 0.99).rounded(.up)) - 1)]
        logProgress("    sync-latency: \(samples.count) samples with \(sizes.idleClients) idle clients: "
            + "median \(formatNumber(median)) ms, p99 \(formatNumber(p99)) ms, max \(formatNumber(samples[samples.count - 1])) ms")
        return (median, p99)
    }

    /// `sync-bootstrap`: ms to open a fresh client's file with `downloadBeforeOpen: .always`
    /// over a subscription of `bootstrapObjects` objects one other client uploaded (untimed);
    /// the login is not timed.
    private func bootstrap(_ target: SyncTarget) async throws -> Double {
        let n = sizes.bootstrapObjects
        let seeder = try await SyncDevice(target, subscribingTo: SyncPerson.self, behavior: .always)
        try await seeder.create(0..<n, batch: 1_000)
        try await seeder.session.wait(for: .upload)
        await seeder.close()
        let (user, configuration) = try await target.configuration(subscribingTo: SyncPerson.self)
        let start = monotonicNanos()
        let fresh = try await SyncDevice(user: user, configuration: configuration, behavior: .always)
        let elapsed = monotonicNanos() - start
        let count = await fresh.count()
        await fresh.close()
        guard count == n else { throw BenchError("sync-bootstrap: the fresh client opened with \(count) of \(n) objects") }
        return Double(elapsed) / 1e6
    }

    /// `sync-server`: objects/s from `writers` clients writing `perWriter` objects each (in
    /// transactions of `serverBatch`) at once, until the server acknowledged them all. The
    /// writers subscribe to `SyncIdleItem` only, so none downloads the others' objects; a
    /// fresh client then checks (untimed) that the server has every object.
    private func ingest(_ target: SyncTarget) async throws -> Double {
        var devices: [SyncDevice] = []
        for _ in 0..<sizes.writers {
            devices.append(try await SyncDevice(target, subscribingTo: SyncIdleItem.self, behavior: .always))
        }
        let perWriter = sizes.perWriter, batch = sizes.serverBatch
        let start = monotonicNanos()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, device) in devices.enumerated() {
                group.addTask {
                    try await device.create((index * perWriter)..<((index + 1) * perWriter), batch: batch)
                    try await device.session.wait(for: .upload)
                }
            }
            try await group.waitForAll()
        }
        let elapsed = monotonicNanos() - start
        for device in devices { await device.close() }
        let total = sizes.writers * perWriter
        let checker = try await SyncDevice(target, subscribingTo: SyncPerson.self, behavior: .always)
        let count = await checker.count()
        await checker.close()
        guard count == total else { throw BenchError("sync-server: the server has \(count) of \(total) objects") }
        return Double(total) / (Double(max(elapsed, 1)) / 1e9)
    }
}
#endif
