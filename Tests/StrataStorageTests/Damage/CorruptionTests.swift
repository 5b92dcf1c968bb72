// Promise 5: a damaged or foreign file is refused with a clear, typed error, at open or when
// the damaged page is read (reads throw, never return wrong data), and verify() reports it.
// Real files (PosixFile) in a temporary directory: a sample database is built, copied, and
// each copy damaged one way.
//
// By design, damage to a page that the newest meta's one-sync list names (or to the record
// page holding that meta) is not an error: open cannot tell it from a commit cut short by a
// power failure, and falls back to the previous commit (whose sync had completed). Those
// cases assert exactly that.

import Foundation
import Testing
@testable import StrataStorage

@Suite struct CorruptionTests {
    /// Without the commit log: these tests damage the database file, so every commit must be
    /// in it (CommitLogTests damage the log).
    static let options: StorageOptions = {
        var options = StorageOptions(durability: .full, pageSize: 4096, maximumFileSize: 1 << 30, maximumReaders: 8)
        options.logsCommits = false
        return options
    }()

    /// What a page of the sample's newest version holds.
    enum PageRole: Equatable {
        case leaf(tree: String)
        case branch(tree: String)
        case overflow(tree: String)
        case freeList
    }

    /// A database built by a random workload, its bytes, the model of every version, and a map
    /// of the newest version's pages.
    final class Sample {
        let directory = TemporaryDirectory()
        var bytes: [UInt8] = []
        var models: [EngineModel] = [EngineModel()]
        var newest: MetaPage
        var pages: [PageNumber: PageRole] = [:]
        let pageSize = CorruptionTests.options.pageSize
        private var copies = 0

        /// `lastCommitLarge`: the newest commit took the two-sync path, so its meta lists nothing.
        init(lastCommitLarge: Bool) throws {
            let path = directory.file("sample.strata")
            var generator = WorkloadGenerator(seed: 31)
            do {
                let engine = try StorageEngine.open(path: path, options: CorruptionTests.options)
                defer { engine.close() }
                for index in 0..<12 {
                    var operations = generator.commit(after: models.last!, large: index == 11 && lastCommitLarge)
                    if index == 2 {
                        // Enough entries for branch pages, and values spanning several pages.
                        operations.append(.createTree("wide"))
                        for i in 0..<300 { operations.append(.put(tree: "wide", key: Array("w\(i)".utf8), value: [UInt8](repeating: UInt8(i & 0xFF), count: i % 50 == 0 ? 9_000 : 40))) }
                    }
                    if index == 11 {
                        // The newest commit writes a multi-page value too, so its list names one.
                        operations += [.createTree("late"), .put(tree: "late", key: [1], value: [UInt8](repeating: 0x5A, count: 9_000))]
                    }
                    try engine.write { try $0.apply(operations) }
                    models.append(models.last!.applying(operations))
                }
            }
            bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            // The newest state, found the way open finds it (an anchor, or a record chained from one).
            let file = try PosixFile(path: path, create: false, readOnly: true, maximumSize: 1 << 30)
            defer { file.close() }
            newest = try StorageEngine.recover(file: file, path: path)
            precondition(newest.txid == UInt64(models.count - 1))
            pages = mapPages()
        }

        deinit { directory.remove() }

        /// The anchor slot the newest state hangs from, and the other one.
        var currentAnchor: Int { newest.isRecord ? Int(newest.anchorSlot) : Int(newest.selfPage) }
        var otherAnchor: Int { 3 - currentAnchor }

        /// Pages the newest meta's one-sync list names, and the record holding it if it is one.
        var listedPages: Set<PageNumber> {
            var pages = Set(newest.written.flatMap { run in (run.page..<(run.page + UInt64(run.pages))) })
            if newest.isRecord { pages.insert(newest.selfPage) }
            return pages
        }

        /// Damaged pages of a role: (page, listed by the newest meta).
        func pages(where role: (PageRole) -> Bool) -> [PageNumber] {
            pages.filter { role($0.value) }.map(\.key).sorted()
        }

        /// Writes a damaged copy of the file; returns its path.
        func copy(_ damage: (inout [UInt8]) -> Void) throws -> String {
            copies += 1
            var damaged = bytes
            damage(&damaged)
            let path = directory.file("copy-\(copies).strata")
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            return path
        }

