// A commit that fails at any step leaves the file at the previous version and the engine
// usable; durability `.none` survives a process crash but not (reliably) a power loss.

import Foundation
import Synchronization
import Testing
@testable import StrataStorage

/// A failpoint hook that throws at one chosen step while armed, and remembers the steps it saw.
final class StepFailpoint: Sendable {
    private let state = Locked<(armed: CommitStep?, seen: [CommitStep])>((nil, []))

    func arm(_ step: CommitStep) { state.withLock { $0 = (step, []) } }
    func disarm() { state.withLock { $0.armed = nil } }
    var seen: [CommitStep] { state.withLock { $0.seen } }

    func options(_ base: StorageOptions) -> StorageOptions {
        var options = base
        options.failpoint = { [self] step in
            let fail = state.withLock { state -> Bool in
                state.seen.append(step)
                return state.armed == step
            }
            if fail { throw StorageError.failpoint(step.rawValue) }
        }
        return options
    }
}

/// A commit step paired with the commit path that reaches it.
struct FailpointCase: Sendable, CustomTestStringConvertible {
    var step: CommitStep
    /// More than 252 written runs: the two-sync path.
    var large: Bool

    var testDescription: String { "\(step.rawValue), \(large ? "two-sync" : "one-sync") commit" }

    // Logged commits have their own failpoint tests (CommitLogTests).
    static let all: [FailpointCase] = CommitStep.allCases.filter { !$0.isLogStep }.flatMap { step in
        [false, true].compactMap { large in
            // Only two-sync commits sync their data pages before the meta.
            (step == .beforeDataSync || step == .afterDataSync) && !large ? nil : FailpointCase(step: step, large: large)
        }
    }
}

@Suite struct FailedCommitTests {
    static let options = StorageOptions(durability: .full, pageSize: 4096, maximumFileSize: 64 << 20, maximumReaders: 8)

    @Test(arguments: FailpointCase.all)
    func failedCommitLeavesThePreviousVersion(_ failure: FailpointCase) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let disk = SimulatedDisk()
        let failpoint = StepFailpoint()
        let engine = try StorageEngine.open(file: disk, lockPath: directory.file("lock"), options: failpoint.options(Self.options))
        defer { engine.close() }
        var generator = WorkloadGenerator(seed: 7)
        var model = EngineModel()
        for _ in 0..<3 {
            let operations = generator.commit(after: model)
            try engine.write { try $0.apply(operations) }
            model = model.applying(operations)
        }
        let previousVersion = engine.latestVersion

        // A commit that grows the file (a value of ten pages cannot fit in the little free space).
        var operations = generator.commit(after: model, large: failure.large)
        operations += [.createTree("grow"), .put(tree: "grow", key: [1], value: [UInt8](repeating: 0xAB, count: 40_000))]
        failpoint.arm(failure.step)
        let transaction = try engine.beginWrite()
        try transaction.apply(operations)
        #expect(throws: StorageError.failpoint(failure.step.rawValue)) { try transaction.commit() }
        #expect(failpoint.seen.last == failure.step)
        #expect(engine.latestVersion == previousVersion)
        #expect(try EngineModel.read(from: engine) == model)
        #expect(try engine.verify().isHealthy)

        // The file is at the previous version whether the process then dies (the page cache
        // survives) or the power fails (any unsynced write may be lost or torn).
        var images = [("process crash", disk.crashProcess())]
        for seed in 0..<8 as Range<UInt64> { images.append(("power loss \(seed)", disk.crash(seed: seed))) }
        for (index, (label, image)) in images.enumerated() {
            let reopened = try StorageEngine.open(file: image, lockPath: directory.file("reopen-\(index).lock"), options: Self.options)
            defer { reopened.close() }
            #expect(reopened.latestVersion == previousVersion, "\(label)")
            #expect(try EngineModel.read(from: reopened) == model, "\(label)")
            #expect(try reopened.verify().isHealthy, "\(label)")
        }

