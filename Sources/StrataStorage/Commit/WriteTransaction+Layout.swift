// The layout half of a commit (steps 1–2 in Commit.swift): the write transaction's changed
// nodes rebalanced and spilled to page images in one contiguous stretch where possible, the
// free list encoded, and the meta that describes the new version. Nothing is written to the
// file here. See MetaPage.swift for records, anchors and announced stretches.

extension WriteTransaction {
    /// Moves the pages earlier commits freed that no pinned version reaches any more into the
    /// reusable runs, before the commit allocates. Done here rather than when the transaction
    /// begins: nothing allocates before, a logged commit lays out its pages while the disk
    /// writes its record (so this costs its commit nothing there), and pins dropped meanwhile
    /// free more. The runs this transaction freed stay pending: the version it started from
    /// is the newest until its commit is published, and a reader may start on it.
    func releaseFreedPages() {
        let (pins, foreign) = engine.writePins(base: snapshot.meta)
        let kept = freeSpace.release(pinned: pins, runs: pendingRunsAtStart)
        // Only a slot of another process can belong to one that died: with none pinning
        // there is nothing to reclaim (the usual case, a reader of this process, needs no
        // liveness check).
        if foreign && kept > 0 && engine.lockFile.reclaimDeadSlots() > 0 {
            freeSpace.release(pinned: engine.writePins(base: snapshot.meta).pins, runs: kept)
        }
    }

    /// Pages announced for the next commits' records and data when a new stretch is needed:
    /// commits then fill it one after another, like a log segment (see MetaPage.swift).
    static let segmentPages = 16
    /// The least a stretch left over by this commit must hold to be announced for the next.
    static let minimumAnnounced = 8

    /// Steps 1–2 of the commit (Commit.swift), everything up to the file writes: the changed
    /// trees rebalanced and spilled to page images, the free list encoded; returns the new
    /// meta. With `chain` (the base meta, when it announced a stretch and durability allows),
    /// the commit tries to become a record written at the start of that stretch, followed by
    /// its pages. `logged`: a logged commit (CommitLog.swift): its meta goes to a page of its
    /// own stretch (outside the slots and the chain, where recovery never looks); it keeps the
    /// base's chain (recovery's way to the generation's base) and announces nothing.
    func layOut(chain base: MetaPage?, logged: Bool = false) throws -> MetaPage {
        releaseFreedPages()
        // A logged commit keeps the free list in its meta when it fits there, leaving room for
        // the one chain record a checkpoint adds when it anchors this meta (`checkpoint`):
        // one page fewer to write. (The free list is small unless a log generation has
        // piled up pending runs of its base's pages.)
        let freeListInMetaCapacity = logged
            ? MetaPage.freeListCapacity(pageSize: pageSize, chainCount: snapshot.meta.chain.count + 1) : 0
        var recordPage = try reserveStretch(chain: base, logged: logged, freeListInMetaCapacity: freeListInMetaCapacity)
        let catalogRoot = try spillTrees(logged: logged)
        let chainRecords = placeMeta(recordPage: &recordPage, logged: logged)
        let freeList = try writeFreeList(inMetaCapacity: freeListInMetaCapacity)
        newFreeListPages = freeList.chain
        var meta = MetaPage(
            txid: txid, catalogRoot: catalogRoot, pageCount: freeSpace.pageCount,
            freeListHead: freeList.chain.first ?? 0, freeListPages: UInt32(freeList.chain.count),
            flags: engine.options.durability == .none ? MetaPage.flagUnsynced : 0,
            freeListBirth: txid, written: [])
        meta.chain = chainRecords
        if freeList.inMeta && freeSpace.encodedSize > 0 {
            meta.freeList = freeSpace.encode()
            meta.flags |= MetaPage.flagFreeListInMeta
        }
        let baseMeta = snapshot.meta
        if logged, let page = recordPage {
            meta.selfPage = page
            meta.anchorSlot = baseMeta.anchorSlot
            return meta
        } else if let page = recordPage {
            meta.selfPage = page
            meta.token = baseMeta.nextToken
            meta.anchorSlot = baseMeta.anchorSlot
        } else {
            meta.anchorSlot = baseMeta.anchorSlot == 1 ? 2 : 1
            meta.selfPage = PageNumber(meta.anchorSlot)
        }
        announceNextStretch(in: &meta, leftover: freeList.leftover)
        return meta
    }

