// A damaged commit log (CommitLogDamage.swift): every mutation of the log of a database whose
// writer died with logged commits to replay opens with a typed error, or at exactly the newest
// committed version; never silently at an older one, except for a torn tail (damage confined
// to the last record, which a crash can leave) when no lock file shows the commit was
// published. The recovery option then opens at exactly the last good version with its
// contents, reports what it gave up, and leaves a database that opens normally. The log of a
// database closed cleanly may be damaged any way: it is history, and opening is unaffected.
//
// Each sample's log is mutated at every block of its records and the block after them: a bit
// flipped, the block zeroed, the block swapped with the next one, the log cut short there.
// By default one seeded workload; STRATA_STRESS=N runs 12 * N workloads (thousands of cases).

import Foundation
import Testing
@testable import StrataStorage

@Suite struct CommitLogDamageTests {
    static let options = CommitLogTests.options

    /// A database and its log as a process left them, and what every version holds.
    struct Sample {
        var file: [UInt8]
        var log: [UInt8]
        /// The lock file's bytes as the process left it.
        var lock: [UInt8]
        var models: [UInt64: EngineModel]
        /// The state the log's generation starts from, and its newest commit.
        var base: UInt64
        var newest: UInt64
        /// The generation's records: where each starts and how many blocks it takes.
        var records: [(offset: UInt64, blocks: Int, txid: UInt64)]

        var recordsEnd: UInt64 { records.last.map { $0.offset + UInt64($0.blocks) * CommitLog.blockSize } ?? 0 }

        /// Disks holding the sample, with `log` in place of its log.
        func disks(log: [UInt8]) -> CommitLogTests.Disks {
            var disks = CommitLogTests.Disks()
            disks.file = SimulatedDisk(image: file)
            disks.log = SimulatedDisk(image: log, capacity: 16 << 20)
            return disks
        }
    }

    /// Writes a database: a few commits made durable in the file (a checkpoint), then
    /// `commits` logged ones, some of them records of two or three blocks. `clean`: the engine
    /// is closed (its last close checkpoints); otherwise the images are taken as a killed
    /// process leaves them.
    static func sample(seed: UInt64, commits: Int, clean: Bool, directory: TemporaryDirectory, entries: Int = 40) throws -> Sample {
        var random = SplitMix64(seed: seed)
        let disks = CommitLogTests.Disks()
        let lockPath = directory.file("sample-\(seed)-\(clean)-lock")
        let engine = try disks.open(lockPath)
        var model = EngineModel()
        var models: [UInt64: EngineModel] = [0: model]
        func commit(_ operations: [ModelOperation]) throws {
            try engine.write { try $0.apply(operations) }
            model = model.applying(operations)
            models[engine.latestVersion] = model
        }
        try commit([.createTree("t")] + (0..<entries).map { .put(tree: "t", key: Array("k\($0)".utf8), value: Array("v\($0)-\(seed)".utf8)) })
        try engine.checkpoint()
        let base = engine.latestVersion
        for index in 0..<commits {
            let key = Array("k\(Int.random(in: 0..<60, using: &random))".utf8)
            let size = index % 5 == 3 ? Int.random(in: 4_200...9_000, using: &random) : Int.random(in: 1...300, using: &random)
            let value = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            try commit(index % 7 == 5 ? [.delete(tree: "t", key: key)] : [.put(tree: "t", key: key, value: value)])
        }
        #expect(engine.state.withLock { $0.latestMeta.isLogged }, "seed \(seed): the commits were logged")
        let newest = engine.latestVersion
        // As the process leaves them when it is killed (the page cache survives), or after it
        // closed.
        if clean { engine.close() }
        let (file, log) = (disks.file.volatileImage, disks.log.volatileImage)
        let lock = try [UInt8](Data(contentsOf: URL(fileURLWithPath: lockPath)))
        if !clean { engine.close() }
        let generation = try #require(try CommitLog(file: SimulatedDisk(image: log, capacity: 16 << 20)).readGeneration())
        let records = generation.records.map { record in
            (offset: record.offset, blocks: CommitLog.paddedLength(CommitLog.headerSize + record.body.count) / Int(CommitLog.blockSize), txid: record.txid)
        }
        if !clean {
            #expect(generation.first.baseTxid == base && records.last?.txid == newest, "seed \(seed): the log holds every logged commit")
        }
        return Sample(file: file, log: log, lock: lock, models: models, base: base, newest: newest, records: records)
    }

