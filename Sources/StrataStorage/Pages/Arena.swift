// Bump allocation for the bytes a write transaction copies in (keys, values) and for the page
// images it writes at commit. Everything is freed at once when the transaction ends, so the
// put path allocates nothing per entry once a chunk is warm.
//
// Unsafe: the arena owns its chunks and large blocks (`UnsafeMutableRawPointer.allocate`) and
// hands out pointers into them. Every pointer it returns is valid until `reset()` or `deinit`;
// the write transaction holding the arena resets it only when it ends, after its commit has
// written the page images, and the nodes the arena keeps for the next transaction point into
// the mapping, never into the arena. `allocate` returns `count` bytes at the requested
// alignment; callers stay within them. Only the transaction holding the arena touches it.

final class Arena {
    /// Standard chunks, `chunkSize` bytes each; the first is kept across resets.
    private var chunks: [UnsafeMutableRawPointer] = []
    /// Where `StorageEngine.writePages` gathers a commit's runs of pages (kept with its
    /// capacity from one transaction to the next, as the arena is).
    var pageVectors: [UnsafeRawBufferPointer] = []
    /// Dedicated blocks for allocations too large for a chunk.
    private var large: [UnsafeMutableRawPointer] = []
    private var cursor: UnsafeMutableRawPointer?
    private var remaining = 0
    private static let chunkSize = 256 << 10

    /// Nodes a commit wrote (emptied, their arrays' capacity kept), for the next write
    /// transactions' `materialize`: a one-key commit materialises a leaf and its parent, and
    /// allocating and freeing their objects (a node and three arrays each, every array through
    /// a runtime metadata look-up) would be a large share of its CPU. A node is recycled only once its
    /// transaction is committing (`spill`), when nothing reads it again: the transaction
    /// closes whether the commit succeeds or fails. Only the transaction holding the arena
    /// touches these.
    private var spareLeaves: [Node] = []
    private var spareBranches: [Node] = []
    static let spareNodeLimit = 8

    /// Keeps a written node for reuse, if there is room.
    @inline(__always)
    func recycle(_ node: Node) {
        if node.isLeaf {
            guard spareLeaves.count < Self.spareNodeLimit else { return }
            node.empty()
            spareLeaves.append(node)
        } else {
            guard spareBranches.count < Self.spareNodeLimit else { return }
            node.empty()
            spareBranches.append(node)
        }
    }

    /// Nodes the last commit wrote whole, each to one page, that mirror those pages exactly
    /// (the commit pointed their keys and values at the pages' cells in the mapping as it
    /// wrote them: `WriteTransaction.writeLeaf`): the next write transaction that starts from
    /// the version that commit made takes them instead of reading the pages again
    /// (`WriteTransaction.materialize`). A one-object commit rewrites the same paths as the one
    /// before it (the tail of the object tree, the primary-key index, the change log, the
    /// catalog), so it finds most of its nodes here. `keptVersion` is the version whose pages
    /// they mirror; a transaction starting from any other version drops them. At most
    /// `keptNodeLimit`.
    private var kept: [(page: PageNumber, node: Node)] = []
    private var keptVersion: UInt64 = 0
    /// The committing transaction's candidates for `kept`: they become the kept nodes only if
    /// its commit makes a version (`keepStaged`).
    private var staged: [(page: PageNumber, node: Node)] = []
    /// Where the next staged node goes once `staged` is full (the oldest is replaced: the last
    /// nodes a commit writes are the tops of its trees and the catalog).
    private var stagedNext = 0
    static let keptNodeLimit = 32
    /// How many kept nodes transactions took (for tests).
    private(set) var keptTaken = 0

    /// The node that mirrors page `page` of version `version`, taken out of the kept ones; nil
    /// when none does. Kept nodes of another version are dropped.
    @inline(__always)
    func takeKept(_ page: PageNumber, version: UInt64) -> Node? {
        guard !kept.isEmpty else { return nil }
        guard keptVersion == version else {
            dropKept()
            return nil
        }
        for i in kept.indices where kept[i].page == page {
            keptTaken &+= 1
            return kept.remove(at: i).node
        }
        return nil
    }

