// Read access to one committed version: page lookup with bounds and checksum checks, and tree
// search over pages. Everything returned points into the read-only mapping and stays valid for
// as long as the version is pinned.

struct Snapshot {
    let base: UnsafeRawPointer
    let pageSize: Int
    let meta: MetaPage
    let verifier: PageVerifier

    static let maximumDepth = 48

    var txid: UInt64 { meta.txid }

    /// The page `number`, checked: in bounds, of the expected kind, and (once per content)
    /// checksummed and structurally sound. Damage is an error, never a crash.
    @inline(__always)
    func page(_ number: PageNumber) throws -> PageView {
        guard number >= FileHeader.firstDataPage && number < meta.pageCount else {
            throw StorageError.corrupted(page: number, reason: "page number out of range (page count \(meta.pageCount))")
        }
        let view = PageView(base: base + Int(number) * pageSize)
        if verifier.isVerified(number, birth: view.txid) { return view }
        try verify(view, number: number)
        return view
    }

    func treePage(_ number: PageNumber) throws -> PageView {
        let view = try page(number)
        guard view.kindRaw == PageKind.leaf.rawValue || view.kindRaw == PageKind.branch.rawValue else {
            throw StorageError.corrupted(page: number, reason: "expected a tree page, found kind \(view.kindRaw)")
        }
        return view
    }

    func verify(_ view: PageView, number: PageNumber) throws {
        guard view.number == number else {
            throw StorageError.corrupted(page: number, reason: "page header names page \(view.number)")
        }
        guard view.txid <= meta.txid else {
            throw StorageError.corrupted(page: number, reason: "page written by txid \(view.txid), after this version")
        }
        var length = pageSize
        switch PageKind(rawValue: view.kindRaw) {
        case .leaf?, .branch?:
            try checkSlots(view, number: number)
        case .overflow?:
            let bytes = view.aux
            guard bytes <= UInt64(Int32.max) else { throw StorageError.corrupted(page: number, reason: "overflow length \(bytes)") }
            let pages = PageLayout.overflowPages(length: Int(bytes), pageSize: pageSize)
            guard number + UInt64(pages) <= meta.pageCount else {
                throw StorageError.corrupted(page: number, reason: "overflow run past the end of the file")
            }
            length = pages * pageSize
        case .freeList?:
            break
        case nil:
            throw StorageError.corrupted(page: number, reason: "unknown page kind \(view.kindRaw)")
        }
        let sum = crc32c(view.base + 4, count: length - 4)
        guard sum == view.storedChecksum else {
            throw StorageError.corrupted(page: number, reason: "checksum mismatch")
        }
        if case .leaf? = PageKind(rawValue: view.kindRaw) { try checkCells(view, number: number, leaf: true) }
        if case .branch? = PageKind(rawValue: view.kindRaw) { try checkCells(view, number: number, leaf: false) }
        verifier.markVerified(number, birth: view.txid)
    }

    private func checkSlots(_ view: PageView, number: PageNumber) throws {
        guard PageLayout.headerSize + 2 * view.count <= pageSize else {
            throw StorageError.corrupted(page: number, reason: "entry count \(view.count) does not fit the page")
        }
    }

