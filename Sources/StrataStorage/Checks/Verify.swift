// verify(): a full consistency check of the newest version, reporting problems as values.
//
// Every page below the high-water mark must be exactly one of: the header or a meta slot, a
// page of a tree (the catalog, a named tree, an overflow run), a free-list page, or free
// (reusable or pending). Every tree page is checksummed (ignoring the per-process cache), its
// keys are in order and within the bounds its parent gives it, all leaves are at one depth, and
// each tree's entry count matches the catalog.

/// One thing `StorageEngine.verify()` found wrong.
public struct VerificationProblem: Sendable, Equatable, CustomStringConvertible {
    /// The page at fault, when there is one.
    public let page: UInt64?
    /// What is wrong, for people.
    public let message: String

    public var description: String { page.map { "page \($0): \(message)" } ?? message }
}

/// The result of `StorageEngine.verify()`.
public struct VerificationReport: Sendable, CustomStringConvertible {
    /// The version that was checked.
    public var version: UInt64 = 0
    /// The file's page size.
    public var pageSize = 0
    /// Pages below the high-water mark.
    public var pageCount: UInt64 = 0
    /// Named trees.
    public var treeCount = 0
    /// Entries over all named trees.
    public var entryCount: UInt64 = 0
    /// Pages holding trees (the catalog included) and overflow values.
    public var treePages: UInt64 = 0
    /// Pages free for reuse now.
    public var freePages: UInt64 = 0
    /// Freed pages still reachable from an older snapshot that some reader may hold.
    public var pendingPages: UInt64 = 0
    /// Pages holding the free list itself.
    public var freeListPages: UInt64 = 0
    /// Everything found wrong; empty when the file is healthy.
    public var problems: [VerificationProblem] = []

    /// True when no problem was found.
    public var isHealthy: Bool { problems.isEmpty }

    public var description: String {
        var lines = [
            "version \(version), page size \(pageSize), \(pageCount) pages (\(pageCount * UInt64(pageSize)) bytes)",
            "\(treeCount) trees, \(entryCount) entries, \(treePages) tree pages, \(freePages) free, \(pendingPages) pending, \(freeListPages) free-list",
        ]
        lines.append(problems.isEmpty ? "healthy" : "\(problems.count) problem(s):")
        lines += problems.prefix(50).map { "  \($0)" }
        return lines.joined(separator: "\n")
    }
}

extension StorageEngine {
    /// Checks the newest version completely. Problems in the file are reported in the result;
    /// this throws only when the check cannot start (the engine is closed).
    public func verify() throws -> VerificationReport {
        let transaction = try beginRead()
        defer { transaction.close() }
        var checker = Checker(snapshot: transaction.snapshot)
        checker.run()
        return checker.report
    }
}

private struct Checker {
    let snapshot: Snapshot
    var report = VerificationReport()
    var owner: [UInt8]

    init(snapshot: Snapshot) {
        self.snapshot = snapshot
        owner = [UInt8](repeating: 0, count: Int(min(snapshot.meta.pageCount, 1 << 34)))
    }

    mutating func problem(_ page: UInt64?, _ message: String) {
        if report.problems.count < 10_000 { report.problems.append(VerificationProblem(page: page, message: message)) }
    }

    mutating func claim(_ page: PageNumber, count: UInt64 = 1, as what: String) -> Bool {
        guard page + count <= UInt64(owner.count), page >= 0 else {
            problem(page, "\(what) lies past the end (page count \(owner.count))")
            return false
        }
        for p in page..<(page + count) {
            if owner[Int(p)] != 0 {
                problem(p, "\(what) uses a page that is already in use or free")
                return false
            }
            owner[Int(p)] = 1
        }
        return true
    }

