// Cross-process tests: other processes (StrataTestChild) write, read, hold the write lock, crash
// at every commit step and get SIGKILLed, and this process checks what is left.
//
// Synchronisation is by the lines children print (never by sleeping); the only timeouts are
// generous guards that turn a hang into a failure.
//
// Set STRATA_STRESS=N to run N kill iterations instead of 20.

import CStrataSystem
import Dispatch
import Foundation
import Synchronization
import StrataTestWorkloads
import Testing
@testable import StrataStorage

#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized, .offThePool)
struct ProcessTests {
    // MARK: Killed writers

    /// A child commits forever and is SIGKILLed after it has printed k versions (k random), so
    /// it dies anywhere: preparing a transaction, mid-commit, after committing but before printing.
    /// Afterwards the file is healthy, holds exactly the last printed version or the one after
    /// it, and a write here succeeds. On odd iterations this process keeps the database open
    /// while the child dies (no recovery on open: the file stays in use throughout).
    @Test func killedWritersLeaveTheLastOrNextVersion() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("kill.strata")
        let seed: UInt64 = 0x5EED_0001
        let iterations = ProcessInfo.processInfo.environment["STRATA_STRESS"].flatMap { Int($0) } ?? 20
        var rng = SplitMix64(seed: 42)
        var model = WorkloadModel(seed: seed)

        for iteration in 0..<iterations {
            let keepOpen = iteration % 2 == 1
            let observer = keepOpen ? try StorageEngine.open(path: path) : nil
            let commits = 1 + Int(rng.next() % 40)
            let child = try Child("write-forever", path, "\(seed)")
            var lastPrinted = model.version
            while lastPrinted < model.version + UInt64(commits) {
                let line = try child.readLine()
                if line == "commit \(lastPrinted + 1)" { continue }
                guard let version = UInt64(line), version == lastPrinted + 1 else {
                    Issue.record("iteration \(iteration): child printed '\(line)' after version \(lastPrinted)")
                    return
                }
                lastPrinted = version
            }
            // Kill it now (most likely while it prepares the next transaction), or once it has
            // started committing the next one, after a random spin of up to 0.8 ms (a commit
            // takes about that long), so the kill lands anywhere in the commit.
            if rng.next() % 2 == 0 {
                #expect(try child.readLine() == "commit \(lastPrinted + 1)")
                spin(microseconds: Int(rng.next() % 800))
            }
            child.kill()
            // The child may have committed and printed more before the kill landed (it runs
            // ahead of this reader under load): count what it printed before it died.
            for line in child.remainingLines() {
                if let version = UInt64(line), version == lastPrinted + 1 { lastPrinted = version }
            }

            let engine = try observer ?? StorageEngine.open(path: path)
            let latest = engine.latestVersion
            #expect(latest == lastPrinted || latest == lastPrinted + 1,
                    "iteration \(iteration) (kept open: \(keepOpen)): version \(latest) after the child printed \(lastPrinted)")
            try expectHealthy(engine, "iteration \(iteration) after the kill")
            model.advance(to: latest)
            try expectContents(engine, equal: model.entries, "iteration \(iteration) at version \(latest)")

            // The child died holding nothing: this process can write (no deadlock).
            let written = try engine.write { txn in try model.commitNext(in: txn) }
            #expect(written == latest + 1)
            try expectContents(engine, equal: model.entries, "iteration \(iteration) after writing \(written)")
            engine.close()