        private func mapPages() -> [PageNumber: PageRole] {
            var map: [PageNumber: PageRole] = [:]
            bytes.withUnsafeBytes { raw in
                let base = raw.baseAddress!
                func view(_ page: PageNumber) -> PageView { PageView(base: base + Int(page) * pageSize) }
                func walk(_ page: PageNumber, tree: String, visitLeaf: (PageView) -> Void) {
                    guard page != 0 else { return }
                    let v = view(page)
                    if v.isLeaf {
                        map[page] = .leaf(tree: tree)
                        for i in 0..<v.count where v.leafValueField(i).0 & PageLayout.overflowFlag != 0 {
                            map[v.leafValueField(i).1.loadUnaligned(as: UInt64.self)] = .overflow(tree: tree)
                        }
                        visitLeaf(v)
                    } else {
                        map[page] = .branch(tree: tree)
                        for i in 0..<v.count { walk(v.branchChild(i), tree: tree, visitLeaf: visitLeaf) }
                    }
                }
                var trees: [(String, PageNumber)] = []
                walk(newest.catalogRoot, tree: "") { leaf in
                    for i in 0..<leaf.count {
                        let name = String(decoding: leaf.leafKey(i), as: UTF8.self)
                        let value = UnsafeRawBufferPointer(start: leaf.leafValueField(i).1, count: TreeInfo.encodedSize)
                        trees.append((name, value.loadUnaligned(as: UInt64.self)))
                    }
                }
                for (name, root) in trees { walk(root, tree: name) { _ in } }
                var page = newest.freeListHead
                for _ in 0..<newest.freeListPages {
                    map[page] = .freeList
                    page = view(page).aux
                }
            }
            return map
        }
    }

    // MARK: Helpers

    static func open(_ path: String, readOnly: Bool = false) throws -> StorageEngine {
        var options = Self.options
        options.readOnly = readOnly
        return try StorageEngine.open(path: path, options: options)
    }

    /// Expects opening `path` to fail with `expected`.
    static func expectOpenFails(_ path: String, _ label: String, sourceLocation: SourceLocation = #_sourceLocation,
                                matching expected: (StorageError) -> Bool) {
        do {
            let engine = try open(path)
            engine.close()
            Issue.record("\(label): the damaged file opened", sourceLocation: sourceLocation)
        } catch let error as StorageError {
            #expect(expected(error), "\(label): \(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(label): untyped error \(error)", sourceLocation: sourceLocation)
        }
    }

    static func isCorrupted(page expected: PageNumber?) -> (StorageError) -> Bool {
        { if case .corrupted(let page, _) = $0 { return expected == nil || page == expected } else { return false } }
    }

