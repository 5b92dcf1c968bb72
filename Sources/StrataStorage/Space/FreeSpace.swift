// Free space: which pages a commit may write.
//
// A page freed by commit D (reachable from version D−1, not from D) was written by commit B
// (its birth, from the page header). It is reachable exactly from versions B ..< D. It may be
// reused once no pinned snapshot reads a version in that range — not merely once every
// snapshot is newer than D. So a long-lived snapshot pins only the pages it can reach; pages
// whose whole life fell after it (or between two snapshots) are reused at once.
//
// The writer's base version (the last commit, which is also the crash fallback of the commit
// being built) never needs protecting here: its pages are not free.
//
// On disk the free space is a chain of free-list pages rewritten by every commit:
//   runCount u64 | pendingCount u64 | runs { start u64, count u64 } | pending { start, count, birth, death: u64 }
// Runs are reusable now; pending runs wait for the snapshots that can reach them.

struct FreeRun: Equatable {
    var start: PageNumber
    var count: UInt64
}

struct PendingRun: Equatable {
    var start: PageNumber
    var count: UInt64
    var birth: UInt64
    var death: UInt64
}

struct FreeSpace {
    /// Reusable runs, sorted by start, non-adjacent (merged).
    private(set) var runs: [FreeRun] = []
    private(set) var pending: [PendingRun] = []
    /// The high-water mark: pages ≥ pageCount are unused and lie past the end of the data.
    var pageCount: UInt64
    /// Pages `free` has made pending, ever (not encoded): what a transaction freed of older
    /// versions is the growth of this while it runs, counted without a pass over `pending`.
    private(set) var pagesMadePending: UInt64 = 0
    /// The pins of the last `release` and how many runs at the front of `pending` it kept
    /// (not encoded): those are pinned under these pins, so a `release` with the same pins
    /// starts after them. (A commit log's generation pins its base: the pages the base reaches
    /// and later commits freed stay pending until the checkpoint, and looking at every one of
    /// them again at each begin grew with the generation.)
    private var releasedUnder: [UInt64] = []
    private var keptUnder = 0

    init(pageCount: UInt64) { self.pageCount = pageCount }

    var reusablePageCount: UInt64 { runs.reduce(0) { $0 + $1.count } }
    var pendingPageCount: UInt64 { pending.reduce(0) { $0 + $1.count } }

    /// Moves every pending run among the first `runs` that no pinned version can reach into
    /// the reusable runs; the runs after them stay pending, in order. Returns how many of the
    /// first `runs` stay pending. `pinned` is sorted ascending.
    @discardableResult
    mutating func release(pinned: [UInt64], runs limit: Int) -> Int {
        let limit = min(limit, pending.count)
        guard limit > 0 else { return 0 }
        // In place: the runs still pinned move to the front (no new array on every commit).
        let known = pinned == releasedUnder ? min(keptUnder, limit) : 0
        var kept = known
        for i in known..<limit {
            let run = pending[i]
            if Self.isPinned(birth: run.birth, death: run.death, pinned: pinned) {
                if kept != i { pending[kept] = run }
                kept += 1
            } else {
                insertRun(FreeRun(start: run.start, count: run.count))
            }
        }
        // The runs after `limit` follow the kept ones. One `removeLast()` at a time:
        // `removeLast(_:)` goes through an unspecialised `replaceSubrange`, which cost more
        // than the few runs it removes at each commit.
        if kept < limit {
            var to = kept
            for from in limit..<pending.count {
                pending[to] = pending[from]
                to += 1
            }
            while pending.count > to { pending.removeLast() }
        }
        if releasedUnder != pinned { releasedUnder = pinned }
        keptUnder = kept
        return kept
    }

    /// Every pending run (`release(pinned:runs:)` over all of them).
    mutating func release(pinned: [UInt64]) { release(pinned: pinned, runs: pending.count) }

    static func isPinned(birth: UInt64, death: UInt64, pinned: [UInt64]) -> Bool {
        // First pinned version ≥ birth; pinned iff it is < death.
        var low = 0, high = pinned.count
        while low < high {
            let mid = (low + high) >> 1
            if pinned[mid] < birth { low = mid + 1 } else { high = mid }
        }
        return low < pinned.count && pinned[low] < death
    }