            // Reopened alone (recovery runs): still exactly the model.
            let reopened = try StorageEngine.open(path: path)
            #expect(reopened.latestVersion == model.version)
            try expectContents(reopened, equal: model.entries, "iteration \(iteration) reopened")
            reopened.close()
        }
    }

    // MARK: A killed lock holder

    /// A child takes the write lock and puts keys, then is SIGKILLed mid-transaction while a
    /// writer here is (most likely) already blocked on the lock: that writer proceeds, and none
    /// of the child's puts are visible.
    @Test func killingTheWriteLockHolderReleasesTheLock() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("lock.strata")
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        try engine.write { txn in try txn.put([UInt8]("before"), forKey: [UInt8]("before"), in: txn.createTree(named: "kv")) }

        let child = try Child("hold-write", path)
        #expect(try child.readLine() == "locked")
        #expect(strata_ofd_is_locked(engine.lockFile.descriptor, LockFile.writeLockOffset, 1) == 1,
                "the child should hold the write lock")

        let finished = DispatchSemaphore(value: 0)
        let outcome = Shared<String>("not finished")
        DispatchQueue.global().async {
            do {
                let version = try engine.write { txn in
                    try txn.put([UInt8]("after"), forKey: [UInt8]("after"), in: txn.createTree(named: "kv"))
                    return txn.version + 1
                }
                outcome.value = "committed \(version)"
            } catch {
                outcome.value = "failed: \(error)"
            }
            finished.signal()
        }
        child.kill()
        #expect(finished.wait(timeout: .now() + 30) == .success, "the write here never got the lock")
        #expect(outcome.value == "committed 2")

        try expectHealthy(engine, "after the lock holder died")
        try expectContents(engine, equal: [[UInt8]("before"): [UInt8]("before"), [UInt8]("after"): [UInt8]("after")],
                           "the dead writer's puts must not be visible")
    }

    // MARK: The write lock kept between transactions

    /// An engine keeps the OFD write lock after its commits while nobody else wants it. A
    /// child that wants it while this engine is idle gets it (this engine's listener drops it),
    /// and afterwards this engine takes it again and keeps it. Without the listener the child
    /// would wait forever (the watchdog kills it after a while and the test fails).
    @Test func anIdleWriterHandsTheWriteLockToAnotherProcess() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("idle.strata")
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        var expected: [[UInt8]: [UInt8]] = [:]
        for round in 0..<3 {
            try engine.write { txn in try txn.put([UInt8]("parent"), forKey: [UInt8]("p\(round)"), in: txn.createTree(named: "kv")) }
            expected[[UInt8]("p\(round)")] = [UInt8]("parent")
            #if os(Linux)
            #expect(engine.writeLock.holdsAcrossProcesses, "round \(round): the lock should be kept while nobody wants it")
            #endif
            let child = try Child("commit-once", path, "c\(round)", "child")
            #expect(try child.readLine() == "\(engine.latestVersion)", "\(child.errorOutput())")
            #expect(child.waitForExit() == .exited(0))
            expected[[UInt8]("c\(round)")] = [UInt8]("child")
            #expect(!engine.writeLock.holdsAcrossProcesses, "round \(round): the idle engine should have dropped the lock")
            #expect(strata_atomic_load_u32(engine.lockFile.writeLockWanted) == 0, "round \(round): nobody waits any more")
        }
        try expectContents(engine, equal: expected, "after alternating with children")
        try expectHealthy(engine, "after alternating with children")
    }

    /// This engine's commits keep the nodes they wrote for its next transaction
    /// (`Arena.takeKept`); children's commits in between rewrite the same leaves and reuse the
    /// pages those nodes mirrored. The next transaction here starts from a child's version, so
    /// it must read the pages, never take the kept nodes.
    @Test func nodesKeptFromAnOlderVersionAreNotTakenAfterAnotherProcessCommits() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("kept.strata")
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        var expected: [[UInt8]: [UInt8]] = [:]
        func key(_ i: Int) -> String { "k\(1_000 + i)" }
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for i in 0..<400 {
                try txn.put([UInt8]("initial-\(i)"), forKey: [UInt8](key(i)), in: tree)
                expected[[UInt8](key(i))] = [UInt8]("initial-\(i)")
            }
        }
        for round in 0..<12 {
            // Two commits here: the second takes what the first kept.
            for step in 0..<2 {
                let i = (round * 37 + step) % 400
                try engine.write { txn in try txn.put([UInt8]("parent-\(round)"), forKey: [UInt8](key(i)), in: txn.createTree(named: "kv")) }
                expected[[UInt8](key(i))] = [UInt8]("parent-\(round)")
            }
            // Two children's commits into the same leaves: the second may reuse the pages the
            // first freed, among them those the nodes kept here mirror.
            for step in 0..<2 {
                let i = (round * 37 + step + 1) % 400
                let child = try Child("commit-once", path, key(i), "child-\(round)")
                #expect(UInt64(try child.readLine()) != nil, "the child commits and prints its version: \(child.errorOutput())")
                #expect(child.waitForExit() == .exited(0))
                expected[[UInt8](key(i))] = [UInt8]("child-\(round)")
            }
            let i = (round * 37 + 2) % 400
            try engine.write { txn in try txn.put([UInt8]("after-\(round)"), forKey: [UInt8](key(i)), in: txn.createTree(named: "kv")) }
            expected[[UInt8](key(i))] = [UInt8]("after-\(round)")
            try expectContents(engine, equal: expected, "round \(round)")
        }
        #expect(engine.keptNodesTaken > 0)
        try expectHealthy(engine, "after the children's commits")
    }

    /// A process whose address space has no free range as large as `maximumFileSize` (many
    /// files open, or a sanitizer's smaller address space) still opens, commits and reads: the
    /// file reserves the largest range that is free instead of failing the open with ENOMEM.
    @Test func anOpenInACrowdedAddressSpaceReservesLessAndWorks() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("crowded.strata")
        let child = try Child("crowded", path, "key", "value")
        let line = try child.readLine()
        #expect(child.waitForExit() == .exited(0), "\(child.errorOutput())")
        let mappable = line.hasPrefix("mappable ") ? UInt64(line.dropFirst("mappable ".count)) : nil
        #expect(mappable.map { $0 >= 64 << 20 && $0 < 16 << 30 } == true, "the child printed \(line)")
        // The file it wrote is whole for an open with the full reservation.
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        try expectContents(engine, equal: [[UInt8]("key"): [UInt8]("value")], "after the crowded child's commit")
    }

    /// A child that starts waiting while this engine is inside a write transaction gets the
    /// lock when that transaction ends: the end of the transaction sees the waiter and drops
    /// the OFD lock instead of keeping it.
    @Test func aWriterInATransactionHandsTheWriteLockOnAtItsEnd() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("busy.strata")
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        try engine.write { txn in try txn.put([UInt8]("0"), forKey: [UInt8]("first"), in: txn.createTree(named: "kv")) }
        let txn = try engine.beginWrite()
        try txn.put([UInt8]("1"), forKey: [UInt8]("parent"), in: txn.createTree(named: "kv"))
        let child = try Child("commit-once", path, "child", "2")
        // Wait (spinning, with a guard) until the child counts itself as waiting for the lock.
        let wanted = engine.lockFile.writeLockWanted
        let deadline = ContinuousClock.now + .seconds(60)
        while strata_atomic_load_u32(wanted) == 0 && ContinuousClock.now < deadline {}
        #expect(strata_atomic_load_u32(wanted) == 1, "the child should be waiting for the write lock")
        try txn.commit()
        #expect(!engine.writeLock.holdsAcrossProcesses, "the lock should be dropped for the waiting child")
        #expect(try child.readLine() == "3", "\(child.errorOutput())")
        #expect(child.waitForExit() == .exited(0))
        try expectContents(engine, equal: [[UInt8]("first"): [UInt8]("0"), [UInt8]("parent"): [UInt8]("1"), [UInt8]("child"): [UInt8]("2")],
                           "after the child's commit")
        // The lock comes back and is kept again.
        try engine.write { txn in try txn.put([UInt8]("3"), forKey: [UInt8]("again"), in: txn.createTree(named: "kv")) }
        #if os(Linux)
        #expect(engine.writeLock.holdsAcrossProcesses)
        #endif
    }

    // MARK: A killed reader

    /// A child pins version V, which reaches a large tree; the tree is then replaced, and while
    /// the child lives V's pages are not reused (the file grows). After the child is SIGKILLed
    /// its reader slot is reclaimed by the next writer, so V's pages are reused: writing two
    /// trees of that size fits in the file without growing it.
    @Test func killedReaderSlotIsReclaimed() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("reader.strata")
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        func fill(_ names: [String], _ tag: String) throws {
            try engine.write { txn in
                for name in names {
                    let tree = try txn.createTree(named: name)
                    for i in 0..<800 { try txn.put([UInt8](repeating: UInt8(i & 0xFF), count: 500) + [UInt8](tag), forKey: [UInt8]("k\(i)"), in: tree) }
                }
            }
        }
        func drop(_ name: String) throws { try engine.write { txn in _ = try txn.dropTree(named: name) } }
        func fileSize() throws -> UInt64 { (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.uint64Value ?? 0 }

        try fill(["big"], "v1")
        let pinned = engine.latestVersion
        let treePages = try engine.verify().treePages
        let child = try Child("hold-read", path)
        #expect(try child.readLine() == "reading \(pinned)")
        #expect(engine.activeReaderCount == 1)

        // While the child lives, replacing the tree cannot reuse V's pages.
        let before = try fileSize()
        try drop("big")
        try fill(["big"], "v2")
        let grown = try fileSize()
        #expect(grown >= before + treePages / 2 * UInt64(engine.pageSize), "a live reader's pages were reused")

        child.kill()
        try drop("big")
        #expect(engine.activeReaderCount == 0, "the dead reader's slot was not reclaimed")
        #expect(!engine.lockFile.pinnedVersions().contains(pinned))
        try fill(["big", "second"], "v3")
        let after = try fileSize()
        #expect(after <= grown + 4 * UInt64(engine.pageSize),
                "the dead reader's pages were not reused: \(grown) -> \(after) bytes (tree: \(treePages) pages)")
        try expectHealthy(engine, "after reusing the dead reader's pages")
    }

    // MARK: Crashes at every commit step

    /// Where a commit can stop, for each shape of commit: a small one (one sync, with the
    /// commit log off) never reaches the data sync steps; a logged one (the same commit through
    /// the commit log) syncs only the log.
    static let crashCases: [(step: CommitStep, shape: String)] =
        CommitStep.allCases.filter { !$0.isLogStep }.map { ($0, "large") }
        + CommitStep.allCases.filter { $0 != .beforeDataSync && $0 != .afterDataSync && !$0.isLogStep }.map { ($0, "small") }
        + CommitStep.allCases.filter { ![.beforeDataSync, .afterDataSync, .beforeFinalSync, .afterFinalSync].contains($0) }.map { ($0, "logged") }

    /// The outcome of a process crash at each step when the file is reopened by a new process:
    /// the new version once its meta page has been written (the page cache keeps it; for a
    /// one-sync commit every page it lists is in place too), the previous version before that.
    /// A logged commit survives once its record is in the log (the page cache keeps it, and
    /// reopening replays it): it writes the record first; its meta alone is never adopted.
    /// A logged commit writes its record before its pages, so it survives from the step after
    /// `beforeLogWrite` on.
    static func survives(_ step: CommitStep, shape: String) -> Bool {
        if shape == "logged" { return step != .beforeLogWrite }
        switch step {
        case .beforeDataWrite, .beforeGrowth, .afterDataWrite, .beforeDataSync, .afterDataSync, .beforeMetaWrite, .beforeLogWrite: return false
        case .afterMetaWrite, .beforeFinalSync, .afterFinalSync, .beforeLogSync, .afterLogSync: return true
        }
    }

    /// A child's commit dies at each step (`_exit(9)` from the failpoint) while no other
    /// process has the file open; reopening recovers exactly the version `survives` says.
    @Test func crashAtEveryCommitStepRecovers() throws {
        for (step, shape) in Self.crashCases {
            let directory = TemporaryDirectory(); defer { directory.remove() }
            let path = directory.file("crash.strata")
            try writeBaseline(path)

            let child = try Child("crash-at", step.rawValue, shape, path)
            let status = child.waitForExit()
            #expect(status == .exited(9), "\(step) \(shape): the child should have died at the step, got \(status)")

            let engine = try StorageEngine.open(path: path)
            let survived = Self.survives(step, shape: shape)
            #expect(engine.latestVersion == (survived ? 2 : 1), "\(step) \(shape)")
            try expectHealthy(engine, "\(step) \(shape)")
            try expectContents(engine, equal: crashContents(shape: shape, committed: survived), "\(step) \(shape)")
            try engine.write { txn in try txn.put([UInt8]("x"), forKey: [UInt8]("after"), in: txn.createTree(named: "kv")) }
            try expectHealthy(engine, "\(step) \(shape) after a write")
            engine.close()
        }
    }

    /// The same crashes while this process keeps the file open: the dead writer's commit was
    /// never published, so this process stays at version 1, its next commit replaces the dead
    /// one, and that is what a later reopen finds.
    @Test func crashAtEveryCommitStepWhileOpenElsewhere() throws {
        for (step, shape) in Self.crashCases {
            let directory = TemporaryDirectory(); defer { directory.remove() }
            let path = directory.file("crash-open.strata")
            try writeBaseline(path)
            let engine = try StorageEngine.open(path: path)

            let child = try Child("crash-at", step.rawValue, shape, path)
            #expect(child.waitForExit() == .exited(9), "\(step) \(shape)")
            #expect(engine.latestVersion == 1, "\(step) \(shape): an unpublished commit became visible")
            try expectContents(engine, equal: crashContents(shape: shape, committed: false), "\(step) \(shape)")

            try engine.write { txn in try txn.put([UInt8]("x"), forKey: [UInt8]("after"), in: txn.createTree(named: "kv")) }
            #expect(engine.latestVersion == 2)
            var expected = crashContents(shape: shape, committed: false)
            expected[[UInt8]("after")] = [UInt8]("x")
            try expectHealthy(engine, "\(step) \(shape) after a write here")
            engine.close()

            let reopened = try StorageEngine.open(path: path)
            #expect(reopened.latestVersion == 2, "\(step) \(shape)")
            try expectHealthy(reopened, "\(step) \(shape) reopened")
            try expectContents(reopened, equal: expected, "\(step) \(shape) reopened")
            reopened.close()
        }
    }

    /// Two writers die in a row while this process keeps the file open (so no recovery runs in
    /// between): the first after writing its meta for version 2 (never published), the second,
    /// which also starts from version 1 and so reuses the same free pages, after writing its
    /// (different) data pages. Reopening must give a whole version: 1, or the first writer's 2.
    /// (With a large first commit, adopting its meta, which as a two-sync meta lists no
    /// checksums, over pages the second writer overwrote would give a corrupted tree.)
    @Test(arguments: ["small", "large"])
    func twoCrashedWritersWhileOpenElsewhere(firstShape: String) throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("double.strata")
        try writeBaseline(path)
        let engine = try StorageEngine.open(path: path)
        #expect(try Child("crash-at", CommitStep.afterMetaWrite.rawValue, firstShape, path).waitForExit() == .exited(9))
        #expect(try Child("crash-at", CommitStep.afterDataWrite.rawValue, "other", path).waitForExit() == .exited(9))
        #expect(engine.latestVersion == 1)
        engine.close()

        let reopened = try StorageEngine.open(path: path)
        defer { reopened.close() }
        let version = reopened.latestVersion
        #expect(version == 1 || version == 2)
        try expectHealthy(reopened, "first crash \(firstShape)")
        try expectContents(reopened, equal: crashContents(shape: firstShape, committed: version == 2), "first crash \(firstShape), version \(version)")
    }

    // MARK: Visibility across processes

    /// Two children take turns incrementing a counter, each waiting (waitForVersion, woken by
    /// the other's commit) for its turn; each checks it saw every one of the other's commits.
    // MARK: Compaction in place

    /// A compaction in place (`compactIfUnused`, behind `shouldCompactOnLaunch`) killed after
    /// each of its steps, and one that finishes: the file reopens healthy with every commit,
    /// including one only the commit log held (its writer died after the log's sync). A later
    /// compaction removes what a killed one left and leaves nothing beside the file.
    @Test func compactionKilledAfterEveryStepKeepsEveryCommit() throws {
        for step in CompactionStep.allCases.map(\.rawValue) + ["none"] {
            let directory = TemporaryDirectory(); defer { directory.remove() }
            let path = directory.file("compact.strata")
            try writeBaseline(path)
            let writer = try Child("crash-at", CommitStep.afterLogSync.rawValue, "logged", path)
            #expect(writer.waitForExit() == .exited(9), "\(step): the writer should have died after its log sync")
            let compactor = try Child("compact-crash-at", step, path)
            #expect(compactor.waitForExit() == .exited(step == "none" ? 0 : 9), "\(step)")
            let expected = crashContents(shape: "small", committed: true)
            do {
                let engine = try StorageEngine.open(path: path)
                try expectHealthy(engine, "compaction killed after \(step)")
                try expectContents(engine, equal: expected, "compaction killed after \(step)")
                engine.close()
            }
            #expect(try StorageEngine.compactIfUnused(path: path, options: StorageOptions()) { _, _ in true }, "\(step)")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(names == ["compact.strata", "compact.strata-lock", "compact.strata-log"], "\(step): left beside the file: \(names)")
            let engine = try StorageEngine.open(path: path)
            try expectHealthy(engine, "\(step), compacted again")
            try expectContents(engine, equal: expected, "\(step), compacted again")
            let version = engine.latestVersion
            engine.close()
            // The log left beside the new file works as a log: a commit that only it holds
            // (its writer died after the log's sync) is replayed at the next open.
            let next = try Child("crash-at", CommitStep.afterLogSync.rawValue, "logged", path)
            #expect(next.waitForExit() == .exited(9), "\(step)")
            var after = expected
            for (key, value) in CrashShape.entries("small", version: version + 1) { after[key] = value }
            let reopened = try StorageEngine.open(path: path)
            #expect(reopened.latestVersion == version + 1, "\(step)")
            try expectHealthy(reopened, "\(step), a logged commit after compaction")
            try expectContents(reopened, equal: after, "\(step), a logged commit after compaction")
            reopened.close()
        }
    }

    /// While an engine has the file open (here or in another process: either holds the lock
    /// file shared), compaction does not ask and does not touch the file; once it closes,
    /// compaction goes ahead.
    @Test func compactionWaitsForTheFileToBeUnused() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("busy.strata")
        try writeBaseline(path)
        let engine = try StorageEngine.open(path: path)
        let asked = Locked(0)
        #expect(try !StorageEngine.compactIfUnused(path: path, options: StorageOptions()) { _, _ in asked.withLock { $0 += 1 }; return true })
        #expect(asked.withLock { $0 } == 0)
        try expectContents(engine, equal: crashContents(shape: "small", committed: false), "open while compaction was refused")
        engine.close()
        #expect(try StorageEngine.compactIfUnused(path: path, options: StorageOptions()) { fileBytes, usedBytes in
            asked.withLock { $0 += 1 }
            return usedBytes <= fileBytes
        })
        #expect(asked.withLock { $0 } == 1)
    }

    /// Another process's logged commit, never read here: this process's last close still
    /// checkpoints it, so a read-only open afterwards needs no replay and sees it.
    @Test func theLastCloseCheckpointsAnotherProcesssLoggedCommit() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("checkpoint.strata")
        try writeBaseline(path)
        let engine = try StorageEngine.open(path: path)
        let child = try Child("commit-once", path, "late", "from-child")
        #expect(child.waitForExit() == .exited(0), "\(child.errorOutput())")
        engine.close()
        var readOnly = StorageOptions()
        readOnly.readOnly = true
        let reader = try StorageEngine.open(path: path, options: readOnly)
        defer { reader.close() }
        #expect(try reader.read { try $0.value(forKey: [UInt8]("late"), in: $0.tree(named: "kv")!) } == [UInt8]("from-child"))
    }

    @Test func twoProcessesAlternateCommits() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("pingpong.strata")
        let rounds: UInt64 = 200
        do {
            let engine = try StorageEngine.open(path: path)
            try engine.write { txn in
                var zero: UInt64 = 0
                try txn.put(withUnsafeBytes(of: &zero) { Array($0) }, forKey: [UInt8]("counter"), in: txn.createTree(named: "pingpong"))
            }
            engine.close()
        }
        let children = try (0..<2).map { try Child("alternate", path, "\($0)", "\(rounds)") }
        for child in children {
            #expect(try child.readLine() == "done \(rounds)", "\(child.errorOutput())")
            #expect(child.waitForExit() == .exited(0))
        }

        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        #expect(engine.latestVersion == 1 + 2 * rounds)
        try engine.read { txn in
            let tree = try #require(try txn.tree(named: "pingpong"))
            let counter = try #require(try txn.value(forKey: [UInt8]("counter"), in: tree))
            #expect(counter.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } == 2 * rounds)
            for turn in 0..<2 * rounds {
                #expect(try txn.value(forKey: [UInt8]("by-\(turn)"), in: tree) == [UInt8(turn % 2)], "turn \(turn)")
            }
        }
    }

    /// This process blocks in waitForVersion; a child's commit wakes it with the new version.
    @Test func waitForVersionIsWokenByAnotherProcess() throws {
        try expectWokenByAChildsCommit("wait.strata") { engine, start, _ in
            engine.waitForVersion(newerThan: start, timeout: .seconds(60))  // the timeout is a guard only
        }
    }

    /// A quiet wait (which this process's own commits do not wake) is still woken by another
    /// process's commit.
    @Test func aQuietWaitIsWokenByAnotherProcess() throws {
        try expectWokenByAChildsCommit("quiet.strata") { engine, start, stop in
            engine.waitForVersion(newerThan: start, quiet: true, until: { stop.value })
        }
    }

    /// Runs `wait` (given the engine, the version it starts from, and a flag that asks it to
    /// give up) on another thread while a child process commits once; expects the wait to end
    /// with the child's version and the child's value to be read here.
    private func expectWokenByAChildsCommit(
        _ name: String, wait: @escaping @Sendable (StorageEngine, UInt64, Shared<Bool>) -> UInt64
    ) throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file(name)
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        try engine.write { txn in try txn.put([UInt8]("0"), forKey: [UInt8]("k"), in: txn.createTree(named: "kv")) }
        let start = engine.latestVersion

        let woken = DispatchSemaphore(value: 0)
        let seen = Shared<UInt64>(0)
        let stop = Shared(false)
        DispatchQueue.global().async {
            seen.value = wait(engine, start, stop)
            woken.signal()
        }
        let child = try Child("commit-once", path, "k", "1")
        #expect(try child.readLine() == "\(start + 1)")
        #expect(child.waitForExit() == .exited(0))
        let result = woken.wait(timeout: .now() + 60)
        #expect(result == .success)
        if result != .success {  // let the thread go before the engine closes
            stop.value = true
            engine.wakeVersionWaiters()
            woken.wait()
        }
        #expect(seen.value == start + 1)
        try expectContents(engine, equal: [[UInt8]("k"): [UInt8]("1")], "after the child's commit")
    }
}

