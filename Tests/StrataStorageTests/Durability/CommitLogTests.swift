// The commit log (CommitLog.swift) under simulated power loss, process crashes and failures:
// a logged commit that returned survives a power cut, one that failed never comes back, and
// recovery leaves exactly a committed version.
//
// STRATA_LOG_CRASH_POINTS sets the number of power-loss cases (600 by default).

import Foundation
import Testing
@testable import StrataStorage

@Suite struct CommitLogTests {
    static let options = StorageOptions(durability: .full, pageSize: 4096, maximumFileSize: 64 << 20, maximumReaders: 8)

    /// Both disks of one database.
    struct Disks {
        var file = SimulatedDisk()
        var log = SimulatedDisk(capacity: 16 << 20)

        func crash(seed: UInt64) -> Disks {
            Disks(file: file.crash(seed: seed), log: log.crash(seed: seed ^ 0x1065))
        }
        func crashProcess() -> Disks { Disks(file: file.crashProcess(), log: log.crashProcess()) }

        func open(_ lockPath: String, options: StorageOptions = CommitLogTests.options) throws -> StorageEngine {
            try StorageEngine.open(file: file, log: log, lockPath: lockPath, options: options)
        }
    }

    @Test func smallCommitsSyncOnlyTheLog() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        let engine = try disks.open(directory.file("lock"))
        defer { engine.close() }
        try engine.write { try $0.put([0], forKey: [0], in: try $0.createTree(named: "t")) }
        let (fileSyncs, logSyncs) = (disks.file.syncCount, disks.log.syncCount)
        for i in 1...50 as ClosedRange<UInt8> {
            try engine.write { try $0.put([i], forKey: [i], in: try $0.tree(named: "t")!) }
        }
        #expect(disks.file.syncCount == fileSyncs, "logged commits must not sync the database file")
        #expect(disks.log.syncCount - logSyncs >= 50)
        #expect(engine.state.withLock { $0.latestMeta.isLogged })

        // A checkpoint syncs the file and anchors the same version.
        let version = engine.latestVersion
        try engine.checkpoint()
        #expect(engine.latestVersion == version)
        #expect(disks.file.syncCount == fileSyncs + 2)
        #expect(!engine.state.withLock { $0.latestMeta.isLogged })
        #expect(try engine.verify().isHealthy)