    /// Reserves one contiguous stretch for everything this commit writes (estimated; overflow
    /// beyond the estimate falls back to ordinary allocation): the stretch `base` announced
    /// when it is long enough, its first page then the commit's record. Returns the page the
    /// commit's meta goes to when it is not an anchor (a record, or a logged meta).
    private func reserveStretch(chain base: MetaPage?, logged: Bool, freeListInMetaCapacity: Int) throws -> PageNumber? {
        let limit = engine.maximumPages
        var estimate = freeSpace.encodedSize + 64 + 16 <= freeListInMetaCapacity
            ? 2 : 2 + (freeSpace.encodedSize + 64 + FreeSpace.payloadPerPage(pageSize) - 1) / FreeSpace.payloadPerPage(pageSize)
        for state in states where state.changed { if let root = state.rootNode { estimate += pagesToWrite(root, leaves: !logged) } }
        // One allocation for the list of written pages, not one per doubling (a one-object
        // commit writes ~12; a logged commit's estimate leaves its leaves out).
        dirty.reserveCapacity(max(16, estimate + 8))
        // A logged commit's stretch holds only the pages every such commit rewrites (its
        // meta, the branches above its leaves, the catalog, the free list); its leaves go to
        // single free pages. The next commits free the whole stretch again (a leaf usually
        // stays), so a stretch that size is free for the commit after: two write calls
        // instead of one per page. (Its pages are not synced, so placement costs the disk
        // nothing; for other commits one stretch saves requests at the sync.)
        leavesApart = logged
        var recordPage: PageNumber?
        if let base, estimate + 1 <= Int(base.nextPages),
           freeSpace.reserveExact(start: base.nextPage, count: Int(base.nextPages), limitPages: limit) {
            recordPage = freeSpace.takeReserved(1)
        } else {
            try freeSpace.reserve(estimate, limitPages: limit)
            if logged { recordPage = try freeSpace.takeReserved(1) ?? freeSpace.allocate(1, limitPages: limit) }
        }
        return recordPage
    }

    /// Rebalances and spills every changed tree, records the new roots in the catalog, and
    /// spills the catalog; returns the catalog's root.
    private func spillTrees(logged: Bool) throws -> PageNumber {
        for state in states where state.changed || state.dropped {
            // The name's bytes in place (a native string's UTF-8), not copied into an array.
            var name = state.name
            if state.dropped {
                _ = try name.withUTF8 { try deleteInState(catalog, UnsafeRawBufferPointer($0)) }
                continue
            }
            state.root = try finishTree(state)
            state.rootNode = nil
            try TreeInfo(root: state.root, count: state.count).withEncoded { value in
                _ = try name.withUTF8 { try put(value, forKey: UnsafeRawBufferPointer($0), in: catalog) }
            }
        }
        // The catalog's pages are rewritten by every commit that changes a tree: in the stretch.
        leavesApart = false
        return try finishTree(catalog)
    }

    /// Decides between a record and an anchor (a record must list every page it wrote, so
    /// one that would list too many gives its page back) and returns the chain of records the
    /// meta carries; frees the meta pages the new version no longer needs.
    private func placeMeta(recordPage: inout PageNumber?, logged: Bool) -> [MetaPage.ChainRecord] {
        let listCapacity = MetaPage.listCapacity(pageSize: pageSize)
        if !logged, let page = recordPage, dirty.count + (freeSpace.encodedSize + 64) / FreeSpace.payloadPerPage(pageSize) + 2 > listCapacity {
            freeSpace.free(start: page, count: 1, birth: txid, death: txid)
            recordPage = nil
        }
        let baseMeta = snapshot.meta
        // A logged base's meta page is needed by nobody once no snapshot reads that version.
        if baseMeta.isLogged { freeSpace.free(start: baseMeta.selfPage, count: 1, birth: baseMeta.txid, death: txid) }
        var chainRecords: [MetaPage.ChainRecord] = []
        if logged {
            chainRecords = baseMeta.chain
        } else if let page = recordPage {
            chainRecords = baseMeta.chain + [MetaPage.ChainRecord(page: page, txid: txid)]
        } else {
            // An anchor ends the chain: its records may be reused once no snapshot reads them.
            for record in baseMeta.chain {
                freeSpace.free(start: record.page, count: 1, birth: record.txid, death: txid)
            }
        }
        return chainRecords
    }