    /// One way to damage the log.
    enum Mutation: CustomStringConvertible {
        case flip(byte: Int, bit: Int)
        case zero(block: Int)
        case swap(block: Int)
        case cut(at: Int)

        var description: String {
            switch self {
            case .flip(let byte, let bit): "bit \(bit) of byte \(byte) flipped"
            case .zero(let block): "block \(block) zeroed"
            case .swap(let block): "blocks \(block) and \(block + 1) swapped"
            case .cut(let at): "cut at \(at)"
            }
        }

        /// The first byte it changes.
        var firstByte: Int {
            switch self {
            case .flip(let byte, _): byte
            case .zero(let block), .swap(let block): block * Int(CommitLog.blockSize)
            case .cut(let at): at
            }
        }

        func apply(to log: [UInt8]) -> [UInt8] {
            var log = log
            let block = Int(CommitLog.blockSize)
            switch self {
            case .flip(let byte, let bit): log[byte] ^= UInt8(1 << bit)
            case .zero(let index): log.replaceSubrange(index * block..<(index + 1) * block, with: repeatElement(0, count: block))
            case .swap(let index):
                let first = Array(log[index * block..<(index + 1) * block])
                log.replaceSubrange(index * block..<(index + 1) * block, with: log[(index + 1) * block..<(index + 2) * block])
                log.replaceSubrange((index + 1) * block..<(index + 2) * block, with: first)
            case .cut(let at): log.removeSubrange(at...)
            }
            return log
        }
    }

    /// Every mutation of the sample's records and the block after them; bits chosen by `seed`.
    static func mutations(of sample: Sample, seed: UInt64) -> [Mutation] {
        var random = SplitMix64(seed: seed ^ 0xF1_1B)
        let block = Int(CommitLog.blockSize)
        let blocks = Int(sample.recordsEnd / CommitLog.blockSize) + 1
        var mutations: [Mutation] = []
        for index in 0..<blocks {
            // A bit of the block's first 64 bytes (a record's header, where one starts) and
            // one anywhere in it.
            mutations.append(.flip(byte: index * block + Int.random(in: 0..<64, using: &random), bit: Int.random(in: 0..<8, using: &random)))
            mutations.append(.flip(byte: index * block + Int.random(in: 0..<block, using: &random), bit: Int.random(in: 0..<8, using: &random)))
            mutations += [.zero(block: index), .swap(block: index), .cut(at: index * block)]
        }
        return mutations
    }

    /// Tallies of what the cases did.
    struct Outcomes {
        var exact = 0, tornTail = 0, logGone = 0, refused = 0, mismatch = 0
        var cases: Int { exact + tornTail + logGone + refused + mismatch }
    }

