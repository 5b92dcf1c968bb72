// Promise 1 (atomic, durable commits) under simulated power loss.
//
// Each case runs a random workload on a fresh SimulatedDisk, cuts the power at a random
// moment (after a random number of write/sync calls, or at a random commit step), builds the
// disk a power failure could leave (unsynced writes dropped, reordered, torn), reopens it and
// checks the file against the model of every committed version:
// - a commit whose `commit()` returned must be there;
// - a commit whose meta page never reached the disk's cache must not be;
// - a commit whose final sync completed must be there even though `commit()` did not return;
// - in between (meta written, sync not finished) either is right, and nothing else is.
// About half the cases then keep writing on the recovered file and lose power a second time,
// which checks that recovery leaves nothing behind (a stale newer meta, say) that a later
// crash could resurrect.
//
// STRATA_CRASH_POINTS sets the number of crash points (2,000 by default); STRATA_CRASH_SEED
// shifts the seeds, to explore new cases or replay one reported by a failure.

import Foundation
import Synchronization
import Testing
@testable import StrataStorage

@Suite struct PowerLossTests {
    /// Small pages, so that 253 written runs (the two-sync path) stay cheap to produce.
    static let options = StorageOptions(durability: .full, pageSize: 4096, maximumFileSize: 64 << 20, maximumReaders: 8)

    static let pointsPerWorkload = 4

    @Test func randomPowerLossKeepsExactlyTheCommittedVersions() async throws {
        let environment = ProcessInfo.processInfo.environment
        let points = environment["STRATA_CRASH_POINTS"].flatMap(Int.init) ?? 2_000
        let baseSeed = environment["STRATA_CRASH_SEED"].flatMap(UInt64.init) ?? 0
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // Workload w covers crash points 4w ..< 4w + 4; workers take workloads in turn, so the
        // cases are the same whatever the number of cores.
        let workloads = (points + Self.pointsPerWorkload - 1) / Self.pointsPerWorkload
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4))
        let results = await withTaskGroup(of: (CrashStatistics, String?).self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var statistics = CrashStatistics()
                    for index in stride(from: worker, to: workloads, by: workers) {
                        let count = min(Self.pointsPerWorkload, points - index * Self.pointsPerWorkload)
                        if let failure = Self.runWorkload(seed: baseSeed &+ UInt64(index) &* 0x1_0000, points: count,
                                                          directory: directory, statistics: &statistics) {
                            return (statistics, failure)
                        }
                    }
                    return (statistics, nil)
                }
            }
            var all: [(CrashStatistics, String?)] = []
            for await result in group { all.append(result) }
            return all
        }
        for case (_, let failure?) in results { Issue.record(Comment(rawValue: failure)) }
        let statistics = results.map(\.0).reduce(CrashStatistics(), +)
        print("PowerLossTests: \(statistics.crashPoints) crash points; \(statistics)")
        #expect(statistics.crashPoints == points)
        // The cases must reach both outcomes of an interrupted commit, and the two-sync path.
        #expect(statistics.inFlightKept > 0)
        #expect(statistics.inFlightLost > 0)
        #expect(statistics.crashesInLargeCommits > 0)
        #expect(statistics.crashesBetweenCommits > 0)
        #expect(statistics.secondCrashes > 0)
    }

    /// Runs `points` crash cases of one workload; returns a description of the first failure.
    private static func runWorkload(seed workloadSeed: UInt64, points: Int, directory: TemporaryDirectory,
                                    statistics: inout CrashStatistics) -> String? {
        let workload = CrashWorkload(seed: workloadSeed)
        // A run without a crash counts the write and sync calls, so crash points can be spread
        // over all of them.
        let operations: Int
        do {
            operations = try workload.countOperations(lockPath: directory.file("count-\(workloadSeed).lock"))
        } catch {
            return "workload \(workloadSeed) failed without a crash: \(error)"
        }
        for variant in 0..<points {
            let caseSeed = workloadSeed &+ UInt64(variant) + 1
            do {
                try runCase(workload, seed: caseSeed, operations: operations, directory: directory, statistics: &statistics)
            } catch {
                return "crash case \(caseSeed) (workload \(workloadSeed), variant \(variant); replay with "
                    + "STRATA_CRASH_SEED=\(workloadSeed) STRATA_CRASH_POINTS=\(variant + 1)): \(error)"
            }
            statistics.crashPoints += 1
        }
        return nil
    }

    /// One crash point, and possibly a second crash after recovery.
    private static func runCase(_ workload: CrashWorkload, seed: UInt64, operations: Int, directory: TemporaryDirectory,
                                statistics: inout CrashStatistics) throws {
        var random = SplitMix64(seed: seed)
        let disk = SimulatedDisk()
        let probe = CommitProbe()
        let lockPath = directory.file("case-\(seed).lock")
        defer { unlink(lockPath) }
        let engine = try StorageEngine.open(file: disk, lockPath: lockPath, options: probe.options(Self.options))
        if Int.random(in: 0..<4, using: &random) == 0 {
            // Cut the power at a chosen step of a chosen commit, through the failpoint hook.
            let commit = Int.random(in: 0..<workload.commits.count, using: &random)
            probe.losePower(at: CommitStep.allCases.randomElement(using: &random)!, ofCommit: commit, on: disk)
        } else {
            disk.losePower(afterOperations: Int.random(in: 0...operations, using: &random))
        }
        let round = try CrashRound.run(workload.commits, models: workload.models, firstVersion: 0, engine: engine, disk: disk, probe: probe)
        engine.close()
        statistics.record(round, large: round.inFlight.map { workload.isLarge[$0 - 1] } ?? false)
        let crashed = disk.crash(seed: seed ^ 0xC0FFEE)
        let secondProbe = CommitProbe()
        let (recovered, recoveredIndex) = try round.reopen(crashed, lockPath: lockPath + "-1", options: secondProbe.options(Self.options))
        defer { unlink(lockPath + "-1") }
        if round.inFlight != nil && round.allowed.count == 2 {
            if recoveredIndex == round.inFlight { statistics.inFlightKept += 1 } else { statistics.inFlightLost += 1 }
        }

        // Half the time: keep writing with the engine that recovered the file, then lose power again.
        guard Bool.random(using: &random) else {
            recovered.close()
            return
        }
        statistics.secondCrashes += 1
        var generator = WorkloadGenerator(seed: seed ^ 0x5EC0_4D)
        var models = [workload.models[recoveredIndex]]
        var commits: [[ModelOperation]] = []
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            commits.append(generator.commit(after: models.last!))
            models.append(models.last!.applying(commits.last!))
        }
        crashed.losePower(afterOperations: Int.random(in: 0...(4 * commits.count + 2), using: &random))
        let second = try CrashRound.run(commits, models: models, firstVersion: UInt64(recoveredIndex), engine: recovered,
                                        disk: crashed, probe: secondProbe)
        recovered.close()
        let (final, _) = try second.reopen(crashed.crash(seed: seed ^ 0xBADD15C), lockPath: lockPath + "-2", options: Self.options)
        final.close()
        unlink(lockPath + "-2")
    }
}

