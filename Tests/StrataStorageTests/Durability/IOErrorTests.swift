// I/O errors during a commit: a full disk (ENOSPC) at every point of a commit's writes and
// when the file grows, and a failed sync (EIO). Each must surface as
// `StorageError.ioFailure` with that errno, leave the previous version intact (in this
// process, after a process crash and after a power loss), and leave the engine usable once
// the disk works again.

import Foundation
import Testing
@testable import StrataStorage

@Suite struct IOErrorTests {
    static let options = StorageOptions(durability: .full, pageSize: 4096, maximumFileSize: 64 << 20, maximumReaders: 8)

    /// A database with a few commits, and the next commit to try.
    struct Fixture {
        let directory = TemporaryDirectory()
        let disk = SimulatedDisk()
        var model = EngineModel()
        var version: UInt64 = 0
        var next: [ModelOperation] = []
        private var openCount = 0

        /// `large`: the next commit writes more than 252 runs (two syncs). `grow`: it extends the file.
        init(large: Bool = false, grow: Bool = true) throws {
            let engine = try StorageEngine.open(file: disk, lockPath: directory.file("setup.lock"), options: IOErrorTests.options)
            defer { engine.close() }
            var generator = WorkloadGenerator(seed: 21)
            for _ in 0..<4 {
                let operations = generator.commit(after: model)
                try engine.write { try $0.apply(operations) }
                model = model.applying(operations)
            }
            version = engine.latestVersion
            next = generator.commit(after: model, large: large)
            if grow { next += [.createTree("grow"), .put(tree: "grow", key: [1], value: [UInt8](repeating: 0xCD, count: 40_000))] }
        }

        mutating func open(_ disk: SimulatedDisk) throws -> StorageEngine {
            openCount += 1
            return try StorageEngine.open(file: disk, lockPath: directory.file("engine-\(openCount).lock"), options: IOErrorTests.options)
        }

        /// Bytes the next commit writes when nothing fails.
        mutating func bytesOfNextCommit() throws -> Int {
            let copy = disk.crashProcess()
            let engine = try open(copy)
            defer { engine.close() }
            let before = copy.bytesWritten
            try engine.write { try $0.apply(next) }
            return copy.bytesWritten - before
        }

        /// The engine, and disks a crash now would leave, all hold the version before `next`.
        mutating func expectPreviousVersion(_ engine: StorageEngine, on disk: SimulatedDisk, _ label: String,
                                            sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(engine.latestVersion == version, "\(label)", sourceLocation: sourceLocation)
            #expect(try EngineModel.read(from: engine) == model, "\(label)", sourceLocation: sourceLocation)
            #expect(try engine.verify().isHealthy, "\(label)", sourceLocation: sourceLocation)
            let images = [("process crash", disk.crashProcess())] + (0..<3).map { ("power loss \($0)", disk.crash(seed: UInt64($0))) }
            for (crash, image) in images {
                let reopened = try open(image)
                defer { reopened.close() }
                #expect(reopened.latestVersion == version, "\(label), \(crash)", sourceLocation: sourceLocation)
                #expect(try EngineModel.read(from: reopened) == model, "\(label), \(crash)", sourceLocation: sourceLocation)
                #expect(try reopened.verify().isHealthy, "\(label), \(crash)", sourceLocation: sourceLocation)
            }
        }

        /// Once the disk works again, `next` commits, is visible and survives a power loss.
        mutating func expectRecovery(_ engine: StorageEngine, on disk: SimulatedDisk, _ label: String,
                                     sourceLocation: SourceLocation = #_sourceLocation) throws {
            disk.clearFaults()
            let operations = next
            do {
                try engine.write { try $0.apply(operations) }
            } catch {
                Issue.record("\(label): the commit after the disk recovered failed: \(error)", sourceLocation: sourceLocation)
                return
            }
            let expected = model.applying(next)
            #expect(engine.latestVersion == version + 1, "\(label)", sourceLocation: sourceLocation)
            #expect(try EngineModel.read(from: engine) == expected, "\(label)", sourceLocation: sourceLocation)
            #expect(try engine.verify().isHealthy, "\(label)", sourceLocation: sourceLocation)
            let reopened = try open(disk.crash(seed: 42))
            defer { reopened.close() }
            #expect(try EngineModel.read(from: reopened) == expected, "\(label), after power loss", sourceLocation: sourceLocation)
        }
    }