    /// Opens the sample with `mutation` applied, the lock file as the process left it when
    /// `keepLock`, and checks the result (see the file's comment).
    static func check(_ sample: Sample, _ mutation: Mutation, keepLock: Bool, clean: Bool, label: String,
                      directory: TemporaryDirectory, outcomes: inout Outcomes) throws {
        let log = mutation.apply(to: sample.log)
        var counter = 0
        func lockPath() throws -> String {
            counter += 1
            let path = directory.file("case-\(counter)-\(UUID().uuidString.prefix(6))")
            if keepLock { try Data(sample.lock).write(to: URL(fileURLWithPath: path)) }
            return path
        }
        let label = "\(label), \(mutation), lock \(keepLock ? "kept" : "lost")"
        let lastRecord = try #require(sample.records.last)
        do {
            let disks = sample.disks(log: log)
            let engine = try disks.open(try lockPath())
            defer { engine.close() }
            let version = engine.latestVersion
            let contents = try EngineModel.read(from: engine)
            #expect(engine.commitLogRecoveryReport == nil, "\(label)")
            if version == sample.newest {
                #expect(contents == sample.models[version], "\(label): the contents of version \(version)")
                outcomes.exact += 1
            } else if !clean && !keepLock && version == lastRecord.txid - 1 && mutation.firstByte >= Int(lastRecord.offset) {
                // A torn tail: what a crash can leave.
                #expect(contents == sample.models[version], "\(label): the contents of version \(version)")
                outcomes.tornTail += 1
            } else if !keepLock, case .cut(at: 0) = mutation, version == sample.base {
                // The whole log gone, and the lock file with it: nothing left to tell this from
                // a file copied without its log after a checkpoint, which must open.
                #expect(contents == sample.models[version], "\(label): the contents of version \(version)")
                outcomes.logGone += 1
            } else {
                Issue.record("\(label): opened silently at version \(version), not \(sample.newest)")
            }
        } catch StorageError.commitLogDamaged(let path, let lastGood, let lost, let reason) {
            // A log cut to nothing cannot show it was history: beside a database whose header
            // says its log was preallocated, it is refused whether or not the close was clean.
            let emptied: Bool
            if case .cut(at: 0) = mutation { emptied = true } else { emptied = false }
            #expect(!clean || emptied, "\(label): a cleanly closed database's log is history, but open found \(reason)")
            #expect(path.hasSuffix("(commit log)"), "\(label): \(path)")
            #expect(lastGood >= sample.base && lastGood <= sample.newest && lastGood + lost <= sample.newest, "\(label): last good \(lastGood), lost \(lost)")
            outcomes.refused += 1
            try checkRecovery(sample, log: log, lastGood: lastGood, lost: lost, lockPath: try lockPath(), label: label, directory: directory)
        } catch StorageError.commitLogMismatch {
            #expect(!clean, "\(label)")
            outcomes.mismatch += 1
        }
    }

    /// The recovery option opens the damaged sample at exactly `lastGood`, reports `lost`, and
    /// leaves a database that opens normally, even after a power cut.
    static func checkRecovery(_ sample: Sample, log: [UInt8], lastGood: UInt64, lost: UInt64, lockPath: String,
                              label: String, directory: TemporaryDirectory) throws {
        var options = Self.options
        options.commitLogRecovery = .openAtLastGoodVersion
        let disks = sample.disks(log: log)
        let engine = try disks.open(lockPath, options: options)
        #expect(engine.latestVersion == lastGood, "\(label): recovered to version \(engine.latestVersion), not \(lastGood)")
        #expect(try EngineModel.read(from: engine) == sample.models[lastGood], "\(label): the contents of version \(lastGood)")
        let report = try #require(engine.commitLogRecoveryReport, "\(label)")
        #expect(report.version == lastGood && report.lostCommits == lost, "\(label): \(report)")
        // (The stress run also reopens as a killed process would leave the files.)
        let images = (stress > 0 ? [disks.crashProcess()] : []) + [disks.crash(seed: lastGood)]
        engine.close()
        for (index, image) in images.enumerated() {
            let reopened = try image.open(lockPath + "-again-\(index)")
            defer { reopened.close() }
            #expect(reopened.latestVersion == lastGood && reopened.commitLogRecoveryReport == nil, "\(label): reopened \(index)")
            #expect(try EngineModel.read(from: reopened) == sample.models[lastGood], "\(label): reopened \(index)")
        }
    }

    static var stress: Int { ProcessInfo.processInfo.environment["STRATA_STRESS"].flatMap(Int.init) ?? 0 }
    static var workloads: Int { 12 * stress }

    @Test(arguments: [false, true])
    func everyMutationOfAKilledWritersLogIsRefusedOrHarmless(keepLock: Bool) throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        var outcomes = Outcomes()
        for seed in 0..<UInt64(max(1, Self.workloads)) {
            let sample = try Self.sample(seed: seed, commits: seed == 0 ? 14 : 8 + Int(seed % 30), clean: false, directory: directory)
            for mutation in Self.mutations(of: sample, seed: seed) {
                try Self.check(sample, mutation, keepLock: keepLock, clean: false, label: "seed \(seed)", directory: directory, outcomes: &outcomes)
            }
        }
        print("CommitLogDamageTests (killed, lock \(keepLock ? "kept" : "lost")): \(outcomes.cases) cases; \(outcomes.exact) exact, \(outcomes.tornTail) torn tails, \(outcomes.logGone) logs gone, \(outcomes.refused) refused, \(outcomes.mismatch) mismatches")
        #expect(outcomes.refused > outcomes.cases / 2)
        // A log cut to nothing is refused too: the database's header says how long it was.
        #expect(outcomes.logGone == 0)
        if keepLock { #expect(outcomes.tornTail == 0) }
    }