    /// Records pages freed by commit `death` that were written by commit `birth`.
    mutating func free(start: PageNumber, count: UInt64, birth: UInt64, death: UInt64) {
        if birth >= death {
            insertRun(FreeRun(start: start, count: count))
        } else {
            pending.append(PendingRun(start: start, count: count, birth: birth, death: death))
            pagesMadePending &+= count
        }
    }

    private mutating func insertRun(_ run: FreeRun) {
        var low = 0, high = runs.count
        while low < high {
            let mid = (low + high) >> 1
            if runs[mid].start < run.start { low = mid + 1 } else { high = mid }
        }
        let index = low
        // Merged in place where the run touches a neighbour (the common case when a commit's
        // pages come back): no removal and insertion shifting the array twice.
        let joinsPrevious = index > 0 && runs[index - 1].start + runs[index - 1].count == run.start
        let joinsNext = index < runs.count && run.start + run.count == runs[index].start
        if joinsPrevious {
            runs[index - 1].count += run.count
            if joinsNext {
                runs[index - 1].count += runs[index].count
                runs.remove(at: index)
            }
        } else if joinsNext {
            runs[index].start = run.start
            runs[index].count += run.count
        } else {
            runs.insert(run, at: index)
        }
    }

    /// Pages set aside so that one commit's pages are contiguous: [next, end).
    private(set) var reservation: (next: PageNumber, end: PageNumber)?

    /// Sets aside `count` contiguous pages (the lowest run that fits, else past the high-water
    /// mark); `allocate` takes from them first. A commit written as one stretch costs the disk
    /// one request instead of one per page.
    /// When no run fits but enough scattered pages are free, nothing is reserved: growing the
    /// file to keep commits contiguous would trade space for speed without bound.
    mutating func reserve(_ count: Int, limitPages: UInt64) throws {
        let n = UInt64(count)
        if !runs.contains(where: { $0.count >= n }) && reusablePageCount >= n { return }
        let start = try allocate(count, limitPages: limitPages)
        reservation = (start, start + n)
    }

    /// Reserves exactly [start, start + count): free pages, or pages at and past the high-water
    /// mark. False (and nothing reserved) when any of them is in use.
    mutating func reserveExact(start: PageNumber, count: Int, limitPages: UInt64) -> Bool {
        let end = start + UInt64(count)
        guard end <= limitPages, start >= FileHeader.firstDataPage else { return false }
        if start >= pageCount {
            guard start == pageCount else { return false }
            pageCount = end
            reservation = (start, end)
            return true
        }
        guard let i = runs.firstIndex(where: { $0.start <= start && start < $0.start + $0.count }) else { return false }
        let run = runs[i]
        let runEnd = run.start + run.count
        if end > runEnd && runEnd != pageCount { return false }
        runs.remove(at: i)
        var at = i
        if run.start < start {
            runs.insert(FreeRun(start: run.start, count: start - run.start), at: at)
            at += 1
        }
        if end < runEnd {
            runs.insert(FreeRun(start: end, count: runEnd - end), at: at)
        } else if end > runEnd {
            pageCount = end
        }
        reservation = (start, end)
        return true
    }

    /// Where the next commits may write: the lowest free run of `count` pages, else the longest
    /// run of at least `minimum`; past the high-water mark only when little is free anyway.
    /// Nil when free space is plentiful but fragmented: growing the file to keep commits
    /// contiguous would trade space for speed without bound.
    func announce(_ count: Int, minimum: Int) -> (PageNumber, Int)? {
        let n = UInt64(count)
        if let run = runs.first(where: { $0.count >= n }) { return (run.start, count) }
        if let run = runs.max(by: { $0.count < $1.count }), run.count >= UInt64(minimum) {
            return (run.start, run.start + run.count == pageCount ? count : Int(run.count))
        }
        guard reusablePageCount < 2 * n else { return nil }
        if let last = runs.last, last.start + last.count == pageCount { return (last.start, count) }
        return (pageCount, count)
    }

    /// Takes `count` pages from the reservation's front, if it has them.
    mutating func takeReserved(_ count: Int) -> PageNumber? {
        guard let r = reservation, r.next + UInt64(count) <= r.end else { return nil }
        reservation = (r.next + UInt64(count), r.end)
        return r.next
    }

    /// Returns the unused rest of the reservation to the reusable runs.
    mutating func endReservation() {
        if let r = reservation, r.next < r.end {
            // Unused pages past the old end of the file are given back, not recorded as free:
            // they were never written, and the file must cover every page below pageCount.
            if r.end == pageCount { pageCount = r.next } else { insertRun(FreeRun(start: r.next, count: r.end - r.next)) }
        }
        reservation = nil
    }

