// Small and full volumes: a new database fits a small volume (the log's preallocation takes
// only room to spare, and gives back what it wrote when it fails), and a full database can
// always be made emptier by deleting (the delete reserve, SpaceReserve.swift). On real volumes
// (tmpfs and ext4, mounted as root) where the system allows, and on the simulated disk.

import Foundation
import Testing
@testable import StrataStorage

/// A full volume's error: `StorageError.ioFailure` with ENOSPC.
private func isDiskFull(_ error: any Error) -> Bool {
    if case StorageError.ioFailure(_, let code) = error { return code == ENOSPC }
    return false
}

/// The keys a test wrote and their values, read back and compared after each phase. Keys are
/// numbered in the order they were made, which is also their order in the tree.
private struct KeyModel {
    private(set) var values: [[UInt8]: [UInt8]] = [:]
    /// The numbers of the keys stored, ascending.
    private var numbers: [Int] = []
    var generator: SplitMix64
    var next = 0

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    static func key(_ number: Int) -> [UInt8] { Array(String(format: "k%08d", number).utf8) }

    mutating func newEntries(_ count: Int, length: Int) -> [([UInt8], [UInt8])] {
        (0..<count).map { _ in
            defer { next += 1 }
            return (Self.key(next), (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
    }

    /// Records entries `newEntries` made, once committed.
    mutating func insert(_ entries: [([UInt8], [UInt8])]) {
        for (key, value) in entries {
            if values.updateValue(value, forKey: key) == nil, let number = Int(String(decoding: key.dropFirst(), as: UTF8.self)) {
                numbers.append(number)
            }
        }
    }

    /// Records keys deleted, once committed.
    mutating func remove(_ keys: [[UInt8]]) {
        for key in keys {
            guard values.removeValue(forKey: key) != nil, let number = Int(String(decoding: key.dropFirst(), as: UTF8.self)) else { continue }
            var low = 0, high = numbers.count
            while low < high {
                let mid = (low + high) / 2
                if numbers[mid] < number { low = mid + 1 } else { high = mid }
            }
            if low < numbers.count && numbers[low] == number { numbers.remove(at: low) }
        }
    }

    /// The `count` smallest keys: the oldest entries (a delete that empties whole leaves).
    func oldestKeys(_ count: Int) -> [[UInt8]] { numbers.prefix(count).map(Self.key) }

    /// The first half of the keys, in order.
    var firstHalf: [[UInt8]] { numbers.prefix(numbers.count / 2).map(Self.key) }

    /// `count` keys picked at random (scattered over the tree).
    mutating func randomKeys(_ count: Int) -> [[UInt8]] {
        guard !numbers.isEmpty else { return [] }
        return (0..<count).map { _ in Self.key(numbers[Int.random(in: 0..<numbers.count, using: &generator)]) }
    }

    func expectMatches(_ engine: StorageEngine, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let stored = try engine.read { try contents(of: "t", in: $0) }
        #expect(stored.count == values.count, "\(label): \(stored.count) keys stored, \(values.count) expected", sourceLocation: sourceLocation)
        #expect(stored == values, "\(label)", sourceLocation: sourceLocation)
        let report = try engine.verify()
        #expect(report.isHealthy, "\(label): \(report)", sourceLocation: sourceLocation)
    }
}

/// Commits `count` new entries at a time until the volume is full; returns how many entries
/// went in. The commit that finds the volume full must fail with ENOSPC, having changed nothing.
private func fill(_ engine: StorageEngine, _ model: inout KeyModel, perCommit count: Int = 10, length: Int = 600,
                  limit: Int = 1_000_000, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
    var added = 0
    while added < limit {
        let entries = model.newEntries(count, length: length)
        do {
            try engine.write { txn in
                let tree = try txn.tree(named: "t") ?? txn.createTree(named: "t")
                for (key, value) in entries { try txn.put(value, forKey: key, in: tree) }
            }
        } catch {
            #expect(isDiskFull(error), "filling: \(error)", sourceLocation: sourceLocation)
            return added
        }
        model.insert(entries)
        added += count
    }
    return added
}

/// Deletes `keys` in one transaction; returns the error if it failed.
private func delete(_ keys: [[UInt8]], from engine: StorageEngine, _ model: inout KeyModel) -> (any Error)? {
    do {
        try engine.write { txn in
            let tree = try #require(try txn.tree(named: "t"))
            for key in keys { _ = try txn.delete(forKey: key, in: tree) }
        }
    } catch {
        return error
    }
    model.remove(keys)
    return nil
}

@Suite(.serialized, .offThePool, .enabled(if: SmallVolume.available, SmallVolume.unavailableReason))
struct FullDiskTests {
    static let volumes: [SmallVolume.Kind] = [.tmpfs(2), .tmpfs(4), .tmpfs(8), .tmpfs(16)] + (SmallVolume.ext4Available ? [.ext4(8)] : [])

    /// A new database on a small volume: the log's preallocation does not take the room the
    /// data needs (a 4 MiB preallocation would fill the volume, so every commit would fail,
    /// after a reopen too), commits fit, and the database reopens healthy.
    @Test(arguments: volumes)
    func aNewDatabaseFitsASmallVolume(_ kind: SmallVolume.Kind) throws {
        let volume = try SmallVolume(kind)
        defer { volume.unmount() }
        let path = volume.file("db")
        var model = KeyModel(seed: 1)
        do {
            let engine = try StorageEngine.open(path: path)
            defer { engine.close() }
            #expect(volume.size(of: "db-log") < CommitLog.capacity, "the log was preallocated on a \(kind.megabytes) MiB volume")
            let entries = model.newEntries(100, length: 100)
            try engine.write { txn in
                let tree = try txn.createTree(named: "t")
                for (key, value) in entries { try txn.put(value, forKey: key, in: tree) }
            }
            model.insert(entries)
            // Logged one-key commits too (the log grows as they need it).
            for (key, value) in model.newEntries(20, length: 100) {
                try engine.write { try $0.put(value, forKey: key, in: try #require(try $0.tree(named: "t"))) }
                model.insert([(key, value)])
            }
            try model.expectMatches(engine, "after the first commits")
        }
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        try model.expectMatches(engine, "reopened")
        let (key, value) = model.newEntries(1, length: 100)[0]
        try engine.write { try $0.put(value, forKey: key, in: try #require(try $0.tree(named: "t"))) }
        model.insert([(key, value)])
        try model.expectMatches(engine, "a commit after reopening")
    }

    /// On a volume with room to spare the log is still preallocated whole.
    @Test func aRoomyVolumeStillPreallocatesTheLog() throws {
        let volume = try SmallVolume(.tmpfs(32))
        defer { volume.unmount() }
        let engine = try StorageEngine.open(path: volume.file("db"))
        defer { engine.close() }
        #expect(volume.size(of: "db-log") == CommitLog.capacity)
    }

    /// Fill the volume until a commit fails with ENOSPC (the last commits logged, so a log
    /// generation pins its base); then every one of 50 small delete transactions commits
    /// (alternately the 5 oldest entries and 3 scattered ones, which rewrite several leaves),
    /// and inserts fit again in the room the emptied leaves made; after a reopen (a new
    /// engine knows nothing of the volume) small deletes still commit, one big delete does,
    /// and the room it made takes about as much again. The data and the file are checked
    /// after each phase. (Before the reserve: no delete committed once the volume was full.)
    @Test(arguments: volumes)
    func aFullVolumeIsMadeEmptierByDeleting(_ kind: SmallVolume.Kind) throws {
        let volume = try SmallVolume(kind)
        defer { volume.unmount() }
        let path = volume.file("db")
        var model = KeyModel(seed: 2)
        do {
            let engine = try StorageEngine.open(path: path)
            defer { engine.close() }
            let filled = try fill(engine, &model, perCommit: 40) + fill(engine, &model, perCommit: 5)
            try #require(filled > 0, "nothing fit on the volume")
            try model.expectMatches(engine, "full")

            var failures: [String] = []
            for round in 0..<50 {
                let keys = round % 2 == 0 ? model.oldestKeys(5) : model.randomKeys(3)
                if let error = delete(keys, from: engine, &model) { failures.append("delete \(round): \(error)") }
            }
            #expect(failures.isEmpty, "\(failures.count) of 50 small deletes failed on a full volume: \(failures.prefix(3))")
            try model.expectMatches(engine, "after the small deletes")

            // The 125 oldest entries deleted emptied about 20 leaves: 60 new entries fit.
            let added = try fill(engine, &model, perCommit: 5, limit: 60)
            #expect(added == 60, "only \(added) of 60 entries fit after the deletes")
            try model.expectMatches(engine, "after inserting again")
        }
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        try model.expectMatches(engine, "reopened")
        _ = try fill(engine, &model, perCommit: 5)

        var failures: [String] = []
        for round in 0..<20 {
            if let error = delete(model.randomKeys(3), from: engine, &model) { failures.append("delete \(round): \(error)") }
        }
        #expect(failures.isEmpty, "\(failures.count) of 20 small deletes failed after reopening: \(failures.prefix(3))")

        // One big delete: the first half of the keys.
        let half = model.firstHalf
        let error = delete(half, from: engine, &model)
        #expect(error == nil, "deleting \(half.count) entries at once failed: \(error.map { "\($0)" } ?? "")")
        try model.expectMatches(engine, "after the big delete")
        let refilled = try fill(engine, &model, perCommit: 40)
        #expect(refilled >= half.count * 3 / 4, "\(half.count) entries deleted, then only \(refilled) fit")
        try model.expectMatches(engine, "full again")
    }
}

/// The same on the simulated disk, which also checks what a power cut leaves.
@Suite struct FullDiskModelTests {
    static let options = StorageOptions(durability: .full, pageSize: 4096, maximumFileSize: 64 << 20, maximumReaders: 8)

    /// Preallocation needs room to spare: with 10 MiB free (less than the log and four times
    /// its capacity) the log is not preallocated, and grows as records need it; with 64 MiB
    /// free it is.
    @Test func preallocationNeedsRoomToSpare() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let tight = CommitLogTests.Disks()
        tight.log.reportFreeSpace(10 << 20)
        let engine = try tight.open(directory.file("tight"))
        #expect(try tight.log.size() == 0)
        try engine.write { try $0.put([1], forKey: [1], in: try $0.createTree(named: "t")) }
        try engine.write { try $0.put([2], forKey: [2], in: try #require(try $0.tree(named: "t"))) }
        #expect(engine.state.withLock { $0.latestMeta.isLogged })
        #expect(try tight.log.size() == CommitLog.growthStep)
        engine.close()

        let roomy = CommitLogTests.Disks()
        roomy.log.reportFreeSpace(64 << 20)
        let second = try roomy.open(directory.file("roomy"))
        defer { second.close() }
        #expect(try roomy.log.size() == CommitLog.capacity)
    }

    /// A preallocation the disk cuts short is given back: the log is as long as before it (the zeros
    /// written before the disk filled up are not kept).
    @Test func aPreallocationCutShortIsGivenBack() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = CommitLogTests.Disks()
        disks.log.failWrites(after: Int(CommitLog.growthStep) + 100)
        let engine = try disks.open(directory.file("lock"))
        defer { engine.close() }
        #expect(try disks.log.size() == 0)
        disks.log.clearFaults()
        try engine.write { try $0.put([1], forKey: [1], in: try $0.createTree(named: "t")) }
        try engine.write { try $0.put([2], forKey: [2], in: try #require(try $0.tree(named: "t"))) }
        #expect(engine.state.withLock { $0.latestMeta.isLogged })
    }

    /// A commit whose record needs the log to grow, on a volume that refuses, commits without
    /// the log (syncing the database file), and the engine goes on working; everything it
    /// acknowledged survives a power cut.
    @Test func aCommitWhoseLogCannotGrowCommitsWithoutIt() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = CommitLogTests.Disks()
        disks.log.reportFreeSpace(1 << 20)  // too little to preallocate
        let engine = try disks.open(directory.file("lock"))
        disks.log.failWritesExtendingFile(code: ENOSPC)
        try engine.write { try $0.put([0], forKey: [0], in: try $0.createTree(named: "t")) }
        for i in 1...20 as ClosedRange<UInt8> {
            try engine.write { try $0.put([i], forKey: [i], in: try #require(try $0.tree(named: "t"))) }
        }
        #expect(try disks.log.size() == 0, "the log grew on a full volume")
        #expect(!engine.state.withLock { $0.latestMeta.isLogged })
        let crashed = disks.crash(seed: 5)
        engine.close()
        let reopened = try crashed.open(directory.file("reopen"))
        defer { reopened.close() }
        let stored = try reopened.read { try contents(of: "t", in: $0) }
        #expect(stored == Dictionary(uniqueKeysWithValues: (0...20 as ClosedRange<UInt8>).map { ([$0], [$0]) }))
        #expect(try reopened.verify().isHealthy)
    }

    /// The disk refuses to grow the database file: a commit that adds data fails with ENOSPC
    /// and changes nothing, while deletes (logged generation or not) commit, inserts then
    /// reuse the room they made, and after power cuts the file holds exactly the last
    /// acknowledged version.
    @Test(arguments: [false, true])
    func deletesCommitWhenTheFileCannotGrow(logged: Bool) throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let disks = CommitLogTests.Disks()
        var options = Self.options
        options.logsCommits = logged
        let engine = try disks.open(directory.file("lock"), options: options)
        defer { engine.close() }
        var model = KeyModel(seed: 3)
        for _ in 0..<60 {
            let entries = model.newEntries(10, length: 300)
            try engine.write { txn in
                let tree = try txn.tree(named: "t") ?? txn.createTree(named: "t")
                for (key, value) in entries { try txn.put(value, forKey: key, in: tree) }
            }
            model.insert(entries)
        }
        #expect(engine.state.withLock { $0.latestMeta.isLogged } == logged)
        // A checkpoint makes the whole tree the base of the next log generation: logged
        // commits would keep every page of it they replace until the next checkpoint.
        try engine.checkpoint()
        disks.file.failWritesExtendingFile(code: ENOSPC)
        // Adding data fails cleanly once the reserve is all that is left.
        var refused = false
        for _ in 0..<200 where !refused {
            let entries = model.newEntries(10, length: 300)
            do {
                try engine.write { txn in
                    let tree = try #require(try txn.tree(named: "t"))
                    for (key, value) in entries { try txn.put(value, forKey: key, in: tree) }
                }
                model.insert(entries)
            } catch {
                #expect(isDiskFull(error), "\(error)")
                refused = true
            }
        }
        #expect(refused, "the file grew while the disk refused")
        try model.expectMatches(engine, "refused")
        var failures = 0
        // More small deletes than the reserve holds pages for: each writes 4–6 pages, which
        // the commit after it must be able to reuse.
        for round in 0..<100 {
            if delete(round % 2 == 0 ? model.oldestKeys(3) : model.randomKeys(2), from: engine, &model) != nil { failures += 1 }
            if round % 25 == 24 {
                let crashed = disks.crash(seed: UInt64(round))
                let reopened = try crashed.open(directory.file("crash-\(round)"), options: options)
                try model.expectMatches(reopened, "after a power cut at delete \(round)")
                reopened.close()
            }
        }
        #expect(failures == 0, "\(failures) of 100 deletes failed")
        let added = try fill(engine, &model, perCommit: 5, limit: 20)
        #expect(added == 20, "only \(added) of 20 entries fit after the deletes")
        try model.expectMatches(engine, "after inserting again")
        let crashed = disks.crash(seed: 99)
        let reopened = try crashed.open(directory.file("final"), options: options)
        defer { reopened.close() }
        try model.expectMatches(reopened, "after a last power cut")
    }
}