    /// The free list after this commit: the old chain is freed; the new chain is reserved from
    /// the tail so that reserving never makes the encoding longer, and its pages are encoded
    /// (nothing when the list fits the meta). Ends the commit's reservation; returns the chain,
    /// whether the list goes in the meta, and what is left of the reserved stretch.
    private func writeFreeList(inMetaCapacity freeListInMetaCapacity: Int) throws
        -> (chain: [PageNumber], inMeta: Bool, leftover: (start: PageNumber, count: Int)?) {
        let limit = engine.maximumPages
        for page in oldFreeListPages {
            freeSpace.free(start: page, count: 1, birth: snapshot.meta.freeListBirth, death: txid)
        }
        let payload = FreeSpace.payloadPerPage(pageSize)
        var chain: [PageNumber] = []
        // Returning the rest of the reservation adds at most one run (16 bytes) to the encoding.
        let freeListInMeta = freeSpace.encodedSize + 16 <= freeListInMetaCapacity
        if !freeListInMeta {
            // Take the chain from what is left of the reservation, sized for the encoding after
            // the rest of the reservation is returned.
            let wanted = (freeSpace.encodedSize + 16 + payload - 1) / payload
            if let first = freeSpace.takeReserved(wanted) {
                chain = (0..<UInt64(wanted)).map { first + $0 }
            }
        }
        let leftover = freeSpace.reservation.map { (start: $0.next, count: Int($0.end - $0.next)) }
        freeSpace.endReservation()
        // Taking from the tail never makes the encoding longer, so this converges.
        while !freeListInMeta && chain.count * payload < freeSpace.encodedSize {
            chain.append(try freeSpace.takeFromTail(limitPages: limit))
        }
        if !chain.isEmpty {
            // One page: encoded straight into its image. Longer chains: into a scratch buffer
            // of whole payloads, then page by page.
            let encodedSize = freeSpace.encodedSize
            let scratch: UnsafeMutableRawPointer?
            if chain.count > 1 {
                let buffer = arena.allocate(chain.count * payload, alignment: 16)
                buffer.initializeMemory(as: UInt8.self, repeating: 0, count: chain.count * payload)
                freeSpace.encode(into: buffer)
                scratch = buffer
            } else {
                scratch = nil
            }
            for (i, page) in chain.enumerated() {
                let image = arena.allocate(pageSize, alignment: 4096)
                let next = i + 1 < chain.count ? chain[i + 1] : 0
                PageWriter.writeHeader(image, kind: .freeList, count: 0, number: page, txid: txid, aux: next)
                let body = image + PageLayout.headerSize
                if let scratch {
                    body.copyMemory(from: scratch + i * payload, byteCount: payload)
                } else {
                    freeSpace.encode(into: body)
                    (body + encodedSize).initializeMemory(as: UInt8.self, repeating: 0, count: payload - encodedSize)
                }
                let sum = PageWriter.seal(image, length: pageSize)
                dirty.append(DirtyPage(page: page, pages: 1, image: image, checksum: sum))
            }
        }
        return (chain, freeListInMeta, leftover)
    }

    /// Announces where the next commit may put its record: a free stretch, or the end. The
    /// rest of this commit's stretch if it is long enough, else a new one.
    private func announceNextStretch(in meta: inout MetaPage, leftover: (start: PageNumber, count: Int)?) {
        let limit = engine.maximumPages
        let announced: (PageNumber, Int)?
        if let leftover, leftover.count >= Self.minimumAnnounced {
            announced = (leftover.start, leftover.count)
        } else {
            announced = freeSpace.announce(Self.segmentPages, minimum: Self.minimumAnnounced)
        }
        if let (next, length) = announced, next + UInt64(length) <= limit {
            meta.nextPage = next
            meta.nextPages = UInt32(length)
            meta.nextToken = engine.nextToken()
        }
    }