    /// Every cell lies inside the page: after this, cell accessors cannot read out of bounds.
    private func checkCells(_ view: PageView, number: PageNumber, leaf: Bool) throws {
        let slotsEnd = PageLayout.headerSize + 2 * view.count
        for i in 0..<view.count {
            let offset = view.cellOffset(i)
            let header = leaf ? PageLayout.leafCellHeader : PageLayout.branchCellHeader
            guard offset >= slotsEnd, offset + header <= pageSize else {
                throw StorageError.corrupted(page: number, reason: "cell \(i) out of bounds")
            }
            let cell = view.base + offset
            if leaf {
                let keyLength = Int(cell.loadUnaligned(as: UInt16.self))
                let field = cell.loadUnaligned(fromByteOffset: 2, as: UInt32.self)
                let valueLength = field & PageLayout.overflowFlag != 0 ? 8 : Int(field)
                guard offset + header + keyLength + valueLength <= pageSize else {
                    throw StorageError.corrupted(page: number, reason: "cell \(i) overruns the page")
                }
            } else {
                let keyLength = Int(cell.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
                guard offset + header + keyLength <= pageSize else {
                    throw StorageError.corrupted(page: number, reason: "cell \(i) overruns the page")
                }
            }
        }
    }

    /// The bytes of a leaf value, following an overflow reference when there is one.
    @inline(__always)
    func leafValue(_ view: PageView, _ index: Int) throws -> UnsafeRawBufferPointer {
        let (field, pointer) = view.leafValueField(index)
        if field & PageLayout.overflowFlag == 0 {
            return UnsafeRawBufferPointer(start: pointer, count: Int(field))
        }
        let length = Int(field & ~PageLayout.overflowFlag)
        let runPage = pointer.loadUnaligned(as: UInt64.self)
        let run = try page(runPage)
        guard run.kindRaw == PageKind.overflow.rawValue, run.aux == UInt64(length) else {
            throw StorageError.corrupted(page: runPage, reason: "overflow run does not match its reference")
        }
        return UnsafeRawBufferPointer(start: run.base + PageLayout.headerSize, count: length)
    }

    /// Pages with fewer entries are searched by bisection only.
    static let interpolationMinimum = 16

    /// A first probe in `low..<high` for `key`, interpolated between the range's first and last
    /// keys on the eight bytes after their common prefix; nil when `key` lies outside them or
    /// they give no spread. Only the first probe is chosen this way; the search then bisects
    /// as before, so a poor guess costs one comparison and never correctness. For integer keys
    /// spread evenly over a page (primary keys, object keys) the guess is usually the entry or
    /// next to it, saving most of the cache misses of a bisection.
    @inline(__always)
    static func interpolate(_ key: UnsafeRawBufferPointer, _ first: UnsafeRawBufferPointer, _ last: UnsafeRawBufferPointer,
                            _ low: Int, _ high: Int) -> Int? {
        let limit = min(first.count, last.count)
        var common = 0
        while common < limit && first[common] == last[common] { common += 1 }
        guard key.count >= common else { return nil }
        for i in 0..<common where key[i] != first[i] { return nil }
        let a = window(first, from: common), b = window(last, from: common), k = window(key, from: common)
        guard a < b, k >= a, k <= b else { return nil }
        let fraction = Double(k - a) / Double(b - a)
        let guess = low + Int(fraction * Double(high - 1 - low))
        return min(max(guess, low), high - 1)
    }

    /// Eight bytes of `bytes` from `offset`, big-endian, zero-padded past the end.
    @inline(__always)
    static func window(_ bytes: UnsafeRawBufferPointer, from offset: Int) -> UInt64 {
        var value: UInt64 = 0
        let end = min(bytes.count, offset + 8)
        var i = offset
        while i < end { value |= UInt64(bytes[i]) << UInt64(56 - 8 * (i - offset)); i += 1 }
        return value
    }

    /// Index of the child of a branch page to descend into for `key`: the last entry whose key
    /// is ≤ `key`, or the first entry when all are greater (the first key acts as −∞).
    @inline(__always)
    static func childIndex(_ view: PageView, _ key: UnsafeRawBufferPointer) -> Int {
        var low = 1, high = view.count  // search entries 1..<count
        if high - low >= interpolationMinimum, let guess = interpolate(key, view.branchKey(low), view.branchKey(high - 1), low, high) {
            if compareBytes(view.branchKey(guess), key) <= 0 { low = guess + 1 } else { high = guess }
        }
        while low < high {
            let mid = (low + high) >> 1
            if compareBytes(view.branchKey(mid), key) <= 0 { low = mid + 1 } else { high = mid }
        }
        return low - 1
    }

    /// Position of `key` in a leaf page: (index, found). When not found, index is where it
    /// would be inserted.
    @inline(__always)
    static func leafSearch(_ view: PageView, _ key: UnsafeRawBufferPointer) -> (Int, Bool) {
        var low = 0, high = view.count
        if high - low >= interpolationMinimum, let guess = interpolate(key, view.leafKey(low), view.leafKey(high - 1), low, high) {
            let c = compareBytes(view.leafKey(guess), key)
            if c == 0 { return (guess, true) }
            if c < 0 { low = guess + 1 } else { high = guess }
        }
        while low < high {
            let mid = (low + high) >> 1
            let c = compareBytes(view.leafKey(mid), key)
            if c == 0 { return (mid, true) }
            if c < 0 { low = mid + 1 } else { high = mid }
        }
        return (low, false)
    }

    /// Looks up `key` in the tree rooted at `root`; returns the value's bytes.
    func get(root: PageNumber, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        guard root != 0 else { return nil }
        var number = root
        for _ in 0..<Self.maximumDepth {
            let view = try treePage(number)
            if view.isLeaf {
                let (index, found) = Self.leafSearch(view, key)
                return found ? try leafValue(view, index) : nil
            }
            guard view.count > 0 else { throw StorageError.corrupted(page: number, reason: "empty branch page") }
            number = view.branchChild(Self.childIndex(view, key))
        }
        throw StorageError.corrupted(page: root, reason: "tree deeper than \(Self.maximumDepth) levels (a cycle?)")
    }
}