// MARK: - Helpers

/// Busy-waits (to randomise when a kill lands; never a wait for anything).
private func spin(microseconds: Int) {
    let end = ContinuousClock.now + .microseconds(microseconds)
    while ContinuousClock.now < end {}
}

/// A value shared with a dispatch thread.
final class Shared<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through the lock.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

private func expectHealthy(_ engine: StorageEngine, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let report = try engine.verify()
    #expect(report.isHealthy, "\(context): \(report)", sourceLocation: sourceLocation)
}

private func expectContents(_ engine: StorageEngine, equal expected: [[UInt8]: [UInt8]], _ context: String,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
    let actual = try engine.read { try contents(of: "kv", in: $0) }
    if actual != expected {
        let missing = expected.keys.filter { actual[$0] == nil }.count
        let extra = actual.keys.filter { expected[$0] == nil }.count
        let different = expected.keys.filter { actual[$0] != nil && actual[$0] != expected[$0] }.count
        let summary = "\(actual.count) entries, expected \(expected.count); \(missing) missing, \(extra) extra, \(different) different"
        Issue.record("\(context): contents differ (\(summary))", sourceLocation: sourceLocation)
    }
}

/// Version 1 for the crash tests: tree "kv" with one entry.
private func writeBaseline(_ path: String) throws {
    let engine = try StorageEngine.open(path: path)
    try engine.write { txn in try txn.put([UInt8]("1"), forKey: [UInt8]("base"), in: txn.createTree(named: "kv")) }
    engine.close()
}