    @Test func everyMutationOfACleanlyClosedLogIsHarmless() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        var outcomes = Outcomes()
        for seed in 0..<UInt64(max(1, Self.workloads / 4)) {
            let sample = try Self.sample(seed: seed, commits: 10 + Int(seed % 20), clean: true, directory: directory)
            for (index, mutation) in Self.mutations(of: sample, seed: seed).enumerated() {
                // Both lock files for each mutation in the stress run, one or the other by default.
                for keepLock in Self.stress > 0 ? [false, true] : [index % 2 == 0] {
                    try Self.check(sample, mutation, keepLock: keepLock, clean: true, label: "clean seed \(seed)", directory: directory, outcomes: &outcomes)
                }
            }
        }
        // Every mutation opens at the newest version, but a log cut to nothing (refused).
        #expect(outcomes.exact + outcomes.refused == outcomes.cases && outcomes.exact > 0)
    }

    /// A crash can leave the last record half written or not written at all: replay ends
    /// before it without an error (when no lock file shows it was published).
    @Test func aTornTailOpensAtTheVersionBeforeIt() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let sample = try Self.sample(seed: 3, commits: 9, clean: false, directory: directory)
        let last = try #require(sample.records.last)
        let start = Int(last.offset)
        var halfWritten = sample.log
        halfWritten.replaceSubrange(start + 512..<start + Int(CommitLog.blockSize), with: repeatElement(0xEE, count: Int(CommitLog.blockSize) - 512))
        var unwritten = sample.log
        unwritten.replaceSubrange(start..<start + last.blocks * Int(CommitLog.blockSize), with: repeatElement(0, count: last.blocks * Int(CommitLog.blockSize)))
        for (index, log) in [halfWritten, unwritten].enumerated() {
            let engine = try sample.disks(log: log).open(directory.file("torn-\(index)"))
            defer { engine.close() }
            #expect(engine.latestVersion == last.txid - 1)
            #expect(try EngineModel.read(from: engine) == sample.models[last.txid - 1])
        }
        // The same tail, with the lock file that saw the last commit published: damage.
        let lockPath = directory.file("torn-lock")
        try Data(sample.lock).write(to: URL(fileURLWithPath: lockPath))
        #expect(throws: StorageError.self) { try sample.disks(log: unwritten).open(lockPath).close() }
        // An open that failed keeps the lock file's evidence for the next one.
        do {
            _ = try sample.disks(log: unwritten).open(lockPath)
            Issue.record("the second open accepted the damage")
        } catch StorageError.commitLogDamaged(_, let lastGood, let lost, _) {
            #expect(lastGood == last.txid - 1 && lost == 1)
        }
    }

    /// A log whose first record is gone, with valid records of its generation after it (their
    /// salt derived from the recovered state): refused, not read as a log with nothing to
    /// replay, read-only too (as `strata verify` and `dump` open).
    @Test func aDamagedFirstRecordIsRefusedEvenReadOnly() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let sample = try Self.sample(seed: 4, commits: 6, clean: false, directory: directory)
        let log = Mutation.zero(block: 0).apply(to: sample.log)
        var readOnly = Self.options
        readOnly.readOnly = true
        for options in [Self.options, readOnly] {
            do {
                _ = try sample.disks(log: log).open(directory.file("first-\(options.readOnly)"), options: options)
                Issue.record("opened (read-only: \(options.readOnly))")
            } catch StorageError.commitLogDamaged(_, let lastGood, let lost, _) {
                #expect(lastGood == sample.base && lost == sample.newest - sample.base)
            }
        }
        // The recovery option needs write access.
        readOnly.commitLogRecovery = .openAtLastGoodVersion
        #expect(throws: StorageError.self) { try sample.disks(log: log).open(directory.file("first-recover-ro"), options: readOnly).close() }
    }

    /// A log of another copy of the database is still `commitLogMismatch`; the recovery option
    /// opens the file as it is and erases that log.
    @Test func theRecoveryOptionOpensPastALogOfAnotherCopy() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let sample = try Self.sample(seed: 5, commits: 4, clean: false, directory: directory)
        // (Another shape: the base's meta differs, as it would not between two files of
        // the same contents at the same version.)
        let other = try Self.sample(seed: 6, commits: 4, clean: false, directory: directory, entries: 400)
        let mixed = sample
        #expect(throws: StorageError.self) { try mixed.disks(log: other.log).open(directory.file("mixed")).close() }
        var options = Self.options
        options.commitLogRecovery = .openAtLastGoodVersion
        let disks = mixed.disks(log: other.log)
        let engine = try disks.open(directory.file("mixed-recover"), options: options)
        defer { engine.close() }
        #expect(engine.latestVersion == sample.base)
        #expect(try EngineModel.read(from: engine) == sample.models[sample.base])
        #expect(engine.commitLogRecoveryReport?.lostCommits == 0)
        #expect(disks.log.durableImage.allSatisfy { $0 == 0 }, "the foreign log is erased")
    }

    /// Without damage the recovery option changes nothing: the whole log is replayed.
    @Test func theRecoveryOptionReplaysAnIntactLog() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let sample = try Self.sample(seed: 7, commits: 5, clean: false, directory: directory)
        var options = Self.options
        options.commitLogRecovery = .openAtLastGoodVersion
        let engine = try sample.disks(log: sample.log).open(directory.file("intact"), options: options)
        defer { engine.close() }
        #expect(engine.latestVersion == sample.newest && engine.commitLogRecoveryReport == nil)
        #expect(try EngineModel.read(from: engine) == sample.models[sample.newest])
    }

    /// A record's length claim counts only when intact; a record without one (written by an
    /// older build, or filling its last block) still replays.
    @Test func lengthClaimsCountOnlyWhenIntact() throws {
        func claim(bodyLength: Int, logLength: UInt64?, flipping byte: Int? = nil) throws -> UInt64? {
            let header = CommitLog.Header(salt: 7, txid: 3, baseTxid: 2, baseChecksum: 0, length: CommitLog.headerSize + bodyLength)
            let padded = CommitLog.paddedLength(header.length)
            let image = UnsafeMutableRawPointer.allocate(byteCount: padded, alignment: 4096)
            defer { image.deallocate() }
            CommitLog.encode(header, body: [UInt8](repeating: 1, count: bodyLength), logLength: logLength, into: image)
            var bytes = Array(UnsafeRawBufferPointer(start: image, count: padded)) + [UInt8](repeating: 0, count: 4096)
            if let byte { bytes[byte] ^= 0x10 }
            let generation = try CommitLog(file: SimulatedDisk(image: bytes)).readGeneration()
            return generation.map { $0.records.count == 1 ? $0.claimedLength : UInt64.max }
        }
        #expect(try claim(bodyLength: 10, logLength: 4 << 20) == 4 << 20)
        #expect(try claim(bodyLength: 5_000, logLength: 1 << 20) == 1 << 20)
        #expect(try claim(bodyLength: 10, logLength: 4 << 20, flipping: 4096 - 16) == 0, "a damaged claim is ignored")
        #expect(try claim(bodyLength: 10, logLength: 4 << 20, flipping: 4096 - 3) == 0, "a damaged claim is ignored")
        #expect(try claim(bodyLength: 10, logLength: nil) == 0)
        #expect(try claim(bodyLength: 4096 - CommitLog.headerSize - 8, logLength: 4 << 20) == 0, "no room for a claim")
    }

    /// A real writer process, SIGKILLed after logged commits, its files then damaged: a record
    /// zeroed in the middle of its log is refused; its last record zeroed is refused too when
    /// the lock file shows that commit was published (otherwise it was still in flight, and
    /// the version before it is what the writer last reported). The recovery option opens at
    /// exactly the last good version.
    @Test func aKilledWriterProcessesDamagedLogIsRefused() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("killed.strata")
        let seed: UInt64 = 0x10_6DA3
        let child = try Child("write-forever", path, "\(seed)")
        var printed: UInt64 = 0
        while printed < 12 {
            if let version = UInt64(try child.readLine()) { printed = version }
        }
        child.kill()
        for line in child.remainingLines() { if let version = UInt64(line), version == printed + 1 { printed = version } }
        let files = try ["", "-log", "-lock"].map { try [UInt8](Data(contentsOf: URL(fileURLWithPath: path + $0))) }
        let generation = try #require(try CommitLog(file: SimulatedDisk(image: files[1], capacity: 16 << 20)).readGeneration())
        let records = generation.records
        let newest = try #require(records.last?.txid)
        #expect(records.count >= 12 && newest >= printed, "\(records.count) records through \(newest), printed \(printed)")
        let published = files[2].withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self) }

        var counter = 0
        func open(zeroing offset: UInt64, recovery: CommitLogRecovery = .refuse) throws -> StorageEngine {
            counter += 1
            let copy = directory.file("case-\(counter).strata")
            var log = files[1]
            log.replaceSubrange(Int(offset)..<Int(offset) + Int(CommitLog.blockSize), with: repeatElement(0, count: Int(CommitLog.blockSize)))
            for (suffix, bytes) in zip(["", "-log", "-lock"], [files[0], log, files[2]]) {
                try Data(bytes).write(to: URL(fileURLWithPath: copy + suffix))
            }
            var options = StorageOptions(maximumFileSize: 1 << 30)
            options.commitLogRecovery = recovery
            return try StorageEngine.open(path: copy, options: options)
        }
        func expectVersion(_ engine: StorageEngine, _ version: UInt64, _ label: String) throws {
            var model = WorkloadModel(seed: seed)
            model.advance(to: version)
            #expect(engine.latestVersion == version, "\(label)")
            #expect(try engine.read { try contents(of: "kv", in: $0) } == model.entries, "\(label)")
            #expect(try engine.verify().isHealthy, "\(label)")
        }

        // The second record: a bad record with valid ones after it.
        do {
            try open(zeroing: records[1].offset).close()
            Issue.record("a damaged record opened silently")
        } catch StorageError.commitLogDamaged(let logPath, let lastGood, let lost, let reason) {
            #expect(logPath == directory.file("case-1.strata-log") && lastGood == records[0].txid && lost == newest - records[0].txid)
            #expect(reason.contains("the record after version \(records[0].txid) is damaged or out of place, and \(records.count - 2) valid later records"), "\(reason)")
        }
        let recovered = try open(zeroing: records[1].offset, recovery: .openAtLastGoodVersion)
        try expectVersion(recovered, records[0].txid, "recovered")
        #expect(recovered.commitLogRecoveryReport?.lostCommits == newest - records[0].txid)
        recovered.close()

        // The last record.
        let last = records[records.count - 1]
        if published == newest {
            #expect(throws: StorageError.self) { try open(zeroing: last.offset).close() }
        } else {
            let engine = try open(zeroing: last.offset)
            try expectVersion(engine, newest - 1, "the last record in flight")
            engine.close()
        }
        let intact = try open(zeroing: CommitLog.end(of: 0, at: generation.end))
        try expectVersion(intact, newest, "a zero block past the generation")
        intact.close()
    }

    /// A missing log, where the lock file shows a logged commit was published from it (the
    /// writer was killed and the log deleted): refused, naming the recovery option.
    @Test func aMissingLogWithPublishedCommitsIsRefused() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("db.strata")
        var options = StorageOptions()
        options.maximumReaders = 8
        let engine = try StorageEngine.open(path: path, options: options)
        try engine.write { try $0.put([1], forKey: [1], in: try $0.createTree(named: "t")) }
        try engine.checkpoint()
        try engine.write { try $0.put([2], forKey: [2], in: try $0.tree(named: "t")!) }
        let version = engine.latestVersion
        // As a killed process leaves them.
        let copy = directory.file("copy.strata")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-lock", toPath: copy + "-lock")
        engine.close()
        #expect(!FileManager.default.fileExists(atPath: StorageEngine.logPath(for: copy)))
        var readOnly = options
        readOnly.readOnly = true
        for options in [readOnly, options] {
            do {
                _ = try StorageEngine.open(path: copy, options: options)
                Issue.record("opened without the log (read-only: \(options.readOnly))")
            } catch StorageError.commitLogDamaged(let logPath, let lastGood, let lost, _) {
                #expect(logPath == StorageEngine.logPath(for: copy) && lastGood == version - 1 && lost == 1)
            }
        }
        var recover = options
        recover.commitLogRecovery = .openAtLastGoodVersion
        let recovered = try StorageEngine.open(path: copy, options: recover)
        #expect(recovered.latestVersion == version - 1 && recovered.commitLogRecoveryReport?.lostCommits == 1)
        #expect(try recovered.read { try $0.value(forKey: [1], in: $0.tree(named: "t")!) } == [1])
        recovered.close()
        let again = try StorageEngine.open(path: copy, options: options)
        defer { again.close() }
        #expect(again.latestVersion == version - 1)
    }

    /// The database's header records the length its log was preallocated to: a log beside it
    /// that is shorter was cut, even with no lock file and no record left to say so (emptied);
    /// refused, read-only too, and the recovery option makes the log whole again. A missing
    /// log is a database copied without it: it opens, and its new log is preallocated.
    @Test func aLogCutShorterThanItsPreallocationIsRefusedWithoutALockFile() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("db.strata")
        var options = StorageOptions()
        options.maximumReaders = 8
        let engine = try StorageEngine.open(path: path, options: options)
        try engine.write { try $0.put([1], forKey: [1], in: try $0.createTree(named: "t")) }
        try engine.checkpoint()
        for key in UInt8(2)...9 { try engine.write { try $0.put([key], forKey: [key], in: try $0.tree(named: "t")!) } }
        let newest = engine.latestVersion
        let logPath = StorageEngine.logPath(for: path)
        #expect(try FileManager.default.attributesOfItem(atPath: logPath)[.size] as? UInt64 == CommitLog.capacity)
        // As a killed process leaves them, without its lock file.
        let copy = directory.file("copy.strata")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        engine.close()
        for length in [0, 4096, 8192] {
            #expect(FileManager.default.createFile(atPath: StorageEngine.logPath(for: copy), contents: Data(count: 0)))
            let handle = try #require(FileHandle(forWritingAtPath: StorageEngine.logPath(for: copy)))
            let original = try #require(FileManager.default.contents(atPath: logPath))
            try handle.write(contentsOf: original.prefix(length))
            try handle.close()
            var readOnly = options
            readOnly.readOnly = true
            for options in [readOnly, options] {
                do {
                    let opened = try StorageEngine.open(path: copy, options: options)
                    Issue.record("a log cut to \(length) bytes opened at version \(opened.latestVersion) (read-only: \(options.readOnly))")
                    opened.close()
                } catch StorageError.commitLogDamaged(let damagedLog, _, _, let reason) {
                    #expect(damagedLog == StorageEngine.logPath(for: copy) && reason.contains("preallocated"), "\(reason)")
                }
            }
        }
        var recover = options
        recover.commitLogRecovery = .openAtLastGoodVersion
        let recovered = try StorageEngine.open(path: copy, options: recover)
        #expect(recovered.latestVersion < newest && recovered.commitLogRecoveryReport != nil)
        recovered.close()
        #expect(try FileManager.default.attributesOfItem(atPath: StorageEngine.logPath(for: copy))[.size] as? UInt64 == CommitLog.capacity)
        let again = try StorageEngine.open(path: copy, options: options)
        #expect(again.commitLogRecoveryReport == nil)
        again.close()
        // Copied without its log after a checkpoint: opens as it is, with a new log as long as
        // the header says, which the next open accepts.
        let checkpointed = directory.file("checkpointed.strata")
        let closed = try StorageEngine.open(path: path, options: options)
        closed.close()
        try FileManager.default.copyItem(atPath: path, toPath: checkpointed)
        let withoutLog = try StorageEngine.open(path: checkpointed, options: options)
        #expect(withoutLog.latestVersion == newest)
        withoutLog.close()
        #expect(try FileManager.default.attributesOfItem(atPath: StorageEngine.logPath(for: checkpointed))[.size] as? UInt64 == CommitLog.capacity)
        let reopened = try StorageEngine.open(path: checkpointed, options: options)
        #expect(reopened.latestVersion == newest)
        reopened.close()
    }
}