        // The engine is still usable: the same commit succeeds, is visible and is durable.
        failpoint.disarm()
        try engine.write { try $0.apply(operations) }
        let next = model.applying(operations)
        #expect(engine.latestVersion == previousVersion + 1)
        #expect(try EngineModel.read(from: engine) == next)
        #expect(try engine.verify().isHealthy)
        let afterPowerLoss = try StorageEngine.open(file: disk.crash(seed: 99), lockPath: directory.file("final.lock"), options: Self.options)
        defer { afterPowerLoss.close() }
        #expect(try EngineModel.read(from: afterPowerLoss) == next)
        #expect(try afterPowerLoss.verify().isHealthy)
    }

    /// Commits made with `durability: .none`, and the model after each.
    /// Durable commits first (so that later commits reuse pages holding older, valid content),
    /// then unsynced ones.
    private func unsyncedHistory(on disk: SimulatedDisk, lockPath: String) throws -> [EngineModel] {
        var generator = WorkloadGenerator(seed: 11)
        var models = [EngineModel()]
        do {
            let engine = try StorageEngine.open(file: disk, lockPath: lockPath + "-full", options: Self.options)
            defer { engine.close() }
            for _ in 0..<8 {
                let operations = generator.commit(after: models.last!)
                try engine.write { try $0.apply(operations) }
                models.append(models.last!.applying(operations))
            }
        }
        let engine = try StorageEngine.open(file: disk, lockPath: lockPath, options: StorageOptions(durability: .none, pageSize: 4096, maximumFileSize: 64 << 20, maximumReaders: 8))
        defer { engine.close() }
        let syncsBefore = disk.syncCount
        for index in 0..<12 {
            let operations = generator.commit(after: models.last!, large: index == 5)
            try engine.write { try $0.apply(operations) }
            models.append(models.last!.applying(operations))
        }
        #expect(disk.syncCount == syncsBefore, "durability .none never syncs")
        return models
    }

    @Test func unsyncedCommitsSurviveAProcessCrash() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let disk = SimulatedDisk()
        let models = try unsyncedHistory(on: disk, lockPath: directory.file("lock"))
        let image = disk.crashProcess()
        let reopened = try StorageEngine.open(file: image, lockPath: directory.file("reopen.lock"), options: Self.options)
        defer { reopened.close() }
        #expect(reopened.latestVersion == UInt64(models.count - 1))
        #expect(try EngineModel.read(from: reopened) == models.last!)
        #expect(try reopened.verify().isHealthy)
        // A durable commit on top of unsynced ones makes the whole history durable (it takes
        // the two-sync path, whose first sync covers every earlier write too).
        var generator = WorkloadGenerator(seed: 12)
        let operations = generator.commit(after: models.last!)
        try reopened.write { try $0.apply(operations) }
        for seed in 0..<8 as Range<UInt64> {
            let afterPowerLoss = try StorageEngine.open(file: image.crash(seed: seed), lockPath: directory.file("power-\(seed).lock"), options: Self.options)
            defer { afterPowerLoss.close() }
            #expect(try EngineModel.read(from: afterPowerLoss) == models.last!.applying(operations), "seed \(seed)")
            #expect(try afterPowerLoss.verify().isHealthy, "seed \(seed)")
        }
    }

    /// What `Durability.none` documents: a power loss may lose recent commits, or leave a file
    /// only an older commit can be read from, or none, or one whose newest version reads as a
    /// mix of versions that only verify() detects. Every outcome is classified and printed.
    @Test func unsyncedCommitsMayBeLostOnPowerLoss() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let disk = SimulatedDisk()
        let models = try unsyncedHistory(on: disk, lockPath: directory.file("lock"))
        var outcomes: [String: Int] = [:]
        for seed in 0..<200 as Range<UInt64> {
            outcomes[try Self.classifyUnsyncedPowerLoss(disk.crash(seed: seed), models: models, seed: seed,
                                                        lockPath: directory.file("reopen-\(seed).lock")), default: 0] += 1
        }
        print("durability .none after power loss: \(outcomes.sorted { $0.key < $1.key })")
        #expect(outcomes["newest commit", default: 0] < 200, "some power failure should lose unsynced commits")
    }

    private static func classifyUnsyncedPowerLoss(_ image: SimulatedDisk, models: [EngineModel], seed: UInt64, lockPath: String) throws -> String {
        let engine: StorageEngine
        do {
            engine = try StorageEngine.open(file: image, lockPath: lockPath, options: options)
        } catch let error as StorageError {
            return "refused at open: \(kind(error))"
        }
        defer { engine.close() }
        let found: EngineModel
        do {
            found = try EngineModel.read(from: engine)
        } catch let error as StorageError {
            #expect(try !engine.verify().isHealthy, "seed \(seed): reads fail (\(error)) but verify() finds nothing")
            return "damage detected on read: \(kind(error))"
        }
        guard let version = models.lastIndex(of: found) else {
            // Known limitation (reported; documented on Durability.none): an unsynced commit
            // that reused a page may have its meta reach the disk while that page keeps the
            // older, valid content of a freed page. Nothing in the page says it is stale, so
            // reads return it. verify() must still see that the version does not add up.
            let report = try engine.verify()
            #expect(!report.isHealthy, "seed \(seed): wrong data and verify() finds nothing")
            withKnownIssue("durability .none: after power loss, reads can return stale pages undetected") {
                Issue.record("seed \(seed): the file reads as no committed version (\(found)); verify: \(report)")
            }
            return "stale data, found by verify()"
        }
        #expect(try engine.verify().isHealthy, "seed \(seed): version \(version) reads correctly but verify() complains")
        return version == models.count - 1 ? "newest commit" : "an older commit"
    }

    static func kind(_ error: StorageError) -> String {
        switch error {
        case .corrupted: "corrupted"
        case .truncated: "truncated"
        case .notADatabase: "notADatabase"
        default: "\(error)"
        }
    }
}
