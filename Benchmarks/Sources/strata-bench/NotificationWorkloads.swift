// Workload 11 (BENCHMARKS.md): notification latency, and the cost of a commit with 1,000
// observers. Strata only (the peers have no change notifications).
//
//   strata-bench notifications [--objects N] [--samples N] [--dir PATH]
//
// Latency: a writer actor commits a one-object change; an observer actor, with its own
// database instance and a Results observer over all N objects, moves to the new version and
// runs the callback. Measured from the commit's return on the writer to the (last) callback on
// the observer. The observer's instance has autorefresh off and moves by an explicit refresh()
// the driver asks for right after the commit (two actor hops): the figure is hop + refresh +
// change computation + callbacks, without the commit watcher's wake-up. (With autorefresh on,
// the watcher can deliver before the writer's commit returns, and delivery cannot be timed
// from the commit's return.)
//
// Commit cost: the same one-object commit made by the observing instance itself, which
// delivers to its observers before commitWrite returns, with 0, 1 and 1,000 observers of the
// same query.

import Foundation
import Strata

final class BenchItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
}

actor NotificationWriter {
    var db: Database!
    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func fill(_ count: Int) throws {
        try db.write {
            for id in 0..<count { db.create(BenchItem.self, value: ["id": id, "value": 0]) }
        }
    }

    /// Changes one object; returns when the commit returned.
    func touch(_ id: Int, _ value: Int) throws -> ContinuousClock.Instant {
        try db.write { db.object(ofType: BenchItem.self, forPrimaryKey: id)?.value = value }
        return ContinuousClock.now
    }
}

actor NotificationObserver {
    var db: Database!
    var tokens: [NotificationToken] = []
    var delivered: ContinuousClock.Instant?
    var deliveries = 0

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    /// Counts the deliveries of the minimal callbacks.
    final class Counter { var value = 0 }
    let counter = Counter()
    var deliveryCount: Int { deliveries + counter.value }

    /// `count` observers; with `minimal`, all but the last only count their updates (the last
    /// records the time, after the others ran), to separate the fan-out's cost from the
    /// callbacks'.
    func observe(count: Int, filtered: Bool = false, minimal: Bool = false) {
        let all = db.objects(BenchItem.self)
        let results = filtered ? all.where { $0.value >= 0 }.sorted(byKeyPath: "value") : all
        for index in 0..<count {
            if minimal && index < count - 1 {
                let counter = counter
                tokens.append(results.observe { change in
                    if case .update = change { counter.value += 1 }
                })
                continue
            }
            tokens.append(results.observe { [unowned self] change in
                if case .update(_, let deletions, let insertions, let modifications) = change,
                   !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) {
                    self.deliveries += 1
                    self.delivered = ContinuousClock.now
                }
            })
        }
    }

    func stop() { tokens.removeAll() }

    /// Moves to the newest version (delivering); returns when the last callback ran.
    func refresh() -> ContinuousClock.Instant? {
        delivered = nil
        db.refresh()
        return delivered
    }

    /// Leaves moving to new versions to `refresh()`: with autorefresh, the commit watcher may
    /// deliver before the writer's commit even returns, which this measurement cannot time.
    func manualRefresh() { db.autorefresh = false }

    /// A one-object commit on this instance, observers called before it returns; the time
    /// from begin to return.
    func touch(_ id: Int, _ value: Int) throws -> Duration {
        let start = ContinuousClock.now
        try db.write { db.object(ofType: BenchItem.self, forPrimaryKey: id)?.value = value }
        return ContinuousClock.now - start
    }
}

func runNotificationBenchmark(_ arguments: [String]) async throws {
    let (objects, samples, dir) = try subcommandOptions(arguments, command: "notifications", objects: 100_000, samples: 300)
    let parent = dir ?? FileManager.default.currentDirectoryPath
    let folder = try makeTemporaryDirectory(in: parent, prefix: "strata-bench-notify-")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    print("notifications: \(objects) objects, \(samples) samples, \(fileSystemName(folder))")

    func micro(_ d: Duration) -> Double { Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12 }
    func summary(_ values: [Double]) -> String {
        let sorted = values.sorted()
        let median = sorted[sorted.count / 2]
        let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        return String(format: "median %8.1f µs   p99 %8.1f µs", median, p99)
    }

    for (observers, filtered, minimal) in [(1, false, false), (1000, false, false), (1000, false, true), (1, true, false)] {
        let configuration = Database.Configuration(fileURL: URL(fileURLWithPath: folder).appendingPathComponent("latency-\(observers)-\(filtered)-\(minimal).strata"),
                                                   objectTypes: [BenchItem.self])
        let writer = try await NotificationWriter(configuration)
        try await writer.fill(objects)
        let observer = try await NotificationObserver(configuration)
        await observer.manualRefresh()
        await observer.observe(count: observers, filtered: filtered, minimal: minimal)
        var latencies: [Double] = []
        var rng = SystemRandomNumberGenerator()
        for sample in 0..<(samples + 10) {
            let committed = try await writer.touch(Int.random(in: 0..<objects, using: &rng), sample + 1)
            guard let delivered = await observer.refresh() else { throw BenchError("no delivery for sample \(sample)") }
            if sample >= 10 { latencies.append(micro(delivered - committed)) }
        }
        let expected = (samples + 10) * observers
        let got = await observer.deliveryCount
        guard got == expected else { throw BenchError("\(got) deliveries, expected \(expected)") }
        let what = filtered ? "filtered and sorted by the changed property" : minimal ? "all objects, 999 callbacks that only count" : "all objects"
        print("  latency, commit on one actor → Results change on another, \(observers) observer(s), \(what): \(summary(latencies))")
        await observer.stop()
    }

    for observers in [0, 1, 1000] {
        let configuration = Database.Configuration(fileURL: URL(fileURLWithPath: folder).appendingPathComponent("commit-\(observers).strata"),
                                                   objectTypes: [BenchItem.self])
        let observer = try await NotificationObserver(configuration)
        let writer = try await NotificationWriter(configuration)
        try await writer.fill(objects)
        _ = await observer.refresh()
        await observer.observe(count: observers)
        var times: [Double] = []
        var rng = SystemRandomNumberGenerator()
        for sample in 0..<(samples + 10) {
            let elapsed = try await observer.touch(Int.random(in: 0..<objects, using: &rng), sample + 1)
            if sample >= 10 { times.append(micro(elapsed)) }
        }
        print("  one-object commit with delivery to \(observers) observer(s) on the committing instance: \(summary(times))")
        await observer.stop()
    }
}

/// The options of the Strata-only subcommands: `[--objects N] [--samples N] [--dir PATH]`.
func subcommandOptions(_ arguments: [String], command: String, objects: Int, samples: Int) throws -> (objects: Int, samples: Int, dir: String?) {
    var objects = objects, samples = samples
    var dir: String?
    var it = arguments.makeIterator()
    while let arg = it.next() {
        switch arg {
        case "--objects": objects = Int(it.next() ?? "") ?? objects
        case "--samples": samples = Int(it.next() ?? "") ?? samples
        case "--dir": dir = it.next()
        default: throw BenchError("unknown argument \(arg); usage: strata-bench \(command) [--objects N] [--samples N] [--dir PATH]")
        }
    }
    return (objects, samples, dir)
}