    /// Expects `body` to throw `corrupted` naming `page`.
    static func expectCorrupted(page: PageNumber, _ label: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(label): reading the damaged page succeeded", sourceLocation: sourceLocation)
        } catch let error as StorageError {
            #expect(isCorrupted(page: page)(error), "\(label): \(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(label): untyped error \(error)", sourceLocation: sourceLocation)
        }
    }

    /// Expects the file to open at `version` with exactly that model, healthy.
    static func expectOpens(_ path: String, at version: Int, of sample: Sample, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let engine = try open(path)
        defer { engine.close() }
        #expect(engine.latestVersion == UInt64(version), "\(label)", sourceLocation: sourceLocation)
        #expect(try EngineModel.read(from: engine) == sample.models[version], "\(label)", sourceLocation: sourceLocation)
        #expect(try engine.verify().isHealthy, "\(label)", sourceLocation: sourceLocation)
    }

    static func flip(_ bytes: inout [UInt8], at offset: Int, bit: Int = 0) {
        bytes[offset] ^= UInt8(1 << bit)
    }

    // MARK: Truncation

    @Test func truncatedFiles() throws {
        let sample = try Sample(lastCommitLarge: false)
        let size = sample.bytes.count
        let pageSize = sample.pageSize

        let midHeader = try sample.copy { $0.removeLast(size - 10) }
        Self.expectOpenFails(midHeader, "cut inside the header") { $0 == .truncated(expectedBytes: UInt64(FileHeader.size), actualBytes: 10) }

        let midMeta = try sample.copy { $0.removeLast(size - (pageSize + 100)) }
        Self.expectOpenFails(midMeta, "cut inside the meta pages") {
            $0 == .truncated(expectedBytes: UInt64(3 * pageSize), actualBytes: UInt64(pageSize + 100))
        }

        let half = (size / pageSize / 2) * pageSize
        let midData = try sample.copy { $0.removeLast(size - half) }
        Self.expectOpenFails(midData, "cut to half") { if case .truncated(_, let actual) = $0 { actual == UInt64(half) } else { false } }

        let lastBytes = try sample.copy { $0.removeLast(100) }
        Self.expectOpenFails(lastBytes, "last 100 bytes cut") { if case .truncated(_, let actual) = $0 { actual == UInt64(size - 100) } else { false } }

        // A zero-length file holds nothing to protect: like SQLite, Strata treats it as a new,
        // empty database (creation itself is atomic, so Strata never leaves one behind).
        let empty = try sample.copy { $0.removeAll() }
        let engine = try Self.open(empty)
        #expect(engine.latestVersion == 0)
        #expect(try engine.read { try $0.treeNames() } == [])
        engine.close()
    }

    // MARK: The header

    @Test func damagedHeader() throws {
        let sample = try Sample(lastCommitLarge: false)
        let signature = try sample.copy { Self.flip(&$0, at: 3) }
        Self.expectOpenFails(signature, "signature") { $0 == .notADatabase(path: signature) }
        for (offset, label) in [(8, "format version"), (12, "page size"), (17, "checksum")] {
            let path = try sample.copy { Self.flip(&$0, at: offset, bit: 2) }
            Self.expectOpenFails(path, label, matching: Self.isCorrupted(page: 0))
        }
        // A file from a newer format: the version is patched and the checksum fixed, so only
        // the version is wrong.
        // Versions on either side of this one (1: before a meta could keep the free list).
        for version in [FileHeader.formatVersion - 1, FileHeader.formatVersion + 1] {
            let other = try sample.copy { bytes in
                bytes.withUnsafeMutableBytes { raw in
                    raw.storeBytes(of: version, toByteOffset: 8, as: UInt32.self)
                    raw.storeBytes(of: crc32c(raw.baseAddress!, count: 16), toByteOffset: 16, as: UInt32.self)
                }
            }
            Self.expectOpenFails(other, "format \(version)") { $0 == .unsupportedFormatVersion(found: version, supported: FileHeader.formatVersion) }
        }
        let badPageSize = try sample.copy { bytes in
            bytes.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: UInt32(3000), toByteOffset: 12, as: UInt32.self)
                raw.storeBytes(of: crc32c(raw.baseAddress!, count: 16), toByteOffset: 16, as: UInt32.self)
            }
        }
        Self.expectOpenFails(badPageSize, "page size 3000 with a valid checksum", matching: Self.isCorrupted(page: 0))
    }

    // MARK: Meta pages

    @Test(arguments: [false, true])
    func damagedMetaPages(lastCommitLarge: Bool) throws {
        let sample = try Sample(lastCommitLarge: lastCommitLarge)
        let pageSize = sample.pageSize
        let newestVersion = sample.models.count - 1
        // Offsets inside what the meta checksum covers: checksum, signature, txid, catalog
        // root, page count, free-list head, list count, own page number, next record's page.
        let offsets = [0, 5, 9, 17, 25, 33, 57, 65, 81]
        for offset in offsets {
            // The newest meta is damaged (a record, or an anchor after a commit that could not
            // chain): the file opens at the previous commit, which had completed its sync.
            let newest = try sample.copy { Self.flip(&$0, at: Int(sample.newest.selfPage) * pageSize + offset) }
            try Self.expectOpens(newest, at: newestVersion - 1, of: sample, "newest meta (page \(sample.newest.selfPage)), byte \(offset)")
            // The anchor the newest state does not hang from: nothing is lost.
            let other = try sample.copy { Self.flip(&$0, at: sample.otherAnchor * pageSize + offset) }
            try Self.expectOpens(other, at: newestVersion, of: sample, "other anchor, byte \(offset)")
            // Both anchors: no version can be trusted.
            let both = try sample.copy {
                Self.flip(&$0, at: sample.currentAnchor * pageSize + offset)
                Self.flip(&$0, at: sample.otherAnchor * pageSize + offset)
            }
            Self.expectOpenFails(both, "both anchors, byte \(offset)", matching: Self.isCorrupted(page: nil))
            guard sample.newest.isRecord else { continue }
            // The anchor the newest record hangs from: the records after it are lost with it;
            // the file opens at an older commit, exactly as that commit left it.
            let anchor = try sample.copy { Self.flip(&$0, at: sample.currentAnchor * pageSize + offset) }
            let engine = try Self.open(anchor)
            defer { engine.close() }
            let version = Int(engine.latestVersion)
            #expect(version < newestVersion, "current anchor, byte \(offset)")
            #expect(try EngineModel.read(from: engine) == sample.models[version], "current anchor, byte \(offset): version \(version)")
            #expect(try engine.verify().isHealthy, "current anchor, byte \(offset)")
        }
    }

    // MARK: Data pages

    /// Offsets to damage in a page: checksum, kind, count, page number, birth txid, body, last byte.
    static let pageOffsets = [1, PageLayout.kindOffset, PageLayout.countOffset, PageLayout.numberOffset + 1,
                              PageLayout.txidOffset, 200, 4095]

    @Test func damagedTreePages() throws {
        let sample = try Sample(lastCommitLarge: false)
        let newestVersion = sample.models.count - 1
        let listed = sample.listedPages
        var checked = (unlisted: 0, listed: 0)
        let kinds: [(String, (PageRole) -> Bool)] = [
            ("leaf", { if case .leaf(let tree) = $0 { !tree.isEmpty } else { false } }),
            ("branch", { if case .branch(let tree) = $0 { !tree.isEmpty } else { false } }),
            ("catalog", { $0 == .leaf(tree: "") || $0 == .branch(tree: "") }),
            ("overflow", { if case .overflow = $0 { true } else { false } }),
        ]
        for (kind, matches) in kinds {
            let candidates = sample.pages(where: matches)
            // The sample must offer both cases for leaves and overflow runs (the catalog's single
            // leaf is rewritten by every commit, so it is always listed).
            if kind == "leaf" || kind == "overflow" {
                #expect(candidates.contains { !listed.contains($0) }, "the sample has an unlisted \(kind) page")
                #expect(candidates.contains { listed.contains($0) }, "the sample has a listed \(kind) page")
            }
            // One page the newest commit wrote (listed) and one it did not, of each kind.
            let chosen = [candidates.first { !listed.contains($0) }, candidates.first { listed.contains($0) }].compactMap { $0 }
            for page in chosen {
                let role = sample.pages[page]!
                for offset in Self.pageOffsets {
                    let label = "\(kind) page \(page) (\(role)), byte \(offset)"
                    let path = try sample.copy { Self.flip(&$0, at: Int(page) * sample.pageSize + offset, bit: 3) }
                    if listed.contains(page) {
                        // Indistinguishable from the newest commit cut short by a power failure.
                        try Self.expectOpens(path, at: newestVersion - 1, of: sample, label)
                        checked.listed += 1
                        continue
                    }
                    try Self.expectDetectedOnRead(path, page: page, role: role, sample: sample, label)
                    checked.unlisted += 1
                }
            }
        }
        #expect(checked.unlisted > 0 && checked.listed > 0)
    }

    /// Opens a file with one damaged page the newest meta does not list: it opens at the
    /// newest version, every read that needs the page throws `corrupted(page)`, every other
    /// read returns exactly the model, and verify() names the page.
    static func expectDetectedOnRead(_ path: String, page: PageNumber, role: PageRole, sample: Sample, _ label: String,
                                     sourceLocation: SourceLocation = #_sourceLocation) throws {
        let engine = try open(path)
        defer { engine.close() }
        let model = sample.models.last!
        #expect(engine.latestVersion == UInt64(sample.models.count - 1), "\(label)", sourceLocation: sourceLocation)
        let report = try engine.verify()
        #expect(report.problems.contains { $0.page == page }, "\(label): verify() \(report)", sourceLocation: sourceLocation)
        switch role {
        case .freeList:
            expectCorrupted(page: page, "\(label): starting a write", sourceLocation: sourceLocation) { _ = try engine.beginWrite() }
            #expect(try EngineModel.read(from: engine) == model, "\(label)", sourceLocation: sourceLocation)
        case .leaf(let tree) where tree.isEmpty, .branch(let tree) where tree.isEmpty:
            expectCorrupted(page: page, "\(label): reading the catalog", sourceLocation: sourceLocation) {
                _ = try EngineModel.read(from: engine)
            }
        case .leaf(let tree), .branch(let tree), .overflow(let tree):
            try engine.read { transaction in
                for name in model.trees.keys.sorted() where name != tree {
                    #expect(try contents(of: name, in: transaction) == model.trees[name]!, "\(label): tree \(name)", sourceLocation: sourceLocation)
                }
                expectCorrupted(page: page, "\(label): iterating \(tree)", sourceLocation: sourceLocation) {
                    _ = try contents(of: tree, in: transaction)
                }
                // Point reads: each key either reads its exact value or throws corrupted(page).
                var failures = 0
                var wrong: [String] = []
                for (key, value) in model.trees[tree]! {
                    do {
                        let found = try transaction.value(forKey: key, in: try #require(try transaction.tree(named: tree)))
                        if found != value { wrong.append(String(decoding: key, as: UTF8.self)) }
                    } catch let error as StorageError {
                        if !isCorrupted(page: page)(error) { wrong.append("\(String(decoding: key, as: UTF8.self)): \(error)") }
                        failures += 1
                    }
                }
                #expect(wrong.isEmpty, "\(label): wrong results for \(wrong.count) keys, e.g. \(wrong.prefix(3))", sourceLocation: sourceLocation)
                #expect(failures > 0, "\(label): no point read reached the damaged page", sourceLocation: sourceLocation)
            }
            expectCorrupted(page: page, "\(label): writing to \(tree)", sourceLocation: sourceLocation) {
                try engine.write { transaction in
                    guard let handle = try transaction.tree(named: tree) else { return }
                    for key in model.trees[tree]!.keys { try transaction.delete(forKey: key, in: handle) }
                }
            }
        }
    }

    @Test func damagedFreeListPage() throws {
        // After a two-sync commit the meta lists nothing: damage is found on use.
        let twoSync = try Sample(lastCommitLarge: true)
        let unlisted = twoSync.pages(where: { $0 == .freeList })
        #expect(!unlisted.isEmpty && twoSync.newest.written.isEmpty)
        for page in unlisted {
            for offset in Self.pageOffsets {
                let path = try twoSync.copy { Self.flip(&$0, at: Int(page) * twoSync.pageSize + offset, bit: 5) }
                try Self.expectDetectedOnRead(path, page: page, role: .freeList, sample: twoSync, "free-list page \(page), byte \(offset)")
            }
        }
        // After a one-sync commit the free list it wrote is listed: open falls back.
        let oneSync = try Sample(lastCommitLarge: false)
        let listed = oneSync.pages(where: { $0 == .freeList })
        #expect(!listed.isEmpty && listed.allSatisfy { oneSync.listedPages.contains($0) })
        for page in listed {
            let path = try oneSync.copy { Self.flip(&$0, at: Int(page) * oneSync.pageSize + 300) }
            try Self.expectOpens(path, at: oneSync.models.count - 2, of: oneSync, "listed free-list page \(page)")
        }
    }

    // MARK: Foreign files

    @Test func foreignFiles() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var random = SplitMix64(seed: 5)
        let files: [(String, [UInt8])] = [
            ("random.bin", (0..<16_384).map { _ in UInt8.random(in: 0...255, using: &random) }),
            ("notes.txt", Array(String(repeating: "Strata is an embedded object database for Swift.\n", count: 200).utf8)),
            ("short.txt", Array("hi\n".utf8)),
            ("zeros.bin", [UInt8](repeating: 0, count: 3 * 4096)),
        ]
        for (name, bytes) in files {
            let path = directory.file(name)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            Self.expectOpenFails(path, name) { $0 == .notADatabase(path: path) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes), "\(name) was modified")
        }
    }
}