    /// Expects `body` to throw `StorageError.ioFailure` with `code`.
    static func expectIOFailure(_ code: Int32, _ label: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(label): expected ioFailure(errno \(code)), but it succeeded", sourceLocation: sourceLocation)
        } catch StorageError.ioFailure(_, let found) {
            #expect(found == code, "\(label)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(label): expected ioFailure(errno \(code)), got \(error)", sourceLocation: sourceLocation)
        }
    }

    /// The disk fills up after 0, 1, 512, … bytes of the commit: inside a data page, between
    /// pages, at the meta page, inside it. Every point fails cleanly.
    @Test(arguments: [false, true])
    func diskFullAtEveryPointOfACommit(large: Bool) throws {
        var fixture = try Fixture(large: large)
        let total = try fixture.bytesOfNextCommit()
        let pageSize = Self.options.pageSize
        var budgets = Set([0, 1, 511, 512, pageSize, total - pageSize - 1, total - pageSize, total - pageSize + 512, total - 1])
        for step in stride(from: 0, to: total, by: max(total / 24, 1)) { budgets.insert(step) }
        for budget in budgets.sorted() where budget >= 0 && budget < total {
            let disk = fixture.disk.crashProcess()
            let engine = try fixture.open(disk)
            defer { engine.close() }
            disk.failWrites(after: budget, code: ENOSPC)
            let operations = fixture.next
            Self.expectIOFailure(ENOSPC, "disk full after \(budget) of \(total) bytes") {
                try engine.write { try $0.apply(operations) }
            }
            try fixture.expectPreviousVersion(engine, on: disk, "disk full after \(budget) of \(total) bytes")
            try fixture.expectRecovery(engine, on: disk, "disk full after \(budget) of \(total) bytes")
        }
    }

    /// A meta write cut short inside its checksum never leaves a page that validates, even in
    /// the worst case: the bytes the cut leaves behind are exactly the new checksum's. (A meta
    /// write that kept the old bytes in the checksum field until the checksum's own write could
    /// leave such a page validating: a full disk one byte before the end of a commit would be
    /// adopted in 1 of 256 runs, depending on the random token.)
    @Test(arguments: 0..<4)
    func aMetaCutShortInItsChecksumNeverValidates(written: Int) throws {
        var fixture = try Fixture(large: false)
        let disk = fixture.disk.crashProcess()
        let engine = try fixture.open(disk)
        defer { engine.close() }
        let pageSize = Self.options.pageSize
        let location = engine.state.withLock { $0.latestMeta.selfPage } * UInt64(pageSize)
        // A valid meta image the page does not hold: the current one with its last byte
        // changed and its checksum recomputed.
        var image = [UInt8](repeating: 0, count: pageSize)
        try image.withUnsafeMutableBytes { try disk.read(into: $0, at: location) }
        image[pageSize - 1] ^= 0xA5
        let checksum = image.withUnsafeBytes { crc32c($0.baseAddress! + 4, count: pageSize - 4) }.littleEndian
        withUnsafeBytes(of: checksum) { for index in 0..<4 { image[index] = $0[index] } }
        // The page on disk already carries that checksum (and the old body).
        try withUnsafeBytes(of: checksum) { try disk.write([$0], at: location) }
        disk.failWrites(after: pageSize + written)
        #expect(throws: (any Error).self) {
            try image.withUnsafeBytes { try engine.writeMeta($0.baseAddress!, at: location) }
        }
        var page = [UInt8](repeating: 0, count: pageSize)
        try page.withUnsafeMutableBytes { try disk.read(into: $0, at: location) }
        #expect(Array(page[4...]) == Array(image[4...]), "the body was written")
        let stored = page.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        let computed = page.withUnsafeBytes { crc32c($0.baseAddress! + 4, count: pageSize - 4) }.littleEndian
        #expect(stored != computed, "a meta cut after \(written) of its 4 checksum bytes validates")
    }

    /// The same for a grouped commit after a grouped one: its meta is a record written to the
    /// page its predecessor announced, which may lie past the end of the file (and past what
    /// the engine has mapped) when the disk fills before it is written.
    @Test func diskFullAtEveryPointOfAGroupedCommit() throws {
        var fixture = try Fixture(large: false, grow: false)
        // One grouped commit first, so that the next one can chain a record to it.
        let lead: [ModelOperation] = [.createTree("lead"), .put(tree: "lead", key: [7], value: [1, 2, 3])]
        do {
            let engine = try fixture.open(fixture.disk)
            defer { engine.close() }
            let transaction = try engine.beginWrite()
            try transaction.apply(lead)
            try transaction.commit(grouped: true)
            try engine.synchronize(through: engine.latestVersion)
            fixture.model = fixture.model.applying(lead)
            fixture.version = engine.latestVersion
        }
        // A small commit: its pages fit in free space, so nothing it writes before its record
        // extends the file to cover the record's page.
        let operations: [ModelOperation] = [.put(tree: "lead", key: [8], value: [4, 5])]
        fixture.next = operations
        let probe = fixture.disk.crashProcess()
        let total: Int
        do {
            let engine = try fixture.open(probe)
            defer { engine.close() }
            let before = probe.bytesWritten
            let transaction = try engine.beginWrite()
            try transaction.apply(operations)
            try transaction.commit(grouped: true)
            total = probe.bytesWritten - before
            #expect(engine.state.withLock { $0.latestMeta.isRecord }, "the probe commit chained a record")
        }
        var budgets = Set([0, 1, 511, 512, total - 4096 - 1, total - 4096, total - 4095, total - 5, total - 4, total - 1])
        for step in stride(from: 0, to: total, by: max(total / 16, 1)) { budgets.insert(step) }
        for budget in budgets.sorted() where budget >= 0 && budget < total {
            let disk = fixture.disk.crashProcess()
            let engine = try fixture.open(disk)
            defer { engine.close() }
            disk.failWrites(after: budget, code: ENOSPC)
            Self.expectIOFailure(ENOSPC, "grouped, disk full after \(budget) of \(total) bytes") {
                let transaction = try engine.beginWrite()
                try transaction.apply(operations)
                try transaction.commit(grouped: true)
            }
            try fixture.expectPreviousVersion(engine, on: disk, "grouped, disk full after \(budget) of \(total) bytes")
            try fixture.expectRecovery(engine, on: disk, "grouped, disk full after \(budget) of \(total) bytes")
        }
    }

    @Test(arguments: [false, true])
    func diskFullWhenTheFileGrows(large: Bool) throws {
        var fixture = try Fixture(large: large)
        let disk = fixture.disk
        let engine = try fixture.open(disk)
        defer { engine.close() }
        disk.failWritesExtendingFile(code: ENOSPC)
        let operations = fixture.next
        Self.expectIOFailure(ENOSPC, "growth") { try engine.write { try $0.apply(operations) } }
        try fixture.expectPreviousVersion(engine, on: disk, "growth")
        // While the disk stays full, a commit that needs no new space (it deletes one entry)
        // either commits or fails the same clean way. (It can fail: a commit's meta record
        // goes to a stretch reserved for it, past the end of the file when no free run is long
        // enough.)
        let tree = fixture.model.trees.keys.sorted().first { !fixture.model.trees[$0]!.isEmpty }!
        let key = fixture.model.trees[tree]!.keys.min { $0.lexicographicallyPrecedes($1) }!
        let small: [ModelOperation] = [.delete(tree: tree, key: key)]
        do {
            try engine.write { try $0.apply(small) }
            fixture.model = fixture.model.applying(small)
            fixture.version += 1
            #expect(try EngineModel.read(from: engine) == fixture.model)
            print("IOErrorTests: a delete on a full disk committed (large: \(large))")
        } catch StorageError.ioFailure(_, ENOSPC) {
            try fixture.expectPreviousVersion(engine, on: disk, "delete on a full disk")
            print("IOErrorTests: a delete on a full disk failed with ENOSPC (large: \(large))")
        }
        try fixture.expectRecovery(engine, on: disk, "growth")
    }

    /// fsync fails: the final sync of a one-sync commit, or the data sync of a two-sync one.
    /// The writes it covered never reach the disk (Linux drops them), so the engine must not
    /// count on them.
    @Test(arguments: [false, true])
    func syncFailure(large: Bool) throws {
        var fixture = try Fixture(large: large)
        let disk = fixture.disk
        let engine = try fixture.open(disk)
        defer { engine.close() }
        disk.failNextSync(code: EIO)
        let operations = fixture.next
        Self.expectIOFailure(EIO, "sync") { try engine.write { try $0.apply(operations) } }
        try fixture.expectPreviousVersion(engine, on: disk, "sync")
        try fixture.expectRecovery(engine, on: disk, "sync")
    }
}