    /// Pages the materialised subtree will take when written; without `leaves`, only its
    /// branches.
    private func pagesToWrite(_ node: Node, leaves: Bool = true) -> Int {
        let capacity = pageSize - PageLayout.headerSize
        if node.isLeaf && !leaves { return 0 }
        var pages = max(1, (node.size + capacity - 1) / capacity)
        if node.isLeaf {
            for value in node.values where value.overflowPage == 0 && value.bytes.count + PageLayout.leafCellHeader > inlineLimit {
                pages += PageLayout.overflowPages(length: value.bytes.count, pageSize: pageSize)
            }
        } else {
            for child in node.children { if let c = child.node { pages += pagesToWrite(c, leaves: leaves) } }
        }
        return pages
    }

    /// Rebalances and writes one tree's nodes; returns its new root page (0: empty).
    private func finishTree(_ state: TreeState) throws -> PageNumber {
        guard let root = state.rootNode else { return state.root }
        if !root.isLeaf { try rebalance(root) }
        var top = root
        while !top.isLeaf && top.count == 1 {
            guard let child = top.children[0].node else { return top.children[0].page }
            top = child
        }
        if top.count == 0 { return 0 }
        var produced = try spill(top)
        while produced.count > 1 {
            let parent = Node(isLeaf: false)
            for i in 0..<produced.count {
                let entry = produced[i]
                parent.keys.append(entry.key)
                parent.children.append(ChildReference(page: entry.page, node: nil))
            }
            parent.recomputeSize(inlineLimit: inlineLimit)
            produced = try spill(parent)
        }
        return produced[0].page
    }

    /// Merges under-filled materialised children into a neighbour, bottom-up.
    private func rebalance(_ node: Node) throws {
        for child in node.children { if let c = child.node, !c.isLeaf { try rebalance(c) } }
        var i = 0
        while i < node.children.count {
            guard let child = node.children[i].node, child.size < mergeThreshold else { i += 1; continue }
            if child.count == 0 {
                node.size -= Node.branchEntrySize(key: node.keys[i].count)
                node.keys.remove(at: i)
                node.children.remove(at: i)
                continue
            }
            if node.children.count == 1 { break }
            if i > 0 {
                let left = try materializeChild(node, i - 1)
                left.absorb(child)
                node.size -= Node.branchEntrySize(key: node.keys[i].count)
                node.keys.remove(at: i)
                node.children.remove(at: i)
            } else {
                let right = try materializeChild(node, i + 1)
                child.absorb(right)
                node.size -= Node.branchEntrySize(key: node.keys[i + 1].count)
                node.keys.remove(at: i + 1)
                node.children.remove(at: i + 1)
            }
        }
    }

