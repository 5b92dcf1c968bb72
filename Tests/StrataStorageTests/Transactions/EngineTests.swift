import Foundation
import Testing
@testable import StrataStorage

@Suite("Engine basics")
struct EngineTests {
    /// This engine's commits call the local-commit observer and do not wake a quiet waiter,
    /// while a plain waiter of the same process is still woken (a publish wakes whenever
    /// anyone but this process's quiet waiters waits).
    @Test(.offThePool) func ownCommitsReachTheObserverAndWakeOnlyPlainWaiters() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"))
        defer { engine.close() }
        try engine.write { txn in try txn.put([UInt8]("0"), forKey: [UInt8]("k"), in: txn.createTree(named: "kv")) }
        let start = engine.latestVersion
        let observed = Shared<[UInt64]>([])
        engine.setLocalCommitObserver { version in observed.value.append(version) }

        let stop = Shared(false)
        let quietReturned = Shared<UInt64?>(nil)
        let quietDone = DispatchSemaphore(value: 0)
        let quietWaiting = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            quietWaiting.signal()
            quietReturned.value = engine.waitForVersion(newerThan: start, quiet: true, until: { stop.value })
            quietDone.signal()
        }
        quietWaiting.wait()
        while engine.lockFile.commitWaiters < 1 { sched_yield() }  // the quiet waiter sleeps
        let plainSeen = Shared<UInt64>(0)
        let plainDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            plainSeen.value = engine.waitForVersion(newerThan: start, timeout: .seconds(60))  // the timeout is a guard only
            plainDone.signal()
        }
        while engine.lockFile.commitWaiters < 2 { sched_yield() }  // and so does the plain one
        try engine.write { txn in try txn.put([UInt8]("1"), forKey: [UInt8]("k"), in: txn.createTree(named: "kv")) }
        #expect(plainDone.wait(timeout: .now() + 60) == .success)
        #expect(plainSeen.value == start + 1)
        #expect(observed.value == [start + 1])
        // The quiet waiter slept through the commit; it returns when told to stop.
        stop.value = true
        engine.wakeVersionWaiters()
        #expect(quietDone.wait(timeout: .now() + 60) == .success)
        #expect(quietReturned.value != nil)

        engine.setLocalCommitObserver(nil)
        try engine.write { txn in try txn.put([UInt8]("2"), forKey: [UInt8]("k"), in: txn.createTree(named: "kv")) }
        #expect(observed.value == [start + 1])
    }

    @Test func putGetDeleteAndReopen() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let path = dir.file("db.strata")
        do {
            let engine = try StorageEngine.open(path: path)
            defer { engine.close() }
            try engine.write { txn in
                let tree = try txn.createTree(named: "people")
                try txn.put([UInt8]("Ada"), forKey: [UInt8]("1"), in: tree)
                try txn.put([UInt8]("Grace"), forKey: [UInt8]("2"), in: tree)
                try txn.put([], forKey: [UInt8]("empty"), in: tree)
                #expect(try txn.value(forKey: [UInt8]("1"), in: tree) == [UInt8]("Ada"))  // own writes
                #expect(try txn.delete(forKey: [UInt8]("2"), in: tree))
                #expect(try !txn.delete(forKey: [UInt8]("missing"), in: tree))
            }
            #expect(engine.latestVersion == 1)
        }
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        try engine.read { txn in
            let tree = try #require(try txn.tree(named: "people"))
            #expect(try txn.value(forKey: [UInt8]("1"), in: tree) == [UInt8]("Ada"))
            #expect(try txn.value(forKey: [UInt8]("2"), in: tree) == nil)
            #expect(try txn.value(forKey: [UInt8]("empty"), in: tree) == [])
            #expect(try txn.count(in: tree) == 2)
            #expect(try txn.tree(named: "nobody") == nil)
        }
        #expect(try engine.verify().isHealthy)
    }

    @Test func rollbackAndThrowingWritesLeaveNoTrace() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"))
        defer { engine.close() }
        try engine.write { txn in _ = try txn.createTree(named: "t") }
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try engine.write { txn in
                try txn.put([1], forKey: [1], in: try txn.createTree(named: "t"))
                throw Boom()
            }
        }
        let txn = try engine.beginWrite()
        try txn.put([2], forKey: [2], in: try txn.createTree(named: "t"))
        txn.rollback()
        #expect(throws: StorageError.transactionClosed) { try txn.commit() }
        try engine.read { txn in
            let tree = try #require(try txn.tree(named: "t"))
            let count = try txn.count(in: tree)
            #expect(count == 0)
        }
        #expect(engine.latestVersion == 1)
    }

    @Test func keyLimitsAreTypedErrors() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"))
        defer { engine.close() }
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            #expect(throws: StorageError.invalidKey(length: 0, maximum: txn.maximumKeySize)) { try txn.put([1], forKey: [], in: tree) }
            let long = [UInt8](repeating: 1, count: txn.maximumKeySize + 1)
            #expect(throws: StorageError.invalidKey(length: long.count, maximum: txn.maximumKeySize)) { try txn.put([1], forKey: long, in: tree) }
            try txn.put([1], forKey: [UInt8](repeating: 2, count: txn.maximumKeySize), in: tree)
            #expect(throws: StorageError.invalidTreeName("")) { try txn.createTree(named: "") }
        }
        #expect(try engine.verify().isHealthy)
    }

    @Test func cursorsWalkBothWaysAndSeek() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        let keys = (0..<5000).map { [UInt8](String(format: "k%06d", $0 * 2)) }
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            for key in keys.shuffled(using: &rng) { try txn.put(key, forKey: key, in: tree) }
        }
        try engine.read { txn in
            let tree = try #require(try txn.tree(named: "t"))
            let cursor = try txn.makeCursor(on: tree)
            var forward: [[UInt8]] = []
            var more = try cursor.first()
            while more { forward.append([UInt8](cursor.key)); #expect([UInt8](cursor.value) == [UInt8](cursor.key)); more = try cursor.next() }
            #expect(forward == keys)
            var backward: [[UInt8]] = []
            more = try cursor.last()
            while more { backward.append([UInt8](cursor.key)); more = try cursor.previous() }
            #expect(backward == keys.reversed())
            // Seek lands on the first key ≥ the target, including between keys and past the end.
            #expect(try cursor.seek(to: [UInt8]("k000101")))
            #expect([UInt8](cursor.key) == [UInt8]("k000102"))
            #expect(try cursor.seek(to: [UInt8]("k000100")))
            #expect([UInt8](cursor.key) == [UInt8]("k000100"))
            #expect(try !cursor.seek(to: [UInt8]("z")))
            #expect(try cursor.seek(toLast: [UInt8]("k000101")))
            #expect([UInt8](cursor.key) == [UInt8]("k000100"))
            var range: [[UInt8]] = []
            try txn.forEach(in: tree, from: [UInt8]("k000010"), to: [UInt8]("k000020")) { key, _ in range.append([UInt8](key)); return true }
            #expect(range == [[UInt8]("k000010"), [UInt8]("k000012"), [UInt8]("k000014"), [UInt8]("k000016"), [UInt8]("k000018"), [UInt8]("k000020")])
            var reversed: [[UInt8]] = []
            try txn.forEach(in: tree, from: [UInt8]("k000021"), to: [UInt8]("k000016"), reverse: true) { key, _ in reversed.append([UInt8](key)); return true }
            #expect(reversed == [[UInt8]("k000020"), [UInt8]("k000018"), [UInt8]("k000016")])
        }
    }

    @Test func cursorInWriteTransactionSeesWritesAndIsInvalidatedByThem() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"))
        defer { engine.close() }
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            for i in 0..<300 { try txn.put([UInt8(i % 256)], forKey: [UInt8](String(format: "%04d", i)), in: tree) }
        }
        try engine.write { txn in
            let tree = try #require(try txn.tree(named: "t"))
            try txn.put([9], forKey: [UInt8]("0150a"), in: tree)
            let cursor = try txn.makeCursor(on: tree)
            #expect(try cursor.seek(to: [UInt8]("0150")))
            #expect(try cursor.next())
            #expect([UInt8](cursor.key) == [UInt8]("0150a"))
            try txn.put([1], forKey: [UInt8]("x"), in: tree)
            #expect(throws: StorageError.cursorInvalidated) { try cursor.next() }
        }
    }

    @Test func valuesLargerThanAPage() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"))
        defer { engine.close() }
        let sizes = [0, 1, 900, 1000, 4000, 4096, 5000, 70_000, 1 << 20]
        let values = sizes.map { size in (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ size) } }
        try engine.write { txn in
            let tree = try txn.createTree(named: "blobs")
            for (i, value) in values.enumerated() { try txn.put(value, forKey: [UInt8(i)], in: tree) }
        }
        try engine.read { txn in
            let tree = try #require(try txn.tree(named: "blobs"))
            for (i, value) in values.enumerated() { #expect(try txn.value(forKey: [UInt8(i)], in: tree) == value) }
        }
        // Overwrite big with small and small with big, then delete: no page may leak.
        try engine.write { txn in
            let tree = try txn.createTree(named: "blobs")
            try txn.put([1, 2, 3], forKey: [UInt8(8)], in: tree)
            try txn.put(values[7], forKey: [UInt8(0)], in: tree)
            try txn.delete(forKey: [UInt8(6)], in: tree)
        }
        try engine.read { txn in
            let tree = try #require(try txn.tree(named: "blobs"))
            #expect(try txn.value(forKey: [UInt8(8)], in: tree) == [1, 2, 3])
            #expect(try txn.value(forKey: [UInt8(0)], in: tree) == values[7])
            #expect(try txn.value(forKey: [UInt8(6)], in: tree) == nil)
        }
        let report = try engine.verify()
        #expect(report.isHealthy, "\(report)")
    }

    @Test func manyTreesCreateAndDrop() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"))
        defer { engine.close() }
        try engine.write { txn in
            for t in 0..<40 {
                let tree = try txn.createTree(named: "tree-\(t)")
                for i in 0..<(t * 20) { try txn.put([UInt8(t)], forKey: [UInt8](String(i)), in: tree) }
            }
        }
        try engine.write { txn in
            for t in stride(from: 0, to: 40, by: 2) { #expect(try txn.dropTree(named: "tree-\(t)")) }
            #expect(try !txn.dropTree(named: "tree-0"))
            let again = try txn.createTree(named: "tree-0")  // re-created empty in the same transaction
            #expect(try txn.count(in: again) == 0)
        }
        try engine.read { txn in
            let names = try txn.treeNames()
            #expect(names.count == 21)
            #expect(names.contains("tree-0") && !names.contains("tree-2") && names.contains("tree-39"))
            #expect(try txn.count(in: try #require(try txn.tree(named: "tree-39"))) == 780)
        }
        let report = try engine.verify()
        #expect(report.isHealthy, "\(report)")
        #expect(report.treeCount == 21)
    }

    @Test func splitsAndMergesKeepTheTreeSmall() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        var keys = (0..<20_000).map { [UInt8](String(format: "%08d", $0)) }
        keys.shuffle(using: &rng)
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            for key in keys { try txn.put([UInt8](repeating: 7, count: 100), forKey: key, in: tree) }
        }
        let full = try engine.verify()
        #expect(full.isHealthy, "\(full)")
        #expect(full.treePages > 500)
        // Delete all but ten, in several commits, in random order.
        for chunk in stride(from: 10, to: keys.count, by: 4000) {
            try engine.write { txn in
                let tree = try #require(try txn.tree(named: "t"))
                for key in keys[chunk..<min(chunk + 4000, keys.count)] { #expect(try txn.delete(forKey: key, in: tree)) }
            }
        }
        let small = try engine.verify()
        #expect(small.isHealthy, "\(small)")
        #expect(small.entryCount == 10)
        // The catalog page, and for the tree at most a root and two leaves: merging only ever
        // looks at nodes a commit touched, so two small untouched siblings may survive.
        #expect(small.treePages <= 4, "ten small entries should fit in a few pages: \(small)")
        try engine.read { txn in
            let tree = try #require(try txn.tree(named: "t"))
            for key in keys.prefix(10) { #expect(try txn.value(forKey: key, in: tree) != nil) }
        }
    }

    @Test func snapshotsAreIsolated() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"))
        defer { engine.close() }
        try engine.write { txn in try txn.put([1], forKey: [UInt8]("a"), in: try txn.createTree(named: "t")) }
        let old = try engine.beginRead()
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            try txn.put([2], forKey: [UInt8]("a"), in: tree)
            try txn.put([3], forKey: [UInt8]("b"), in: tree)
        }
        let tree = try #require(try old.tree(named: "t"))
        #expect(try old.value(forKey: [UInt8]("a"), in: tree) == [1])
        #expect(try old.value(forKey: [UInt8]("b"), in: tree) == nil)
        #expect(old.version == 1)
        #expect(engine.activeReaderCount == 1)
        old.close()
        #expect(engine.activeReaderCount == 0)
        #expect(throws: StorageError.transactionClosed) { try old.value(forKey: [UInt8]("a"), in: tree) }
        let latest = try engine.read { txn in try txn.value(forKey: [UInt8]("a"), in: #require(try txn.tree(named: "t"))) }
        #expect(latest == [2])
    }

    /// A commit's trees (`committedTree`) give the next write transaction handles without a
    /// catalog look-up only if it starts from the version that commit made: once another
    /// commit moved the tree, the old root must be refused (the new entry would be missed).
    @Test func aCommittedTreeIsTakenOnlyFromTheVersionItsCommitMade() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"))
        defer { engine.close() }
        let first = try engine.beginWrite()
        let tree = try first.createTree(named: "t")
        try first.put([1], forKey: [1], in: tree)
        #expect(first.committedTree(tree) == nil)  // not committed yet
        try first.commit()
        let committed = try #require(first.committedTree(tree))
        #expect(committed.version == first.committingVersion)
        #expect(committed.name == "t")

        // From the version `first` made: taken, and it reads what the commit wrote.
        let second = try engine.beginWrite()
        let carried = try #require(try second.tree(committed: committed))
        #expect(try second.value(forKey: [1], in: carried) == [1])
        for key in UInt8(2)...200 { try second.put([UInt8](repeating: key, count: 40), forKey: [key], in: carried) }
        try second.commit()
        let moved = try #require(second.committedTree(carried))
        #expect(moved.version == committed.version + 1)

        // From the version `second` made: the first commit's tree is stale and refused; the
        // second's is taken and sees every entry.
        let third = try engine.beginWrite()
        #expect(try third.tree(committed: committed) == nil)
        let current = try #require(try third.tree(committed: moved))
        #expect(try third.count(in: current) == 200)
        #expect(try third.value(forKey: [200], in: current) == [UInt8](repeating: 200, count: 40))
        third.rollback()
        #expect(third.committedTree(current) == nil)  // rolled back: nothing committed

        // A transaction with nothing to write makes no version and carries nothing.
        let empty = try engine.beginWrite()
        _ = try empty.tree(named: "t")
        let handle = try #require(try empty.tree(named: "t"))
        try empty.commit()
        #expect(empty.committedTree(handle) == nil)
    }

    @Test func openingTwiceInOneProcessSharesTheEngine() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let first = try StorageEngine.open(path: dir.file("db.strata"))
        let second = try StorageEngine.open(path: dir.file("db.strata"))
        #expect(first === second)
        try first.write { txn in _ = try txn.createTree(named: "t") }
        first.close()
        // Still usable through the second opener.
        try second.write { txn in try txn.put([1], forKey: [1], in: try txn.createTree(named: "t")) }
        second.close()
        #expect(throws: StorageError.engineClosed) { try second.beginRead() }
    }

    @Test func asyncWritersQueueWithoutBlockingThreads() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    for i in 0..<20 {
                        try await engine.write { txn in
                            try txn.put([UInt8(task)], forKey: [UInt8(task), UInt8(i)], in: try txn.createTree(named: "t"))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(engine.latestVersion == 320)
        let count = try engine.read { txn in try txn.count(in: #require(try txn.tree(named: "t"))) }
        #expect(count == 320)
    }

    @Test func compactedCopyIsSmallerAndEqual() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let engine = try StorageEngine.open(path: dir.file("db.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            for i in 0..<20_000 { try txn.put([UInt8](repeating: UInt8(i % 200), count: 100), forKey: [UInt8](String(i)), in: tree) }
            try txn.put([UInt8](repeating: 1, count: 50_000), forKey: [UInt8]("big"), in: try txn.createTree(named: "other"))
        }
        try engine.write { txn in
            let tree = try txn.createTree(named: "t")
            for i in stride(from: 0, to: 20_000, by: 2) { try txn.delete(forKey: [UInt8](String(i)), in: tree) }
        }
        let copyPath = dir.file("copy.strata")
        try engine.copyCompacted(to: copyPath)
        #expect(throws: StorageError.self) { try engine.copyCompacted(to: copyPath) }
        let copy = try StorageEngine.open(path: copyPath)
        defer { copy.close() }
        let report = try copy.verify()
        #expect(report.isHealthy, "\(report)")
        #expect(report.freePages + report.pendingPages <= 2)
        let original = try engine.verify()
        #expect(report.pageCount < original.pageCount)
        try engine.read { a in
            try copy.read { b in
                let (t1, t2) = (try contents(of: "t", in: a), try contents(of: "t", in: b))
                let (o1, o2) = (try contents(of: "other", in: a), try contents(of: "other", in: b))
                #expect(t1 == t2 && t1.count == 10_000)
                #expect(o1 == o2 && o1.count == 1)
            }
        }
    }
}

nonisolated(unsafe) private var rng = SplitMix64(seed: 42)