    mutating func run() {
        let meta = snapshot.meta
        report.version = meta.txid
        report.pageSize = snapshot.pageSize
        report.pageCount = meta.pageCount
        for page in 0..<min(FileHeader.firstDataPage, UInt64(owner.count)) { owner[Int(page)] = 1 }
        if meta.isLogged { _ = claim(meta.selfPage, as: "meta of logged version \(meta.txid)") }
        for record in meta.chain {
            guard claim(record.page, as: "commit record of version \(record.txid)") else { continue }
            let stored = PageView(base: snapshot.base + Int(record.page) * snapshot.pageSize)
            if MetaPage.decode(stored.base, pageSize: snapshot.pageSize, at: record.page)?.txid != record.txid {
                problem(record.page, "commit record of version \(record.txid) is not intact")
            }
        }

        // Trees, through the catalog.
        var entries: [(String, [UInt8])] = []
        _ = walk(meta.catalogRoot, name: "catalog", lower: nil, upper: nil, depth: 0) { key, value in
            entries.append((String(decoding: key, as: UTF8.self), [UInt8](value)))
        }
        var infos: [(String, TreeInfo)] = []
        for (name, value) in entries {
            if let info = value.withUnsafeBytes({ try? TreeInfo.decode($0, name: name) }) { infos.append((name, info)) } else {
                problem(nil, "catalog entry '\(name)' is malformed")
            }
        }
        report.treeCount = infos.count
        for (name, info) in infos {
            var entries: UInt64 = 0
            _ = walk(info.root, name: "tree '\(name)'", lower: nil, upper: nil, depth: 0) { _, _ in entries += 1 }
            report.entryCount += entries
            if entries != info.count {
                problem(info.root, "tree '\(name)' holds \(entries) entries but the catalog says \(info.count)")
            }
        }

        // The free list: in the meta, or in its own pages.
        var bytes: [UInt8] = meta.freeList
        var page = meta.freeListHead
        for _ in 0..<meta.freeListPages {
            guard page != 0 else { problem(nil, "free-list chain ends early"); break }
            guard let view = checked(page, kind: .freeList, what: "free-list page") else { break }
            if claim(page, as: "free-list page") { report.freeListPages += 1 }
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: view.base + PageLayout.headerSize, count: FreeSpace.payloadPerPage(snapshot.pageSize)))
            page = view.aux
        }
        do {
            let space = try FreeSpace.decode(bytes, pageCount: meta.pageCount, firstPage: meta.freeList.isEmpty ? meta.freeListHead : meta.selfPage)
            for run in space.runs where claim(run.start, count: run.count, as: "free run") { report.freePages += run.count }
            for run in space.pending where claim(run.start, count: run.count, as: "pending free run") { report.pendingPages += run.count }
        } catch {
            problem(meta.freeListHead, "\(error)")
        }

        // Leaks.
        var leaked: [UInt64] = []
        for (p, used) in owner.enumerated() where used == 0 { leaked.append(UInt64(p)) }
        if !leaked.isEmpty {
            problem(leaked.first, "\(leaked.count) page(s) neither reachable nor free, starting at \(leaked.prefix(8).map(String.init).joined(separator: ", "))")
        }
    }

    mutating func checked(_ page: PageNumber, kind: PageKind?, what: String) -> PageView? {
        guard page >= FileHeader.firstDataPage && page < snapshot.meta.pageCount else {
            problem(page, "\(what): page number out of range")
            return nil
        }
        let view = PageView(base: snapshot.base + Int(page) * snapshot.pageSize)
        do {
            try snapshot.verify(view, number: page)
        } catch let error as StorageError {
            if case .corrupted(_, let reason) = error { problem(page, "\(what): \(reason)") } else { problem(page, "\(what): \(error)") }
            return nil
        } catch {
            problem(page, "\(what): \(error)")
            return nil
        }
        if let kind, view.kindRaw != kind.rawValue {
            problem(page, "\(what): expected kind \(kind), found \(view.kindRaw)")
            return nil
        }
        return view
    }

    /// Walks a subtree; returns its leaf depth (nil on damage).
    mutating func walk(_ page: PageNumber, name: String, lower: [UInt8]?, upper: [UInt8]?, depth: Int,
                       visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) -> Int? {
        guard page != 0 else { return 0 }
        guard depth < Snapshot.maximumDepth else { problem(page, "\(name) is deeper than \(Snapshot.maximumDepth)"); return nil }
        guard let view = checked(page, kind: nil, what: name) else { return nil }
        guard view.kindRaw == PageKind.leaf.rawValue || view.kindRaw == PageKind.branch.rawValue else {
            problem(page, "\(name): expected a tree page, found kind \(view.kindRaw)")
            return nil
        }
        guard claim(page, as: name) else { return nil }
        report.treePages += 1
        let count = view.count
        if count == 0 { problem(page, "\(name): empty page"); return nil }
        var previous: UnsafeRawBufferPointer?
        func inBounds(_ key: UnsafeRawBufferPointer, first: Bool) -> Bool {
            if let lower, !(first && !view.isLeaf), lower.withUnsafeBytes({ compareBytes(key, $0) }) < 0 { return false }
            if let upper, upper.withUnsafeBytes({ compareBytes(key, $0) }) >= 0 { return false }
            return true
        }
        if view.isLeaf {
            for i in 0..<count {
                let key = view.leafKey(i)
                if let previous, compareBytes(previous, key) >= 0 { problem(page, "\(name): keys out of order at entry \(i)") }
                if !inBounds(key, first: i == 0) { problem(page, "\(name): key at entry \(i) outside its parent's range") }
                previous = key
                let (field, pointer) = view.leafValueField(i)
                if field & PageLayout.overflowFlag != 0 {
                    let run = pointer.uint64(at: 0)
                    let length = Int(field & ~PageLayout.overflowFlag)
                    if let runView = checked(run, kind: .overflow, what: "\(name) overflow value") {
                        if runView.aux != UInt64(length) { problem(run, "\(name): overflow length \(runView.aux), reference says \(length)") }
                        let pages = UInt64(PageLayout.overflowPages(length: Int(runView.aux), pageSize: snapshot.pageSize))
                        if claim(run, count: pages, as: "\(name) overflow value") { report.treePages += pages }
                        visit(key, UnsafeRawBufferPointer(start: runView.base + PageLayout.headerSize, count: length))
                    }
                } else {
                    visit(key, UnsafeRawBufferPointer(start: pointer, count: Int(field)))
                }
            }
            return 1
        }
        var leafDepth: Int?
        for i in 0..<count {
            let key = view.branchKey(i)
            if let previous, compareBytes(previous, key) >= 0 { problem(page, "\(name): branch keys out of order at entry \(i)") }
            previous = key
            let childLower: [UInt8]? = i == 0 ? lower : [UInt8](key)
            let childUpper: [UInt8]? = i + 1 < count ? [UInt8](view.branchKey(i + 1)) : upper
            guard let d = walk(view.branchChild(i), name: name, lower: childLower, upper: childUpper, depth: depth + 1, visit: visit) else { continue }
            if let leafDepth, leafDepth != d { problem(page, "\(name): leaves at different depths below this page") }
            leafDepth = d
        }
        return leafDepth.map { $0 + 1 }
    }
}