        // Everything survives a power cut now, with no log to replay: the file opens without one.
        let reopened = try StorageEngine.open(file: disks.file.crash(seed: 1), lockPath: directory.file("reopen"), options: Self.options)
        defer { reopened.close() }
        #expect(reopened.latestVersion == version)
        #expect(try reopened.read { try $0.value(forKey: [50], in: $0.tree(named: "t")!) } == [50])
    }

    /// A one-key logged commit rewrites a leaf and, every time, its branch, the catalog, the
    /// free list and its meta. Those four go in one stretch, which the commit after next finds
    /// free again, and the leaf apart: two write calls instead of one per page.
    @Test func aOneKeyLoggedCommitWritesItsPagesInTwoCalls() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        let engine = try disks.open(directory.file("lock"))
        defer { engine.close() }
        var generator = SplitMix64(seed: 11)
        func key() -> [UInt8] { withUnsafeBytes(of: generator.next()) { Array($0) } + [UInt8](repeating: 1, count: 8) }
        let value = [UInt8](repeating: 7, count: 100)
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for _ in 0..<2_000 { try txn.put(value, forKey: key(), in: tree) }
        }
        var calls: [Int] = []
        for _ in 0..<200 {
            let before = disks.file.writeCount
            try engine.write { try $0.put(value, forKey: key(), in: try $0.tree(named: "kv")!) }
            calls.append(disks.file.writeCount - before)
        }
        #expect(engine.state.withLock { $0.latestMeta.isLogged })
        let steady = calls.suffix(100)
        let twoOrFewer = steady.filter { $0 <= 2 }.count
        #expect(twoOrFewer >= 80, "write calls per commit: \(Array(steady))")
        #expect(try engine.verify().isHealthy)
    }

    /// A logged commit asked for it opens a read transaction on the version it makes while
    /// the disk writes its record: exactly that version, handed over once. A commit that fails
    /// after opening it (at the log's sync, or after it) closes it: no slot stays pinned.
    @Test(arguments: [CommitStep.beforeLogSync, .afterLogSync])
    func aLoggedCommitOpensTheReadOfItsVersion(failingAt step: CommitStep) throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let failpoint = StepFailpoint()
        let engine = try Disks().open(directory.file("lock"), options: failpoint.options(Self.options))
        defer { engine.close() }
        try engine.write { try $0.put([0], forKey: [0], in: try $0.createTree(named: "t")) }
        try engine.write { try $0.put([1], forKey: [1], in: try $0.tree(named: "t")!) }
        let readers = engine.activeReaderCount

        let committing = try engine.beginWrite()
        committing.readsAfterCommit = true
        try committing.put([2], forKey: [2], in: try committing.tree(named: "t")!)
        try committing.commit()
        #expect(engine.state.withLock { $0.latestMeta.isLogged })
        let read = try #require(committing.takeReadAfterCommit())
        #expect(committing.takeReadAfterCommit() == nil, "handed over once")
        #expect(read.version == committing.committingVersion && read.version == engine.latestVersion)
        #expect(try read.value(forKey: [2], in: try #require(try read.tree(named: "t"))) == [2])
        #expect(engine.activeReaderCount == readers + 1)
        read.close()
        #expect(engine.activeReaderCount == readers)

        failpoint.arm(step)
        let failing = try engine.beginWrite()
        failing.readsAfterCommit = true
        try failing.put([3], forKey: [3], in: try failing.tree(named: "t")!)
        #expect(throws: StorageError.failpoint(step.rawValue)) { try failing.commit() }
        failpoint.disarm()
        #expect(failing.takeReadAfterCommit() == nil)
        #expect(engine.activeReaderCount == readers, "the failed commit's read is closed")
        #expect(engine.latestVersion == committing.committingVersion)
        // Without asking, a commit opens none.
        let plain = try engine.beginWrite()
        try plain.put([4], forKey: [4], in: try plain.tree(named: "t")!)
        try plain.commit()
        #expect(plain.takeReadAfterCommit() == nil)
        #expect(engine.activeReaderCount == readers)
    }

    /// A commit releases freed pages only when it lays out its own (after the transaction's
    /// changes), and never the pages it frees itself: the version it started from stays the
    /// newest until it is published, and a reader that starts on it while the commit writes
    /// its pages must find that version whole. (No reader is open when the commits lay out,
    /// and the log's base is older than the pages they free, so no pin protects them.)
    @Test func aReaderStartingWhileACommitWritesItsPagesSeesTheVersionBefore() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        let engineBox = Locked<StorageEngine?>(nil)
        let expected = Locked<[[UInt8]: [UInt8]]>([:])
        let checks = Locked<(armed: Bool, done: Int, failures: [String])>((false, 0, []))
        var options = Self.options
        options.failpoint = { step in
            guard step == .afterDataWrite, checks.withLock({ $0.armed }), let engine = engineBox.withLock({ $0 }) else { return }
            // The commit's pages are written, not yet published: a new reader gets the version
            // before it.
            var failure: String?
            do {
                let model = expected.withLock { $0 }
                try engine.read { txn in
                    let tree = try #require(try txn.tree(named: "t"))
                    for (key, value) in model where try txn.value(forKey: key, in: tree) != value {
                        failure = "key \(key) reads another value"
                        break
                    }
                }
            } catch {
                failure = "reading the version before the commit: \(error)"
            }
            checks.withLock { state in
                state.done += 1
                if let failure { state.failures.append(failure) }
            }
        }
        let engine = try disks.open(directory.file("lock"), options: options)
        defer { engine.close() }
        engineBox.withLock { $0 = engine }
        var random = SplitMix64(seed: 21)
        let keys = (0..<600).map { i in [UInt8]("key-\(i)".utf8) }
        func value() -> [UInt8] { (0..<Int.random(in: 40...160, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) } }
        var model: [[UInt8]: [UInt8]] = [:]
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            for key in keys { let v = value(); model[key] = v; try txn.put(v, forKey: key, in: tree) }
        }
        // Logged commits, so that the log's base is older than the pages the next ones free.
        func update() throws {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            let v = value()
            try engine.write { try $0.put(v, forKey: key, in: try $0.tree(named: "t")!) }
            model[key] = v
        }
        for _ in 0..<20 { try update() }
        checks.withLock { $0.armed = true }
        for _ in 0..<60 {
            expected.withLock { $0 = model }
            try update()
        }
        let result = checks.withLock { $0 }
        #expect(engine.state.withLock { $0.latestMeta.isLogged })
        #expect(result.done == 60)
        #expect(result.failures.isEmpty, "\(result.failures.prefix(3))")
        #expect(try engine.verify().isHealthy)
    }

    /// A one-key logged commit writes its leaf, its branch, the catalog and its meta, which
    /// keeps the free list: four pages, not five (no free-list page). The free list comes
    /// back from the meta at the next open, and after a checkpoint anchors it.
    /// A one-key logged commit writes its leaf, its branch, the catalog and its meta, which
    /// keeps the free list: four pages, not five (no free-list page). Recovery (a process
    /// crash or a power cut, then replay), a checkpoint's anchor and a reopen keep it right.
    @Test func aOneKeyLoggedCommitKeepsTheFreeListInItsMeta() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        var generator = SplitMix64(seed: 12)
        func key() -> [UInt8] { withUnsafeBytes(of: generator.next()) { Array($0) } + [UInt8](repeating: 1, count: 8) }
        let value = [UInt8](repeating: 7, count: 100)
        var expected: [[UInt8]] = []
        let engine = try disks.open(directory.file("lock"))
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for _ in 0..<2_000 { let k = key(); expected.append(k); try txn.put(value, forKey: k, in: tree) }
        }
        var pages: [Int] = []
        for _ in 0..<100 {
            let before = disks.file.bytesWritten
            let k = key()
            expected.append(k)
            try engine.write { try $0.put(value, forKey: k, in: try $0.tree(named: "kv")!) }
            pages.append((disks.file.bytesWritten - before) / CommitLogTests.options.pageSize)
        }
        let meta = engine.state.withLock { $0.latestMeta }
        #expect(meta.isLogged && !meta.freeList.isEmpty && meta.freeListHead == 0 && meta.freeListPages == 0)
        // (A commit whose leaf splits writes one more.)
        let steady = pages.suffix(50)
        #expect(steady.filter { $0 == 4 }.count >= 45 && steady.allSatisfy { $0 <= 5 }, "pages per commit: \(pages)")
        #expect(try engine.verify().isHealthy)
        let version = engine.latestVersion
        let images = [disks.crashProcess(), disks.crash(seed: 3)]
        engine.close()

        func check(_ engine: StorageEngine) throws {
            #expect(try engine.verify().isHealthy)
            try engine.read { txn in
                let tree = try #require(try txn.tree(named: "kv"))
                #expect(try expected.allSatisfy { try txn.value(forKey: $0, in: tree) == value })
            }
        }
        for (index, image) in images.enumerated() {
            do {
                let reopened = try image.open(directory.file("reopen-\(index)"))
                defer { reopened.close() }
                #expect(reopened.latestVersion == version)
                try check(reopened)
                let k = key()
                expected.append(k)
                try reopened.write { try $0.put(value, forKey: k, in: try $0.tree(named: "kv")!) }
                try reopened.checkpoint()
                let anchor = reopened.state.withLock { $0.latestMeta }
                #expect(!anchor.isLogged && !anchor.freeList.isEmpty)
                try check(reopened)
            }
            let again = try image.open(directory.file("again-\(index)"))
            defer { again.close() }
            try check(again)
            expected.removeLast()
        }
    }

    /// Pending runs held back by a reader pile up until the free list no longer fits a logged
    /// meta: the commits then write free-list pages again, and go back to the meta once the
    /// reader ends and a checkpoint ends the log generation. Every state on the way verifies, and recovers after a power cut.
    @Test func aFreeListTooLongForTheMetaGoesToPagesAndBack() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        var generator = SplitMix64(seed: 13)
        func key() -> [UInt8] { withUnsafeBytes(of: generator.next()) { Array($0) } + [UInt8](repeating: 2, count: 8) }
        let value = [UInt8](repeating: 9, count: 100)
        let engine = try disks.open(directory.file("lock"))
        defer { engine.close() }
        var model: [[UInt8]: [UInt8]] = [:]
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for _ in 0..<4_000 { let k = key(); model[k] = value; try txn.put(value, forKey: k, in: tree) }
        }
        func commit() throws {
            let k = key()
            model[k] = value
            try engine.write { try $0.put(value, forKey: k, in: try $0.tree(named: "kv")!) }
        }
        func check(_ engine: StorageEngine, _ label: String) throws {
            #expect(try engine.verify().isHealthy, "\(label)")
            let stored = try engine.read { txn in
                let tree = try #require(try txn.tree(named: "kv"))
                return try model.keys.filter { try txn.value(forKey: $0, in: tree) == value }.count
            }
            #expect(stored == model.count, "\(label)")
        }
        var inMeta: [Bool] = []
        let reader = try engine.beginRead()
        for _ in 0..<300 {
            try commit()
            inMeta.append(!engine.state.withLock { $0.latestMeta.freeList.isEmpty })
        }
        let meta = engine.state.withLock { $0.latestMeta }
        #expect(meta.isLogged && meta.freeList.isEmpty && meta.freeListPages > 0, "free list in the meta: \(inMeta)")
        #expect(inMeta.prefix(10).allSatisfy { $0 })
        try check(engine, "pages")
        for (index, image) in [disks.crashProcess(), disks.crash(seed: 5)].enumerated() {
            let reopened = try image.open(directory.file("pages-\(index)"))
            defer { reopened.close() }
            try check(reopened, "pages, reopened \(index)")
        }
        // The generation's base still holds its freed pages back: they come free at the
        // checkpoint that ends it.
        reader.close()
        try engine.checkpoint()
        for _ in 0..<20 { try commit() }
        #expect(!engine.state.withLock { $0.latestMeta.freeList.isEmpty })
        try check(engine, "back in the meta")
        for (index, image) in [disks.crashProcess(), disks.crash(seed: 6)].enumerated() {
            let reopened = try image.open(directory.file("meta-\(index)"))
            defer { reopened.close() }
            try check(reopened, "meta, reopened \(index)")
        }
    }

    @Test func randomPowerLossKeepsExactlyTheCommittedVersions() throws {
        let points = ProcessInfo.processInfo.environment["STRATA_LOG_CRASH_POINTS"].flatMap(Int.init) ?? 600
        let directory = TemporaryDirectory(); defer { directory.remove() }
        var logged = 0, replayed = 0, inFlightKept = 0, inFlightLost = 0
        for seed in 0..<UInt64(points) {
            let outcome = try Self.powerLossCase(seed: seed, directory: directory)
            logged += outcome.logged
            if outcome.replayed { replayed += 1 }
            if let kept = outcome.inFlightKept { if kept { inFlightKept += 1 } else { inFlightLost += 1 } }
        }
        print("CommitLogTests: \(points) power cuts; \(logged) logged commits; \(replayed) recoveries replayed the log; in-flight commits kept \(inFlightKept), lost \(inFlightLost)")
        #expect(logged > points)
        #expect(replayed > points / 8)
        #expect(inFlightKept > 0 && inFlightLost > 0)
    }

    private struct Outcome {
        var logged = 0
        var replayed = false
        var inFlightKept: Bool?
    }

    /// A random workload of logged, large and checkpointed commits; the power fails at a
    /// random write or sync of either disk; the recovered file must hold the last commit that
    /// returned, or the one in flight, exactly.
    private static func powerLossCase(seed: UInt64, directory: TemporaryDirectory) throws -> Outcome {
        var random = SplitMix64(seed: seed &* 0x9E37_79B9 &+ 17)
        var generator = WorkloadGenerator(seed: seed)
        let disks = Disks()
        var outcome = Outcome()
        var models = [EngineModel()]
        let engine = try disks.open(directory.file("case-\(seed)"))
        let commits = Int.random(in: 4...24, using: &random)
        // The cut comes after a random number of operations on one of the two disks.
        let cutOnLog = Bool.random(using: &random)
        (cutOnLog ? disks.log : disks.file).losePower(afterOperations: Int.random(in: 0...(cutOnLog ? 2 * commits : 4 * commits), using: &random))
        var inFlight: Int?
        for _ in 0..<commits {
            let large = Int.random(in: 0..<12, using: &random) == 0
            let operations = generator.commit(after: models.last!, large: large)
            do {
                if Int.random(in: 0..<10, using: &random) == 0 { try engine.checkpoint() }
                let transaction = try engine.beginWrite()
                try transaction.apply(operations)
                let wasLoggable = transaction.redo.isLoggable
                inFlight = models.count
                try transaction.commit()
                inFlight = nil
                if wasLoggable && engine.state.withLock({ $0.latestMeta.isLogged }) { outcome.logged += 1 }
                models.append(models.last!.applying(operations))
            } catch {
                if inFlight != nil { models.append(models.last!.applying(operations)) }
                break
            }
        }
        engine.close()
        let crashed = disks.crash(seed: seed ^ 0xC0FFEE)
        let reopened = try crashed.open(directory.file("reopen-\(seed)"))
        defer { reopened.close() }
        let version = Int(reopened.latestVersion)
        let acknowledged = models.count - 1 - (inFlight == nil ? 0 : 1)
        #expect(version == acknowledged || (inFlight != nil && version == acknowledged + 1),
                "seed \(seed): recovered version \(version); acknowledged \(acknowledged), in flight \(inFlight.map(String.init) ?? "none")")
        guard version < models.count else { return outcome }
        #expect(try EngineModel.read(from: reopened) == models[version], "seed \(seed): contents of version \(version)")
        #expect(try reopened.verify().isHealthy, "seed \(seed)")
        if inFlight != nil { outcome.inFlightKept = version == acknowledged + 1 }
        // Recovery replayed the log when it left a logged version.
        outcome.replayed = reopened.state.withLock { $0.latestMeta.isLogged }

        // Recovery leaves a file that keeps working: one more commit, another power cut.
        let next = generator.commit(after: models[version])
        try reopened.write { try $0.apply(next) }
        let again = try Disks(file: crashed.file.crash(seed: seed &+ 5), log: crashed.log.crash(seed: seed &+ 6)).open(directory.file("again-\(seed)"))
        defer { again.close() }
        #expect(try EngineModel.read(from: again) == models[version].applying(next), "seed \(seed): after a second power cut")
        return outcome
    }

    @Test(arguments: [CommitStep.beforeDataWrite, .afterDataWrite, .beforeMetaWrite, .afterMetaWrite, .beforeLogWrite, .beforeLogSync, .afterLogSync])
    func failedLoggedCommitLeavesThePreviousVersion(_ step: CommitStep) throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        let failpoint = StepFailpoint()
        let engine = try disks.open(directory.file("lock"), options: failpoint.options(Self.options))
        defer { engine.close() }
        var model = EngineModel()
        for _ in 0..<4 {
            let operations = [ModelOperation.createTree("t0"), .put(tree: "t0", key: Array("k\(model.trees["t0"]?.count ?? 0)".utf8), value: [1, 2, 3])]
            try engine.write { try $0.apply(operations) }
            model = model.applying(operations)
        }
        let previous = engine.latestVersion
        failpoint.arm(step)
        let operations = [ModelOperation.put(tree: "t0", key: Array("failed".utf8), value: [9])]
        let transaction = try engine.beginWrite()
        try transaction.apply(operations)
        #expect(throws: StorageError.failpoint(step.rawValue)) { try transaction.commit() }
        #expect(engine.latestVersion == previous)
        #expect(try EngineModel.read(from: engine) == model)

        // Whether the process dies now or the power fails, the failed commit never comes back.
        var images = [("process crash", disks.crashProcess())]
        for seed in 0..<6 as Range<UInt64> { images.append(("power loss \(seed)", disks.crash(seed: seed))) }
        for (index, (label, image)) in images.enumerated() {
            let reopened = try image.open(directory.file("reopen-\(index)"))
            defer { reopened.close() }
            #expect(reopened.latestVersion == previous, "\(step) \(label)")
            #expect(try EngineModel.read(from: reopened) == model, "\(step) \(label)")
        }

        // The engine is still usable, and the same commit now succeeds durably.
        failpoint.disarm()
        try engine.write { try $0.apply(operations) }
        let recovered = try disks.crash(seed: 77).open(directory.file("final"))
        defer { recovered.close() }
        #expect(try EngineModel.read(from: recovered) == model.applying(operations))
    }

    /// A logged commit writes its record before its pages (the disk writes the record while the
    /// commit lays out and writes the rest), and syncs the log last.
    @Test func aLoggedCommitWritesItsRecordFirst() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let failpoint = StepFailpoint()
        let engine = try Disks().open(directory.file("lock"), options: failpoint.options(Self.options))
        defer { engine.close() }
        try engine.write { txn in try txn.put([1], forKey: [1], in: txn.createTree(named: "t")) }
        failpoint.arm(.afterFinalSync)  // never reached by a logged commit: only records the steps
        try engine.write { txn in try txn.put([2], forKey: [2], in: txn.createTree(named: "t")) }
        #expect(engine.state.withLock { $0.latestMeta.isLogged })
        #expect(failpoint.seen.filter { $0 != .beforeGrowth } == [.beforeLogWrite, .beforeDataWrite, .beforeMetaWrite, .afterDataWrite, .afterMetaWrite, .beforeLogSync, .afterLogSync])
    }

    @Test func aProcessCrashReplaysEveryLoggedCommit() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        var disks = Disks()
        var model = EngineModel()
        var generator = WorkloadGenerator(seed: 21)
        // Three engines in a row, each dying without a close: each continues the generation.
        for round in 0..<3 {
            let engine = try disks.open(directory.file("round-\(round)"))
            #expect(try EngineModel.read(from: engine) == model, "round \(round) reopened")
            for _ in 0..<20 {
                var operations = generator.commit(after: model)
                operations = Array(operations.prefix(3))
                try engine.write { try $0.apply(operations) }
                model = model.applying(operations)
            }
            disks = disks.crashProcess()
        }
        let engine = try disks.open(directory.file("last"))
        defer { engine.close() }
        #expect(try EngineModel.read(from: engine) == model)
        #expect(try engine.verify().isHealthy)
    }

    @Test func rolledBackSavepointsAreNotLogged() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        let engine = try disks.open(directory.file("lock"))
        try engine.write { _ = try $0.createTree(named: "t") }
        let transaction = try engine.beginWrite()
        let tree = try transaction.tree(named: "t")!
        try transaction.put([1], forKey: Array("kept".utf8), in: tree)
        let savepoint = try transaction.savepoint()
        try transaction.put([2], forKey: Array("discarded".utf8), in: tree)
        _ = try transaction.dropTree(named: "t")
        try transaction.rollback(to: savepoint)
        try transaction.put([3], forKey: Array("after".utf8), in: try transaction.tree(named: "t")!)
        try transaction.commit()
        #expect(engine.state.withLock { $0.latestMeta.isLogged })
        engine.close()
        let reopened = try disks.crash(seed: 9).open(directory.file("reopen"))
        defer { reopened.close() }
        var expected = EngineModel()
        expected.apply(.createTree("t"))
        expected.apply(.put(tree: "t", key: Array("kept".utf8), value: [1]))
        expected.apply(.put(tree: "t", key: Array("after".utf8), value: [3]))
        #expect(try EngineModel.read(from: reopened) == expected)
    }

    @Test func aFullLogCheckpointsAndStartsAgain() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        let engine = try disks.open(directory.file("lock"))
        try engine.write { _ = try $0.createTree(named: "t") }
        // Each record takes one block: the log holds capacity / block of them.
        let perGeneration = Int(CommitLog.capacity / CommitLog.blockSize)
        var checkpoints = 0
        var wasLogged = false
        for i in 0..<(perGeneration + 50) {
            let syncs = disks.file.syncCount
            try engine.write { try $0.put(Array("v\(i)".utf8), forKey: Array("k\(i % 300)".utf8), in: try $0.tree(named: "t")!) }
            if disks.file.syncCount > syncs { checkpoints += 1 }
            wasLogged = engine.state.withLock { $0.latestMeta.isLogged }
        }
        #expect(checkpoints == 1, "one checkpoint when the generation filled the log")
        #expect(wasLogged)
        #expect(try disks.log.size() <= CommitLog.capacity + CommitLog.growthStep)
        engine.close()
        let reopened = try disks.crash(seed: 4).open(directory.file("reopen"))
        defer { reopened.close() }
        let last = perGeneration + 49
        #expect(try reopened.read { try $0.value(forKey: Array("k\(last % 300)".utf8), in: $0.tree(named: "t")!) } == Array("v\(last)".utf8))
    }

    /// A new database writes its whole log once, synced, while it is created: the first
    /// generation's commits then write their records and nothing else to the log, and the log
    /// never grows.
    @Test func aNewDatabasePreallocatesItsLog() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        let engine = try disks.open(directory.file("lock"))
        #expect(try disks.log.size() == CommitLog.capacity)
        #expect(disks.log.syncCount >= 1)
        #expect(disks.log.durableImage.count == Int(CommitLog.capacity), "the zeros are synced")
        try engine.write { try $0.put([0], forKey: [0], in: try $0.createTree(named: "t")) }
        let bytes = disks.log.bytesWritten
        for i in 1...200 as ClosedRange<UInt8> {
            try engine.write { try $0.put([i], forKey: [i], in: try $0.tree(named: "t")!) }
        }
        #expect(engine.state.withLock { $0.latestMeta.isLogged })
        #expect(disks.log.bytesWritten - bytes == 200 * Int(CommitLog.blockSize), "one block per commit, no growth")
        #expect(try disks.log.size() == CommitLog.capacity)
        engine.close()

        // An existing database is not preallocated again, and a shorter log (one from before
        // preallocation) still grows as records need it.
        // (Its header records no preallocated length, or the short log would be refused as cut.)
        let short = Disks(file: disks.file.crashProcess(), log: SimulatedDisk())
        try FileHeader.recordLogLength(0, in: short.file)
        let reopened = try short.open(directory.file("reopen"))
        defer { reopened.close() }
        #expect(try short.log.size() == 0)
        try reopened.write { try $0.put([1, 1], forKey: [1], in: try $0.tree(named: "t")!) }
        #expect(reopened.state.withLock { $0.latestMeta.isLogged })
        #expect(try short.log.size() == CommitLog.growthStep)
        let crashed = short.crash(seed: 9)
        let recovered = try crashed.open(directory.file("recovered"))
        defer { recovered.close() }
        #expect(try recovered.read { try $0.value(forKey: [1], in: $0.tree(named: "t")!) } == [1, 1])
        #expect(try recovered.read { try $0.value(forKey: [200], in: $0.tree(named: "t")!) } == [200])
    }

    /// Commits that grow the database file do not ask the file for its size: the engine
    /// knows how far it wrote. (On Linux a stat makes the file's next timestamp fine-grained;
    /// on ext4 without a journal the log's sync then also writes the inode-table block the
    /// two files share.)
    @Test func commitsThatGrowTheFileDoNotStatIt() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        let engine = try disks.open(directory.file("lock"))
        defer { engine.close() }
        try engine.write { try $0.put([0], forKey: [0], in: try $0.createTree(named: "t")) }
        let (size, queries) = (try disks.file.size(), disks.file.sizeQueries)
        let value = [UInt8](repeating: 7, count: 900)
        for i in 0..<300 {
            try engine.write { try $0.put(value, forKey: Array("k\(i)".utf8), in: try $0.tree(named: "t")!) }
        }
        #expect(try disks.file.size() > size + 64 * 4096, "the commits grew the file")
        #expect(disks.file.sizeQueries == queries + 1, "only the check above asked for the size")
        #expect(try engine.read { try $0.value(forKey: Array("k299".utf8), in: $0.tree(named: "t")!) } == value)
    }

    /// Preallocation is best effort: a disk too full for the log's zeros still opens a new
    /// database, whose log then grows as records need it once there is room.
    @Test func aNewDatabaseOpensWhenItsLogCannotBePreallocated() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        disks.log.failWrites(after: Int(CommitLog.growthStep) + 100)
        let engine = try disks.open(directory.file("lock"))
        #expect(try disks.log.size() < CommitLog.capacity)
        disks.log.clearFaults()
        try engine.write { try $0.put([1], forKey: [1], in: try $0.createTree(named: "t")) }
        try engine.write { try $0.put([2], forKey: [2], in: try $0.tree(named: "t")!) }
        #expect(engine.state.withLock { $0.latestMeta.isLogged })
        let crashed = disks.crash(seed: 3)
        engine.close()
        let reopened = try crashed.open(directory.file("reopen"))
        defer { reopened.close() }
        #expect(try reopened.read { try $0.value(forKey: [2], in: $0.tree(named: "t")!) } == [2])
    }

    /// The power fails at each step of a new database's log preallocation: the database opens
    /// (preallocation is best effort) or not, and after the cut it reopens healthy and empty,
    /// its logged commits work and survive the next power cut.
    @Test func aPowerCutWhilePreallocatingTheLogLeavesAWorkingDatabase() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        // Preallocation's writes and its sync, and one operation past them.
        let steps = Int(CommitLog.capacity / CommitLog.growthStep) + 2
        for cut in 0..<steps {
            let disks = Disks()
            disks.log.losePower(afterOperations: cut)
            if let engine = try? disks.open(directory.file("first-\(cut)")) {
                _ = try? engine.write { try $0.put([9], forKey: [9], in: try $0.createTree(named: "t")) }
                engine.close()
            }
            let crashed = disks.crash(seed: UInt64(cut))
            let engine = try crashed.open(directory.file("second-\(cut)"))
            #expect(try engine.verify().isHealthy, "cut \(cut)")
            if let tree = try engine.read({ try $0.tree(named: "t") }) {
                #expect(try engine.read { try $0.value(forKey: [9], in: tree) } == [9], "cut \(cut)")
            }
            for i in 0..<70 as Range<UInt8> {
                try engine.write { try $0.put([i], forKey: [i], in: try $0.createTree(named: "u")) }
            }
            #expect(engine.state.withLock { $0.latestMeta.isLogged }, "cut \(cut)")
            // The next power cut comes with the engine open (a close would checkpoint): the
            // commits come back from the log.
            let afterCut = crashed.crash(seed: UInt64(cut) &+ 100)
            engine.close()
            let again = try afterCut.open(directory.file("third-\(cut)"))
            defer { again.close() }
            #expect(again.state.withLock { $0.latestMeta.isLogged }, "cut \(cut): replayed from the log")
            #expect(try again.read { try $0.value(forKey: [69], in: $0.tree(named: "u")!) } == [69], "cut \(cut)")
            #expect(try again.verify().isHealthy, "cut \(cut)")
        }
    }

    @Test func aLogFromAnotherDatabaseIsRefused() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        do {
            let engine = try disks.open(directory.file("a"))
            try engine.write { try $0.put([1], forKey: [1], in: try $0.createTree(named: "t")) }
            try engine.write { try $0.put([2], forKey: [2], in: try $0.tree(named: "t")!) }
            // No close: the log keeps its records.
            _ = engine
        }
        // Another new database: its version 0 is not the first one's (each first meta carries
        // a random token).
        let other = Disks()
        try other.open(directory.file("b")).close()
        // The first database's log (versions 1 and 2 from its version 0) beside the second's
        // file, after a power cut. (A log whose base is older than the file's version reads as
        // one a checkpoint ended, and is ignored without being read past its first block.)
        let mixed = Disks(file: other.file.crash(seed: 1), log: disks.log.crashProcess())
        do {
            _ = try mixed.open(directory.file("mixed"))
            Issue.record("a foreign log was accepted")
        } catch let error as StorageError {
            guard case .commitLogMismatch = error else { Issue.record("unexpected \(error)"); return }
        }
    }

    @Test func readOnlyOpenWithALogToReplayIsAClearError() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("db.strata")
        // A process that dies after logged commits: a child would do; here the engine is
        // simply never closed (its last close would checkpoint).
        var options = StorageOptions()
        options.maximumReaders = 8
        let engine = try StorageEngine.open(path: path, options: options)
        try engine.write { try $0.put([1], forKey: [1], in: try $0.createTree(named: "t")) }
        let image = try Data(contentsOf: URL(fileURLWithPath: path))
        let log = try Data(contentsOf: URL(fileURLWithPath: StorageEngine.logPath(for: path)))
        engine.close()
        let copy = directory.file("copy.strata")
        try image.write(to: URL(fileURLWithPath: copy))
        try log.write(to: URL(fileURLWithPath: StorageEngine.logPath(for: copy)))
        var readOnly = options
        readOnly.readOnly = true
        #expect(throws: StorageError.recoveryNeedsWriteAccess(path: StorageEngine.logPath(for: copy))) {
            try StorageEngine.open(path: copy, options: readOnly).close()
        }
        // Writable, it replays; read-only afterwards works (the last close checkpointed).
        let writable = try StorageEngine.open(path: copy, options: options)
        #expect(try writable.read { try $0.value(forKey: [1], in: $0.tree(named: "t")!) } == [1])
        writable.close()
        let reader = try StorageEngine.open(path: copy, options: readOnly)
        defer { reader.close() }
        #expect(try reader.read { try $0.value(forKey: [1], in: $0.tree(named: "t")!) } == [1])
    }

    // MARK: Patches

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func deltasRebuildTheNewValue(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for round in 0..<300 {
            let old = (0..<Int.random(in: 0...6000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            var new = old
            // Edits like a column chunk's: a changed count, an entry inserted, bytes appended,
            // bytes changed in place; or a value unlike the old one.
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                switch Int.random(in: 0..<5, using: &random) {
                case 0 where !new.isEmpty: new[Int.random(in: 0..<new.count, using: &random)] &+= 1
                case 1: new.insert(contentsOf: (0..<8).map { _ in UInt8.random(in: 0...255, using: &random) }, at: Int.random(in: 0...new.count, using: &random))
                case 2: new += (0..<Int.random(in: 1...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                case 3 where new.count > 20: new.removeSubrange(0..<Int.random(in: 1...16, using: &random))
                default: new = (0..<Int.random(in: 0...3000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                }
            }
            let limit = Int.random(in: 0...1, using: &random) == 0 ? new.count / 2 : Int.max
            let delta = old.withUnsafeBytes { o in new.withUnsafeBytes { n in ValueDelta.encode(from: o, to: n, limit: limit) } }
            if limit == Int.max { #expect(delta != nil, "round \(round): no delta without a limit") }
            guard let delta else { continue }
            #expect(delta.count <= limit)
            let rebuilt = delta.withUnsafeBytes { d in old.withUnsafeBytes { o in ValueDelta.apply(d, to: o, length: new.count) } }
            #expect(rebuilt == new, "round \(round): \(old.count) -> \(new.count) bytes, delta \(delta.count)")
        }
        // A delta for another value, or a wrong length, is refused rather than misapplied.
        let old = [UInt8](repeating: 7, count: 500), new = old + [1, 2, 3]
        let delta = old.withUnsafeBytes { o in new.withUnsafeBytes { n in ValueDelta.encode(from: o, to: n, limit: 100) } }!
        #expect(delta.withUnsafeBytes { d in [UInt8](repeating: 7, count: 100).withUnsafeBytes { ValueDelta.apply(d, to: $0, length: new.count) } } == nil)
        #expect(delta.withUnsafeBytes { d in old.withUnsafeBytes { ValueDelta.apply(d, to: $0, length: new.count + 1) } } == nil)
    }

    /// Appending to large values logs patches of a few bytes, and replay rebuilds the values
    /// exactly after a power cut.
    @Test func appendsToLargeValuesAreLoggedAsPatchesAndReplayed() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = Disks()
        let engine = try disks.open(directory.file("lock"))
        var chunk = [UInt8](repeating: 0, count: 8)  // a count, then 8-byte rows
        var strings: [UInt8] = []
        try engine.write { txn in
            let tree = try txn.createTree(named: "c")
            try txn.put(chunk, forKey: [1], in: tree)
            try txn.put(strings, forKey: [2], in: tree)
        }
        try engine.checkpoint()
        var random = SplitMix64(seed: 5)
        let logBlocks = disks.log.bytesWritten
        for row in 0..<600 {
            chunk.withUnsafeMutableBytes { $0.storeBytes(of: UInt64(row + 1), as: UInt64.self) }
            chunk += withUnsafeBytes(of: random.next()) { Array($0) }
            // Variable-width rows: an 8-byte entry inserted before the bytes, the bytes appended.
            let text = Array("row \(row) \(random.next() % 1000)".utf8)
            let entries = row * 8
            strings.insert(contentsOf: withUnsafeBytes(of: UInt64(text.count)) { Array($0) }, at: entries)
            strings += text
            try engine.write { txn in
                let tree = try txn.tree(named: "c")!
                try txn.put(chunk, forKey: [1], in: tree)
                try txn.put(strings, forKey: [2], in: tree)
                #expect(txn.redo.isLoggable)
                #expect(txn.redo.bytes.count < 400, "row \(row): a record of \(txn.redo.bytes.count) bytes")
            }
        }
        #expect(engine.state.withLock { $0.latestMeta.isLogged })
        // One block per commit, plus the zeros that extend the log ahead of its records.
        let records = 600 * Int(CommitLog.blockSize)
        let growth = (records / Int(CommitLog.growthStep) + 2) * Int(CommitLog.growthStep)
        #expect(disks.log.bytesWritten - logBlocks <= records + growth)
        let reopened = try disks.crash(seed: 12).open(directory.file("reopen"))
        defer { reopened.close() }
        #expect(try reopened.read { try $0.value(forKey: [1], in: $0.tree(named: "c")!) } == chunk)
        #expect(try reopened.read { try $0.value(forKey: [2], in: $0.tree(named: "c")!) } == strings)
        engine.close()
    }
}