/// A workload: commits (a few to a few dozen) and the model after each (`models[0]` is empty).
struct CrashWorkload {
    var commits: [[ModelOperation]] = []
    var models: [EngineModel] = [EngineModel()]
    var isLarge: [Bool] = []

    init(seed: UInt64) {
        var generator = WorkloadGenerator(seed: seed)
        var random = SplitMix64(seed: seed ^ 0x9E37_79B9)
        for _ in 0..<Int.random(in: 2...30, using: &random) {
            let large = Int.random(in: 0..<12, using: &random) == 0
            commits.append(generator.commit(after: models.last!, large: large))
            models.append(models.last!.applying(commits.last!))
            isLarge.append(large)
        }
    }

    /// Runs the workload without a crash, checks the result, and returns the number of write
    /// and sync calls its commits made.
    func countOperations(lockPath: String) throws -> Int {
        let disk = SimulatedDisk()
        defer { unlink(lockPath) }
        let engine = try StorageEngine.open(file: disk, lockPath: lockPath, options: PowerLossTests.options)
        defer { engine.close() }
        let before = disk.operationCount
        for operations in commits {
            let transaction = try engine.beginWrite()
            try transaction.apply(operations)
            try transaction.commit()
        }
        guard try EngineModel.read(from: engine) == models.last!, engine.latestVersion == UInt64(commits.count) else {
            throw CrashCheckFailure("the workload's result differs from its model without any crash")
        }
        return disk.operationCount - before
    }
}

/// Commits run until the power fails, and which versions the disk may then hold.
struct CrashRound {
    /// Model of the last commit whose `commit()` returned (an index into the models).
    var lastReturned = 0
    /// Index of the model of the commit that failed because the power went, if one did.
    var inFlight: Int?
    /// Indices of the models the file may hold after the crash.
    var allowed: [Int] = []
    var models: [EngineModel]
    var firstVersion: UInt64

    static func run(_ commits: [[ModelOperation]], models: [EngineModel], firstVersion: UInt64, engine: StorageEngine,
                    disk: SimulatedDisk, probe: CommitProbe) throws -> CrashRound {
        var round = CrashRound(models: models, firstVersion: firstVersion)
        for (index, operations) in commits.enumerated() {
            probe.begin(commit: index)
            do {
                let transaction = try engine.beginWrite()
                try transaction.apply(operations)
                try transaction.commit()
                round.lastReturned = index + 1
            } catch {
                guard disk.isPoweredOff else { throw error }  // only the power failure may fail a commit
                round.inFlight = index + 1
                break
            }
        }
        disk.losePower()  // between commits, if the workload finished first
        let progress = probe.progress
        switch round.inFlight {
        case nil: round.allowed = [round.lastReturned]
        case let inFlight? where progress.durable: round.allowed = [inFlight]
        case let inFlight? where progress.metaWritten: round.allowed = [round.lastReturned, inFlight]
        case _?: round.allowed = [round.lastReturned]
        }
        return round
    }