/// Tree "kv" after the baseline and, when `committed`, the child's crash-at transaction.
private func crashContents(shape: String, committed: Bool) -> [[UInt8]: [UInt8]] {
    var expected: [[UInt8]: [UInt8]] = [[UInt8]("base"): [UInt8]("1")]
    if committed { for (key, value) in CrashShape.entries(shape, version: 2) { expected[key] = value } }
    return expected
}

// MARK: - The children's workloads (shared with the child through StrataTestWorkloads)


/// Tree "kv" as `write-forever` leaves it after each version.
struct WorkloadModel {
    let seed: UInt64
    private(set) var version: UInt64 = 0
    private(set) var entries: [[UInt8]: [UInt8]] = [:]

    init(seed: UInt64) { self.seed = seed }

    mutating func advance(to target: UInt64) {
        while version < target {
            version += 1
            Workload.apply(seed: seed, version: version) { key, value in entries[key] = value }
        }
    }

    /// Commits the next version's workload in `txn` (as the child would) and advances.
    mutating func commitNext(in txn: WriteTransaction) throws -> UInt64 {
        precondition(txn.version == version)
        let tree = try txn.createTree(named: Workload.tree)
        try Workload.apply(seed: seed, version: version + 1) { key, value in
            if let value { try txn.put(value, forKey: key, in: tree) } else { _ = try txn.delete(forKey: key, in: tree) }
        }
        advance(to: version + 1)
        return version
    }
}