    /// Allocates `count` contiguous pages: from the reservation, else the lowest reusable run
    /// that fits, else past the high-water mark (growing the file), within `limitPages`.
    /// With `reserved` false, the reservation is left for other pages.
    mutating func allocate(_ count: Int, limitPages: UInt64, reserved: Bool = true) throws -> PageNumber {
        if reserved, reservation != nil, let page = takeReserved(count) { return page }
        let n = UInt64(count)
        // A page placed apart from a commit's stretch fills a gap of its own size if there is
        // one, leaving longer runs whole for stretches.
        if !reserved, let i = runs.firstIndex(where: { $0.count == n }) {
            let start = runs[i].start
            runs.remove(at: i)
            return start
        }
        for i in runs.indices where runs[i].count >= n {
            let start = runs[i].start
            if runs[i].count == n { runs.remove(at: i) } else {
                runs[i].start += n
                runs[i].count -= n
            }
            return start
        }
        return try extend(n, limitPages: limitPages)
    }

    mutating func extend(_ n: UInt64, limitPages: UInt64) throws -> PageNumber {
        guard pageCount + n <= limitPages else { throw StorageError.fileTooLarge(limit: limitPages) }
        let start = pageCount
        pageCount += n
        return start
    }

    /// Takes one page from the end of the last run (so the encoding never grows), or extends.
    mutating func takeFromTail(limitPages: UInt64) throws -> PageNumber {
        if let last = runs.indices.last {
            runs[last].count -= 1
            let page = runs[last].start + runs[last].count
            if runs[last].count == 0 { runs.removeLast() }
            return page
        }
        return try extend(1, limitPages: limitPages)
    }

    var encodedSize: Int { runs.isEmpty && pending.isEmpty ? 0 : 16 + 16 * runs.count + 32 * pending.count }

    static func payloadPerPage(_ pageSize: Int) -> Int { pageSize - PageLayout.headerSize }

    func encode() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: encodedSize) { buffer, count in
            if let base = buffer.baseAddress { encode(into: UnsafeMutableRawPointer(base)) }
            count = encodedSize
        }
    }

    /// Stores the encoding (`encodedSize` bytes) at `destination`: one store per field, not an
    /// append per field to an array (every commit encodes the free list).
    func encode(into destination: UnsafeMutableRawPointer) {
        guard encodedSize > 0 else { return }
        var at = destination
        @inline(__always) func store(_ v: UInt64) {
            at.setUInt64(v.littleEndian, at: 0)
            at += 8
        }
        store(UInt64(runs.count))
        store(UInt64(pending.count))
        for run in runs { store(run.start); store(run.count) }
        for run in pending { store(run.start); store(run.count); store(run.birth); store(run.death) }
    }

    static func decode(_ bytes: [UInt8], pageCount: UInt64, firstPage: PageNumber) throws -> FreeSpace {
        var space = FreeSpace(pageCount: pageCount)
        guard !bytes.isEmpty else { return space }
        return try bytes.withUnsafeBytes { raw in
            func fail(_ why: String) -> StorageError { .corrupted(page: firstPage, reason: "free list: \(why)") }
            guard raw.count >= 16 else { throw fail("too short") }
            let runCount = raw.uint64(at: 0)
            let pendingCount = raw.uint64(at: 8)
            guard runCount <= UInt64(raw.count), pendingCount <= UInt64(raw.count),
                  16 + 16 * Int(runCount) + 32 * Int(pendingCount) <= raw.count else { throw fail("counts exceed its length") }
            var at = 16
            func next() -> UInt64 { defer { at += 8 }; return raw.uint64(at: at) }
            for _ in 0..<runCount {
                let run = FreeRun(start: next(), count: next())
                guard run.start >= FileHeader.firstDataPage, run.count > 0, run.start + run.count <= pageCount,
                      (space.runs.last.map { $0.start + $0.count <= run.start } ?? true)
                else { throw fail("run \(run.start)+\(run.count) out of order or bounds") }
                space.runs.append(run)
            }
            for _ in 0..<pendingCount {
                let run = PendingRun(start: next(), count: next(), birth: next(), death: next())
                guard run.start >= FileHeader.firstDataPage, run.count > 0, run.start + run.count <= pageCount
                else { throw fail("pending run \(run.start)+\(run.count) out of bounds") }
                space.pending.append(run)
            }
            return space
        }
    }
}