    /// Writes a node as one or more pages; returns (first key, page) for each.
    private func spill(_ node: Node) throws -> SpilledPages {
        if !node.isLeaf {
            // In place while every written child becomes one page (the common case: a put
            // rewrites one path); rebuilt from the first child that splits or vanishes.
            var rebuilding = false
            var keys = KeyList()
            var children = ContiguousArray<ChildReference>()
            for i in 0..<node.count {
                if let child = node.children[i].node {
                    let produced = child.count > 0 ? try spill(child) : SpilledPages()
                    if !rebuilding {
                        if produced.count == 1 {
                            node.keys.replace(at: i, with: produced[0].key)
                            node.children[i] = ChildReference(page: produced[0].page, node: nil)
                            continue
                        }
                        rebuilding = true
                        keys.reserveCapacity(node.count + 4)
                        children.reserveCapacity(node.count + 4)
                        for j in 0..<i {
                            keys.append(node.keys[j])
                            children.append(node.children[j])
                        }
                    }
                    for k in 0..<produced.count {
                        let entry = produced[k]
                        keys.append(entry.key)
                        children.append(ChildReference(page: entry.page, node: nil))
                    }
                } else if rebuilding {
                    keys.append(node.keys[i])
                    children.append(node.children[i])
                }
            }
            if rebuilding {
                node.keys = keys
                node.children = children
            }
            node.recomputeSize(inlineLimit: inlineLimit)
        }
        let capacity = pageSize - PageLayout.headerSize
        var produced = SpilledPages()
        let groups = max(1, (node.size + capacity - 1) / capacity)
        let target = node.size / groups
        var start = 0
        // A node that fits one page (the common case) is written whole, and has its keys and
        // values pointed at the page's cells in the mapping as they are written, so that the
        // next transaction can take it instead of reading the page (`Arena.stageWritten`).
        let mapped: UnsafeRawPointer? = groups == 1 ? snapshot.base : nil
        while start < node.count {
            var end = start
            var bytes = 0
            // No need to size the entries of a node that fits one page one by one (its size is
            // kept exact; `writeLeaf` and `writeBranch` still check that every cell fits).
            if mapped != nil { end = node.count }
            while end < node.count {
                let size = node.entrySize(end, inlineLimit: inlineLimit)
                if end > start && (bytes + size > capacity || bytes >= target) { break }
                bytes += size
                end += 1
            }
            let page = try freeSpace.allocate(1, limitPages: engine.maximumPages, reserved: !(node.isLeaf && leavesApart))
            // The first key as it was: a re-pointed key's page is not written yet, and the
            // parent copies this key's bytes when it is written.
            let first = node.keys[start]
            if node.isLeaf { try writeLeaf(node, start..<end, page: page, mapped: mapped) } else { try writeBranch(node, start..<end, page: page, mapped: mapped) }
            produced.append(key: first, page: page)
            start = end
        }
        // Written: the node is not read again by this transaction (its keys' bytes, which
        // `produced` holds, live in the mapping or the arena, not in the node). A node written
        // whole to one page is offered to the next transaction.
        if mapped != nil {
            arena.stageWritten(node, page: produced[0].page)
        } else {
            arena.recycle(node)
        }
        return produced
    }

    /// Writes entries `range` of a leaf as page `page`. With `mapped` (the mapping's first
    /// byte; `range` must then be the whole node), the node's keys and values are pointed at
    /// the page's cells in the mapping (and values in overflow runs at their runs), valid once
    /// the commit's pages are written.
    private func writeLeaf(_ node: Node, _ range: Range<Int>, page: PageNumber, mapped: UnsafeRawPointer?) throws {
        let image = arena.allocate(pageSize, alignment: 4096)
        PageWriter.writeHeader(image, kind: .leaf, count: range.count, number: page, txid: txid, aux: 0)
        let target = mapped.map { $0 + Int(page) * pageSize }
        let header = PageLayout.leafCellHeader
        let slotsEnd = PageLayout.headerSize + 2 * range.count
        var cellEnd = pageSize
        // The node's arrays through their buffers: one uniqueness check each for the page,
        // not one per entry (`writeOverflow` does not touch the node).
        try node.keys.withRebasableKeys { keys in
            try node.values.withUnsafeMutableBufferPointer { values in
                for (slot, i) in range.enumerated() {
                    let key = keys[i]
                    var value = values[i]
                    let inline = header + key.count + value.bytes.count <= inlineLimit
                    if !inline && value.overflowPage == 0 {
                        value.overflowPage = try writeOverflow(value)
                        values[i] = value
                    }
                    cellEnd -= header + key.count + (inline ? value.bytes.count : 8)
                    guard cellEnd >= slotsEnd else { throw Self.overfullPage(page) }
                    let cell = image + cellEnd
                    cell.setUInt16(UInt16(key.count), at: 0)
                    let field = inline ? UInt32(value.bytes.count) : UInt32(value.bytes.count) | PageLayout.overflowFlag
                    cell.setUInt32(field, at: 2)
                    copyShort(cell + header, key)
                    if inline {
                        copyShort(cell + header + key.count, value.bytes)
                    } else {
                        (cell + header + key.count).setUInt64(value.overflowPage, at: 0)
                    }
                    image.setUInt16(UInt16(cellEnd), at: PageLayout.headerSize + 2 * slot)
                    if let target, let mapped {
                        let at = target + cellEnd + header
                        keys[i] = UnsafeRawBufferPointer(start: at, count: key.count)
                        let start = inline ? at + key.count : mapped + Int(value.overflowPage) * pageSize + PageLayout.headerSize
                        values[i] = LeafValue(bytes: UnsafeRawBufferPointer(start: start, count: value.bytes.count), overflowPage: inline ? 0 : value.overflowPage)
                    }
                }
            }
        }
        (image + slotsEnd).initializeMemory(as: UInt8.self, repeating: 0, count: cellEnd - slotsEnd)
        let sum = PageWriter.seal(image, length: pageSize)
        dirty.append(DirtyPage(page: page, pages: 1, image: image, checksum: sum))
    }