// MARK: - Child processes

/// A running StrataTestChild. Its stdout is read line by line; a watchdog SIGKILLs it after
/// `limit` so that a hang fails the test instead of stalling it.
final class Child: @unchecked Sendable {
    // @unchecked: `buffer` is used only by the test's thread; Process is thread-safe for what we use.
    enum Status: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)
        var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let terminated = DispatchSemaphore(value: 0)
    private var buffer: [UInt8] = []
    private var status: Status?

    init(_ arguments: String..., limit: Duration = .seconds(120)) throws {
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        process.terminationHandler = { [terminated] _ in terminated.signal() }
        try process.run()
        let pid = process.processIdentifier
        let seconds = Double(limit.components.seconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak process] in
            if process?.isRunning == true { _ = Glibc.kill(pid, SIGKILL) }
        }
    }

    deinit {
        if status == nil { kill() }
    }

    /// The next line the child prints (without its newline); throws at end of output.
    func readLine() throws -> String {
        let descriptor = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw ChildError.endOfOutput(arguments: process.arguments ?? [], stderr: errorOutput())
            }
            buffer += chunk[..<n]
        }
    }

    /// After the child has ended: the complete lines it printed that `readLine` has not
    /// returned yet (read without blocking, in case this process's copy of the pipe's write end
    /// is still open).
    func remainingLines() -> [String] {
        _ = waitForExit()
        let descriptor = output.fileHandleForReading.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            buffer += chunk[..<n]
        }
        var lines: [String] = []
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
            buffer.removeSubrange(...newline)
        }
        return lines
    }

    /// SIGKILLs the child and waits until it is gone (its locks and mappings released).
    func kill() {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        _ = waitForExit()
    }

    /// Waits for the child to end and returns how it ended.
    @discardableResult
    func waitForExit() -> Status {
        if let status { return status }
        terminated.wait()
        let result: Status = process.terminationReason == .uncaughtSignal
            ? .signalled(process.terminationStatus) : .exited(process.terminationStatus)
        status = result
        return result
    }

    /// What the child wrote to stderr (after it has ended; empty while it runs).
    func errorOutput() -> String {
        guard status != nil || !process.isRunning else { return "" }
        return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    enum ChildError: Error, CustomStringConvertible {
        case endOfOutput(arguments: [String], stderr: String)
        var description: String {
            switch self {
            case .endOfOutput(let arguments, let stderr): "StrataTestChild \(arguments.joined(separator: " ")) ended its output; stderr: \(stderr)"
            }
        }
    }

    /// The StrataTestChild executable built with the tests (the test target depends on it); STRATA_TEST_CHILD overrides.
    static let executable: String = {
        guard let path = locateProductExecutable(named: "StrataTestChild", override: "STRATA_TEST_CHILD") else {
            fatalError("StrataTestChild not found near the test bundle; build it or set STRATA_TEST_CHILD")
        }
        return path
    }()
}
