// The delete reserve: room set aside past the end of the database file so that a full volume
// can always be made emptier by deleting.
//
// Copy-on-write needs new pages before it can free old ones: a commit that deletes writes its
// changed leaves, branches, catalog and free list to free pages, and the pages it frees are
// reusable only from the next commit on (the version it starts from is the crash fallback
// until it is durable). On a full volume with no free page in the file, even a delete fails.
// So the engine keeps `pages(pageSize:)` pages allocated past the pages the newest version
// uses (`fallocate` with FALLOC_FL_KEEP_SIZE: the blocks are the file's, its size does not
// change and nothing is written).
//
// The rule, checked by every commit once its pages are laid out and before it writes any:
// - A commit whose pages reach no further than the reserve already covers, less the reserve
//   itself, goes ahead (one comparison: the usual case).
// - Otherwise the reserve grows with it: the file's blocks are allocated up to the commit's
//   page count plus the reserve, rounded up to a whole reserve (so this happens once per
//   reserve's worth of growth, not at every commit that grows the file).
// - If the volume refuses (ENOSPC, EDQUOT), the commit may still go ahead into the reserve if
//   it does not grow what the file holds: from the first refusal on, the pages commits write
//   less the pages they free may add up to at most `slack(pageSize:)` (a delete in the object
//   store rewrites a change-log leaf that may split, so a delete can add a page or two before
//   the pages it frees come back); and its own pages must be allocated (exactly, no reserve).
//   Any other commit fails with `StorageError.ioFailure(code: ENOSPC)`, having written
//   nothing. So commits that add data see a full volume while a reserve is still left, and
//   deletes find room.
// - While the volume refuses (`isShort`), commits are not logged (LoggedCommits.swift): a
//   logged commit's generation pins the pages its base reaches until the next checkpoint, so
//   logged deletes would each take new pages without ever giving any back. Unlogged, the
//   pages a commit frees are reusable by the commit after it (once no reader pins them).
//   The next commit whose reserve grows again ends this.
// - Replayed commits (recovery) are durable already: they may use the reserve whatever they
//   write, or the database could not be opened on a full volume.
//
// Crash safety: nothing here writes to the file or changes which pages a commit uses; it only
// decides, before the commit writes anything, whether it may. Allocated blocks past the end
// read as zeros and belong to no version; a crash loses at most the allocation (the next
// commit that grows the file allocates again). The copy-on-write invariants are untouched:
// the reserve's pages are past every version's page count until a commit takes them as it
// would take pages past the end of the file.
//
// Where the file cannot allocate ahead (`StorageFile.allocate` returns false: not Linux, or a
// file system without fallocate) there is no reserve and commits behave as without one. On a
// copy-on-write file system (btrfs) an allocated block still needs new space when it is
// written, so the reserve there helps less.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the writer knows of the database file's reserve. Used only by the writer, under the
/// write lock (and while replaying the log at open, when nobody else can write).
final class SpaceReserve: @unchecked Sendable {
    // @unchecked: every field changes only under the database's write lock.

    /// Bytes of the file (from its start) known to be allocated: past the end of the file too.
    var allocatedBytes: UInt64 = 0
    /// While the volume refuses to grow the reserve: how many pages commits may still add
    /// (written less freed) before commits that grow the data are refused too. Nil while the
    /// reserve is whole.
    var allowance: Int64?
    /// False once the file said it cannot allocate ahead: no reserve, no checks.
    var supported = true

    /// Whether the volume refused the reserve's last growth (commits are then not logged).
    var isShort: Bool { allowance != nil }

    /// The reserve's size in pages: 256 KiB, at least 16 pages. A delete of a few objects in
    /// a file of millions writes a few dozen pages.
    static func pages(pageSize: Int) -> UInt64 { UInt64(max(16, (256 << 10) / pageSize)) }

    /// How many pages commits may add in all once the volume refuses: an eighth of the reserve.
    static func slack(pageSize: Int) -> Int64 { Int64(pages(pageSize: pageSize) / 8) }
}

extension StorageError {
    /// Whether this is the volume refusing space (ENOSPC, or EDQUOT: a quota).
    var isOutOfSpace: Bool {
        if case .ioFailure(_, let code) = self { return code == ENOSPC || code == EDQUOT }
        return false
    }
}

extension StorageEngine {
    /// Applies the reserve's rule (see above) to a commit laid out as `meta`, before it writes
    /// anything: returns when it may write its pages, throws `ioFailure` with ENOSPC when the
    /// volume is too full for it. `replaying`: a commit replayed from the log at open.
    func makeRoom(for meta: MetaPage, of transaction: WriteTransaction, replaying: Bool = false) throws {
        let reserve = spaceReserve
        let size = UInt64(pageSize)
        let reservePages = SpaceReserve.pages(pageSize: pageSize)
        let needed = meta.pageCount * size
        // The usual case: the reserve is whole and covers this commit's pages (up to the
        // largest the file may be).
        if reserve.allowance == nil && min(meta.pageCount + reservePages, maximumPages) * size <= reserve.allocatedBytes { return }
        guard reserve.supported else { return }
        // Pages below the end of the file were written, so their blocks are allocated.
        let from = max(reserve.allocatedBytes, state.withLock { $0.knownFileSize } / size * size)
        let wanted = min((meta.pageCount + reservePages + reservePages - 1) / reservePages * reservePages, maximumPages)
        do {
            if wanted * size > from {
                guard try file.allocate(from..<wanted * size) else {
                    reserve.supported = false
                    return
                }
            }
            reserve.allocatedBytes = max(from, wanted * size)
            reserve.allowance = nil
            return
        } catch let error as StorageError where error.isOutOfSpace {
            // The volume refused: below.
        } catch {
            // Any other failure to allocate ahead: go on without a reserve, as where the file
            // cannot allocate ahead (the commit's own writes report real I/O errors).
            reserve.supported = false
            return
        }
        // Meta pages are left out on both sides: a record's or logged meta's page is taken by
        // one commit and freed by a later anchor (at most a chain's worth at a time), which
        // would otherwise count as growth for the one and shrinkage for the other.
        let base = transaction.snapshot.meta
        let written = transaction.dirty.reduce(0) { $0 + $1.pages }
        let metaPagesFreed = (meta.isRecord ? 0 : base.chain.count) + (base.isLogged ? 1 : 0)
        let freed = Int(truncatingIfNeeded: transaction.freeSpace.pagesMadePending &- transaction.pendingAtStart) - metaPagesFreed
        let growth = Int64(written) - Int64(freed)
        let allowance = reserve.allowance ?? SpaceReserve.slack(pageSize: pageSize)
        reserve.allowance = allowance
        guard replaying || growth <= allowance else {
            throw StorageError.ioFailure(
                operation: "commit version \(meta.txid) of \(path): the volume is full (what is left is kept for deletes)", code: ENOSPC)
        }
        if needed > from {
            _ = try file.allocate(from..<needed)
            reserve.allocatedBytes = needed
        }
        if !replaying { reserve.allowance = allowance - growth }
    }
}
