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
                let keyLength = Int(cell.uint16(at: 0))
                let field = cell.uint32(at: 2)
                let valueLength = field & PageLayout.overflowFlag != 0 ? 8 : Int(field)
                guard offset + header + keyLength + valueLength <= pageSize else {
                    throw StorageError.corrupted(page: number, reason: "cell \(i) overruns the page")
                }
            } else {
                let keyLength = Int(cell.uint16(at: 8))
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
        let runPage = pointer.uint64(at: 0)
        let run = try page(runPage)
        guard run.kindRaw == PageKind.overflow.rawValue, run.aux == UInt64(length) else {
            throw StorageError.corrupted(page: runPage, reason: "overflow run does not match its reference")
        }
        return UnsafeRawBufferPointer(start: run.base + PageLayout.headerSize, count: length)
    }

    /// Looks up `key` in the tree rooted at `root`; returns the value's bytes.
    func get(root: PageNumber, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        guard root != 0 else { return nil }
        var number = root
        // The separators around the branch entry taken at each level bound the keys of the
        // page below (lower ≤ key < upper); a leaf search aims its first probe with them
        // instead of reading the leaf's own first and last keys (three cache misses fewer).
        var bounds = KeyBounds()
        for _ in 0..<Self.maximumDepth {
            let view = try treePage(number)
            if view.isLeaf {
                let (index, found) = Self.leafSearch(view, key, bounds: bounds)
                return found ? try leafValue(view, index) : nil
            }
            guard view.count > 0 else { throw StorageError.corrupted(page: number, reason: "empty branch page") }
            let child = Self.childIndex(view, key, bounds: bounds)
            bounds.narrow(to: view, child: child)
            number = view.branchChild(child)
        }
        throw StorageError.corrupted(page: root, reason: "tree deeper than \(Self.maximumDepth) levels (a cycle?)")
    }
}