    /// Writes entries `range` of a branch as page `page`; with `mapped`, as `writeLeaf`.
    private func writeBranch(_ node: Node, _ range: Range<Int>, page: PageNumber, mapped: UnsafeRawPointer?) throws {
        let image = arena.allocate(pageSize, alignment: 4096)
        PageWriter.writeHeader(image, kind: .branch, count: range.count, number: page, txid: txid, aux: 0)
        let target = mapped.map { $0 + Int(page) * pageSize }
        let header = PageLayout.branchCellHeader
        let slotsEnd = PageLayout.headerSize + 2 * range.count
        var cellEnd = pageSize
        try node.keys.withRebasableKeys { keys in
            try node.children.withUnsafeBufferPointer { children in
                for (slot, i) in range.enumerated() {
                    let key = keys[i]
                    cellEnd -= header + key.count
                    guard cellEnd >= slotsEnd else { throw Self.overfullPage(page) }
                    let cell = image + cellEnd
                    cell.setUInt64(children[i].page, at: 0)
                    cell.setUInt16(UInt16(key.count), at: 8)
                    copyShort(cell + header, key)
                    image.setUInt16(UInt16(cellEnd), at: PageLayout.headerSize + 2 * slot)
                    if let target { keys[i] = UnsafeRawBufferPointer(start: target + cellEnd + header, count: key.count) }
                }
            }
        }
        (image + slotsEnd).initializeMemory(as: UInt8.self, repeating: 0, count: cellEnd - slotsEnd)
        let sum = PageWriter.seal(image, length: pageSize)
        dirty.append(DirtyPage(page: page, pages: 1, image: image, checksum: sum))
    }

    /// A node's entries did not fit the page its accounted size said they would: an engine bug,
    /// reported instead of writing past the page's image.
    private static func overfullPage(_ page: PageNumber) -> StorageError {
        .corrupted(page: page, reason: "internal error: a node's entries do not fit the page it was sized for")
    }

    private func writeOverflow(_ value: LeafValue) throws -> PageNumber {
        let bytes = value.bytes
        let pages = PageLayout.overflowPages(length: bytes.count, pageSize: pageSize)
        let page = try freeSpace.allocate(pages, limitPages: engine.maximumPages, reserved: !leavesApart)
        let length = pages * pageSize
        let image: UnsafeMutableRawPointer
        if value.inOverflowImage, let start = bytes.baseAddress {
            // `put` already laid the value out in its image (`overflowImage`).
            image = UnsafeMutableRawPointer(mutating: start) - PageLayout.headerSize
        } else {
            image = arena.allocate(length, alignment: 4096)
            if bytes.count > 0 { (image + PageLayout.headerSize).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            let tail = PageLayout.headerSize + bytes.count
            (image + tail).initializeMemory(as: UInt8.self, repeating: 0, count: length - tail)
        }
        PageWriter.writeHeader(image, kind: .overflow, count: 0, number: page, txid: txid, aux: UInt64(bytes.count))
        let sum = PageWriter.seal(image, length: length)
        dirty.append(DirtyPage(page: page, pages: pages, image: image, checksum: sum))
        return page
    }
}

/// The pages `spill` wrote for one node, as (first key, page): nearly always one, which is kept
/// inline so that a commit of one path allocates no array per node it writes.
struct SpilledPages {
    private var first: (key: UnsafeRawBufferPointer, page: PageNumber) = (UnsafeRawBufferPointer(start: nil, count: 0), 0)
    private var rest: [(key: UnsafeRawBufferPointer, page: PageNumber)] = []
    private(set) var count = 0

    mutating func append(key: UnsafeRawBufferPointer, page: PageNumber) {
        if count == 0 { first = (key, page) } else { rest.append((key, page)) }
        count += 1
    }

    subscript(index: Int) -> (key: UnsafeRawBufferPointer, page: PageNumber) {
        index == 0 ? first : rest[index - 1]
    }
}