    /// Opens the crashed disk and checks it holds exactly one allowed version, healthy and
    /// writable. Returns the engine and the index of the model it matched.
    func reopen(_ disk: SimulatedDisk, lockPath: String, options: StorageOptions) throws -> (StorageEngine, Int) {
        let engine: StorageEngine
        do {
            engine = try StorageEngine.open(file: disk, lockPath: lockPath, options: options)
        } catch {
            throw CrashCheckFailure("reopening after the crash failed: \(error) (\(self))")
        }
        let report = try engine.verify()
        guard report.isHealthy else {
            engine.close()
            throw CrashCheckFailure("verify() after the crash: \(report) (\(self))")
        }
        let found = try EngineModel.read(from: engine)
        guard let match = allowed.first(where: { models[$0] == found }) else {
            let other = models.indices.filter { models[$0] == found }
            engine.close()
            throw CrashCheckFailure("after the crash the file holds \(other.isEmpty ? "no committed version" : "version(s) \(other)") [\(found)] (\(self))")
        }
        guard engine.latestVersion == firstVersion + UInt64(match) else {
            engine.close()
            throw CrashCheckFailure("content of version \(firstVersion + UInt64(match)) but latestVersion \(engine.latestVersion) (\(self))")
        }
        return (engine, match)
    }
}

extension CrashRound: CustomStringConvertible {
    var description: String {
        "last returned commit \(lastReturned), in flight \(inFlight.map(String.init) ?? "none"), allowed \(allowed)"
    }
}

/// Follows a commit through its steps (via the failpoint hook) and can cut the power at one.
final class CommitProbe: Sendable {
    struct Progress {
        var commit = -1
        /// The meta page of the current commit reached the disk's cache.
        var metaWritten = false
        /// The current commit's final sync completed.
        var durable = false
    }
    private struct State {
        var progress = Progress()
        var target: (commit: Int, step: CommitStep, disk: SimulatedDisk)?
    }
    private let state = Locked(State())

    func options(_ base: StorageOptions) -> StorageOptions {
        var options = base
        options.failpoint = { [self] step in try reached(step) }
        return options
    }

    func begin(commit: Int) {
        state.withLock { $0.progress = Progress(commit: commit) }
    }

    func losePower(at step: CommitStep, ofCommit commit: Int, on disk: SimulatedDisk) {
        state.withLock { $0.target = (commit, step, disk) }
    }

    var progress: Progress { state.withLock { $0.progress } }

    private func reached(_ step: CommitStep) throws {
        let disk: SimulatedDisk? = state.withLock { state in
            if step == .afterMetaWrite { state.progress.metaWritten = true }
            if step == .afterFinalSync { state.progress.durable = true }
            guard let target = state.target, target.commit == state.progress.commit, target.step == step else { return nil }
            return target.disk
        }
        if let disk {
            disk.losePower()
            throw StorageError.failpoint(step.rawValue)
        }
    }
}

struct CrashStatistics: CustomStringConvertible, Sendable {
    var crashPoints = 0
    var crashesInsideCommits = 0
    var crashesBetweenCommits = 0
    var crashesInLargeCommits = 0
    var inFlightKept = 0
    var inFlightLost = 0
    var secondCrashes = 0

    mutating func record(_ round: CrashRound, large: Bool) {
        if round.inFlight == nil { crashesBetweenCommits += 1 } else { crashesInsideCommits += 1 }
        if large { crashesInLargeCommits += 1 }
    }

    static func + (a: CrashStatistics, b: CrashStatistics) -> CrashStatistics {
        CrashStatistics(crashPoints: a.crashPoints + b.crashPoints,
                        crashesInsideCommits: a.crashesInsideCommits + b.crashesInsideCommits,
                        crashesBetweenCommits: a.crashesBetweenCommits + b.crashesBetweenCommits,
                        crashesInLargeCommits: a.crashesInLargeCommits + b.crashesInLargeCommits,
                        inFlightKept: a.inFlightKept + b.inFlightKept, inFlightLost: a.inFlightLost + b.inFlightLost,
                        secondCrashes: a.secondCrashes + b.secondCrashes)
    }

    var description: String {
        "\(crashesInsideCommits) inside a commit (\(crashesInLargeCommits) in two-sync commits), \(crashesBetweenCommits) between commits; "
            + "interrupted commits after their meta write: \(inFlightKept) kept, \(inFlightLost) lost; \(secondCrashes) second crashes"
    }
}

struct CrashCheckFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