    /// Offers a node the committing transaction wrote whole to page `page`, its keys and
    /// values already pointing at that page's cells in the mapping, for the next transaction.
    func stageWritten(_ node: Node, page: PageNumber) {
        if staged.count < Self.keptNodeLimit {
            staged.append((page, node))
        } else {
            recycle(staged[stagedNext].node)
            staged[stagedNext] = (page, node)
            stagedNext = (stagedNext + 1) % Self.keptNodeLimit
        }
    }

    /// The committing transaction made version `version` (its pages are written and the
    /// mapping covers them): its staged nodes become the kept ones.
    func keepStaged(version: UInt64) {
        dropKept()
        swap(&kept, &staged)
        keptVersion = version
        stagedNext = 0
    }

    /// The transaction ends without making a version: its staged nodes are recycled; the kept
    /// ones stay (they still mirror the version it started from).
    func dropStaged() {
        for entry in staged { recycle(entry.node) }
        staged.removeAll(keepingCapacity: true)
        stagedNext = 0
    }

    /// Forgets the kept nodes.
    private func dropKept() {
        for entry in kept { recycle(entry.node) }
        kept.removeAll(keepingCapacity: true)
        keptVersion = 0
    }

    /// An empty node, recycled when one is spare.
    @inline(__always)
    func node(isLeaf: Bool, epoch: UInt64) -> Node {
        if let node = isLeaf ? spareLeaves.popLast() : spareBranches.popLast() {
            node.epoch = epoch
            return node
        }
        return Node(isLeaf: isLeaf, epoch: epoch)
    }

    /// Standard chunks arenas gave back, for the next transaction of any engine in the process
    /// to reuse: their pages are already mapped, where a fresh chunk's page faults (and the
    /// kernel zeroing each page) cost a bulk insert much of its CPU time. At most
    /// `pooledChunkLimit` are kept (16 MiB), so a process holds no more than that after its
    /// large transactions end.
    private static let pool = Locked<[UnsafeMutableRawPointer]>([])
    static let pooledChunkLimit = 64

    /// Chunks in the pool (for tests).
    static var pooledChunks: Int { pool.withLock { $0.count } }

    private static func takeChunk() -> UnsafeMutableRawPointer {
        if let chunk = pool.withLock({ $0.popLast() }) { return chunk }
        return UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 4096)
    }

    private static func giveBack<S: Sequence>(_ chunks: S) where S.Element == UnsafeMutableRawPointer {
        var excess: [UnsafeMutableRawPointer] = []
        pool.withLock { pool in
            for chunk in chunks {
                if pool.count < pooledChunkLimit { pool.append(chunk) } else { excess.append(chunk) }
            }
        }
        for chunk in excess { chunk.deallocate() }
    }

    func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard bytes.count > 0, bytes.baseAddress != nil else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let destination = allocate(bytes.count, alignment: 1)
        copyShort(destination, bytes)  // keys mostly: no `memmove` call for 16 bytes or fewer
        return UnsafeRawBufferPointer(start: destination, count: bytes.count)
    }

    func allocate(_ count: Int, alignment: Int) -> UnsafeMutableRawPointer {
        if count > Self.chunkSize / 4 {
            let block = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: max(alignment, 16))
            large.append(block)
            return block
        }
        if let c = cursor {
            let misalignment = Int(bitPattern: c) & (alignment - 1)
            let padding = misalignment == 0 ? 0 : alignment - misalignment
            if padding + count <= remaining {
                let result = c + padding
                cursor = result + count
                remaining -= padding + count
                return result
            }
        }
        let block = Self.takeChunk()
        chunks.append(block)
        cursor = block + count
        remaining = Self.chunkSize - count
        return block
    }

    /// Frees everything but the first chunk, which the next use starts from again: a chunk this
    /// size comes from mmap, and mapping and unmapping one would cost two system calls per commit.
    /// The other chunks go to the process's pool.
    func reset() {
        for block in large { block.deallocate() }
        large.removeAll(keepingCapacity: true)
        guard let first = chunks.first else { cursor = nil; remaining = 0; return }
        // Most transactions use one chunk: then there is nothing to give back, and the pool's
        // lock (and the lazy static behind it) stay off the end of every commit.
        guard chunks.count > 1 else {
            cursor = first
            remaining = Self.chunkSize
            return
        }
        Self.giveBack(chunks.dropFirst())
        chunks.removeAll(keepingCapacity: true)
        chunks.append(first)
        cursor = first
        remaining = Self.chunkSize
    }

    deinit {
        for block in large { block.deallocate() }
        Self.giveBack(chunks)
    }
}
