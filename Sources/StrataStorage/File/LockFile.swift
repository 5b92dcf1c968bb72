// The lock file ("<database>-lock"): shared memory for every process that opens the database.
//
//   offset size field
//        0    8 signature "STRATALK"
//        8    4 layout version
//       12    4 slot count
//       16    8 published txid: the newest commit readers may start from
//       24    4 commit signal: a futex word bumped after every publish
//       28    4 number of threads waiting on the commit signal
//       32    8 the page holding the published version's meta (a slot or a record)
//       40    8 one past the highest slot ever claimed (scans stop there)
//       48    4 write lock wanted: engines waiting for the OFD write lock (WriteLock.swift)
//       52    4 want signal: a futex word bumped by each engine that starts waiting for it
//       64      slots, 64 bytes each: { pid u64 (0: free), txid u64 (UInt64.max: not pinned) }
//
// File locks on the same file (all released by the kernel when a process dies):
// - flock: exclusive while one process (re)initialises the file, shared while it is in use, so
//   the first process to open after everyone closed or crashed resets the reader table.
// - OFD write lock on byte 2^40: the database's single-writer lock. An engine keeps it between
//   its write transactions until another engine counts itself as wanting it (WriteLock.swift).
// - OFD write lock on byte 2^41 + pid: "process pid is alive", so reader slots of processes
//   that died can be reclaimed even if their pid has not been reused.
//
// Fields other than the signature are only touched with C11 atomics (CStrataSystem).
//
// Unsafe: `mapping` is a shared, writable mapping of the lock file's header and slot table,
// `mappingLength` bytes, owned by this instance from `init` until `close()` unmaps it. Every
// access goes to a fixed header offset or to `slotAddress(slot)` with `slot` below the slot count
// the mapping was sized for. Other processes write the same memory, hence the atomics.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CStrataSystem

final class LockFile: @unchecked Sendable {
    // @unchecked: the mapping is shared memory accessed only through atomics; `freeSlots` is
    // guarded by its lock; everything else is immutable after init.
    static let signature: UInt64 = 0x4B4C_4154_4152_5453  // "STRATALK"
    static let layoutVersion: UInt32 = 3
    static let headerSize = 64
    static let slotSize = 64
    static let writeLockOffset: Int64 = 1 << 40
    static let livenessOffset: Int64 = 1 << 41
    static let unpinned = UInt64.max

    let path: String
    let descriptor: Int32
    let slotCount: Int
    private let mapping: UnsafeMutableRawPointer
    private let mappingLength: Int
    private let processID: UInt64
    /// Slots this process has claimed and is not using.
    private let freeSlots = Locked<[Int]>([])
    /// True when this process was the first to open and (re)initialised the table.
    let initialisedByThisProcess: Bool
    /// The version the table said was published when this process (re)initialised it, and the
    /// page of its meta: what the last process to have the database open published before it
    /// closed or died. nil when this process did not initialise the table, or the file held no
    /// table of this layout. Recovery compares it with what the commit log can replay.
    private(set) var inheritedPublication: (txid: UInt64, metaPage: UInt64)?
    /// Whether this open created the file (`removeIfCreated()`).
    let createdByThisOpen: Bool

    /// Removes the file if this open created it and no other process has it open now (the
    /// flock can be taken exclusively; see `init`): for an open that fails after its
    /// initialisation. Call it only just before `close()`.
    func removeIfCreated() {
        if createdByThisOpen && tryExclusive() { unlink(path) }
    }

    /// Lets other processes open the database: the end of an initialisation that kept the
    /// flock exclusive.
    func endInitialisation() {
        _ = flock(descriptor, LOCK_SH)
    }

    /// Takes the flock exclusively if no other process has the database open (for work before
    /// the last close); `endInitialisation()` gives it back. A failed attempt may drop this
    /// process's shared flock, so call it only just before closing.
    func tryExclusive() -> Bool {
        flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }

    /// Opens or creates the lock file. `initialise` runs while this process holds the
    /// exclusive flock (no other process has the database open), before readers can start.
    /// When it returns true the flock stays exclusive until `endInitialisation()` (the engine
    /// replays its commit log first).
    ///
    /// The file is opened only if it is a regular file (never through a symbolic link, never
    /// blocking on a FIFO: DatabasePath.swift). If `initialise` throws and this call created the
    /// file, the file is removed (while the exclusive flock is held), so a failed first open
    /// leaves no lock file behind. That is safe because every opener, once it holds its flock,
    /// checks that the file it locked is still the one at `path`, and starts again if not: a
    /// process that opened the file before its removal never uses it.
    /// `removeOnFailure` names other files to remove (first) when `initialise` throws: those the
    /// failed open created, which nobody else can have opened while the flock is exclusive.
    init(path: String, slotCount: Int, removeOnFailure: () -> [String] = { [] }, initialise: (LockFile) throws -> Bool) throws {
        self.path = path
        var fd: Int32 = -1
        var created = false
        var exclusive = false
        for attempt in 0... {
            (fd, created) = try DatabasePath.openRegularFile(path, readOnly: false, create: true)
            exclusive = flock(fd, LOCK_EX | LOCK_NB) == 0
            if !exclusive {
                // Someone else has it open; wait (briefly) for its initialisation to finish.
                while flock(fd, LOCK_SH) != 0 {
                    if errno != EINTR { let code = errno; Glibc_close(fd); throw StorageError.ioFailure(operation: "flock", code: code) }
                }
            }
            if DatabasePath.sameFile(fd, path) { break }
            // Removed (and perhaps created again) by a first opener whose open failed.
            Glibc_close(fd)
            if attempt >= 1000 { throw StorageError.ioFailure(operation: "open \(path) (it keeps being removed)", code: EAGAIN) }
        }
        self.descriptor = fd
        self.createdByThisOpen = created
        self.processID = UInt64(getpid())
        var info = stat()
        fstat(fd, &info)
        var slots = slotCount
        if !exclusive {
            // Use the layout the initialiser chose.
            var header = [UInt8](repeating: 0, count: Self.headerSize)
            let n = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, Self.headerSize, 0) }
            guard n == Self.headerSize,
                  header.withUnsafeBytes({ $0.uint64(at: 0) }) == Self.signature,
                  header.withUnsafeBytes({ $0.uint32(at: 8) }) == Self.layoutVersion
            else {
                // A stale or foreign file while another process holds it shared: take it over
                // only if it is ours to initialise (nobody can be using a header-less table).
                Glibc_close(fd)
                throw StorageError.lockFileInvalid(path: path)
            }
            slots = Int(header.withUnsafeBytes { $0.uint32(at: 12) })
        }
        let length = Self.headerSize + slots * Self.slotSize
        // (Truncating a file to the size it has is a no-op, so that syscall is skipped.)
        if (exclusive && Int(info.st_size) != length) || Int(info.st_size) < length {
            if ftruncate(fd, off_t(length)) != 0 {
                let code = errno
                if created && exclusive { unlink(path) }
                Glibc_close(fd)
                throw StorageError.ioFailure(operation: "ftruncate \(path)", code: code)
            }
        }
        guard let map = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), map != MAP_FAILED else {
            let code = errno
            if created && exclusive { unlink(path) }
            Glibc_close(fd)
            throw StorageError.ioFailure(operation: "mmap \(path)", code: code)
        }
        self.mapping = map
        self.mappingLength = length
        self.slotCount = slots
        self.initialisedByThisProcess = exclusive
        if exclusive {
            if map.uint64(at: 0) == Self.signature
                && map.uint32(at: 8) == Self.layoutVersion {
                inheritedPublication = (strata_atomic_load_u64(map + 16), strata_atomic_load_u64(map + 32))
            }
            Self.reset(map, length: length, slots: slots)
            let keep: Bool
            do {
                keep = try initialise(self)
            } catch {
                // An open that failed must not erase what the next one checks the log against.
                restoreInheritedPublication()
                munmap(map, length)
                // Under the exclusive flock: see above.
                for file in removeOnFailure() { unlink(file) }
                if created { unlink(path) }
                Glibc_close(fd)
                throw error
            }
            if !keep { _ = flock(fd, LOCK_SH) }  // downgrade: others may now join
            exclusive = false
        }
        // Announce that this process is alive.
        // The byte is this process's own, so whoever holds it is transient: a description of
        // this file that another thread of the process is closing, or one inherited by a child
        // forked by another thread that has not reached exec yet (close-on-exec fds are
        // shared until then). Wait for them, up to a few seconds.
        var code = strata_ofd_lock(fd, Self.livenessOffset + Int64(processID), 1, 0)
        var attempts = 0
        while code == EAGAIN || code == EACCES, attempts < 5_000 {
            usleep(1_000)
            attempts += 1
            code = strata_ofd_lock(fd, Self.livenessOffset + Int64(processID), 1, 0)
        }
        if code != 0 {
            munmap(map, length)
            if created && flock(fd, LOCK_EX | LOCK_NB) == 0 { unlink(path) }
            Glibc_close(fd)
            throw StorageError.ioFailure(operation: "liveness lock", code: code)
        }
    }

    /// Brings the table to its initial state: zero everywhere except the signature, the layout
    /// version, the slot count and every slot's "not pinned" txid. Only the 8-byte words that
    /// differ are written: usually the file already holds that state (its last user closed
    /// cleanly), and storing into every word would dirty each page of the shared mapping on
    /// every first open (a write fault per page, and the pages written back to disk later).
    private static func reset(_ map: UnsafeMutableRawPointer, length: Int, slots: Int) {
        let words = map.assumingMemoryBound(to: UInt64.self)
        // Word 1 holds the layout version and the slot count, two 32-bit fields.
        var versionAndSlots: UInt64 = 0
        withUnsafeMutableBytes(of: &versionAndSlots) {
            $0.setUInt32(layoutVersion, at: 0)
            $0.setUInt32(UInt32(slots), at: 4)
        }
        let slotWords = slotSize / 8
        for index in 0..<(length / 8) {
            let wanted: UInt64
            switch index {
            case 0: wanted = signature
            case 1: wanted = versionAndSlots
            default:
                let offset = index * 8
                wanted = offset >= headerSize && (index - headerSize / 8) % slotWords == 1 ? unpinned : 0
            }
            if words[index] != wanted { words[index] = wanted }
        }
    }

    func close() {
        // Release every slot this process claimed.
        for slot in 0..<slotCount where strata_atomic_load_u64(slotAddress(slot)) == processID {
            strata_atomic_store_u64(slotAddress(slot) + 8, Self.unpinned)
            strata_atomic_store_u64(slotAddress(slot), 0)
        }
        munmap(mapping, mappingLength)
        Glibc_close(descriptor)  // drops the flock and every OFD lock
    }

    // MARK: Published version and the commit signal

    var publishedTxid: UInt64 { strata_atomic_load_u64(mapping + 16) }

    /// The count of engines waiting for the OFD write lock (a 32-bit word).
    var writeLockWanted: UnsafeMutableRawPointer { mapping + 48 }
    /// The futex word an engine bumps when it starts waiting for the write lock.
    var writeLockWantSignal: UnsafeMutableRawPointer { mapping + 52 }

    /// The page of the published version's meta. Read after pinning a txid; a reader that races
    /// a publish decodes a meta whose txid differs, and retries.
    var publishedMetaPage: UInt64 { strata_atomic_load_u64(mapping + 32) }

    /// Publishes the inherited version again (`inheritedPublication`), for an opening that
    /// fails: the next first opener then finds it as this one did. Only while this process
    /// initialises the table (nobody else uses it).
    func restoreInheritedPublication() {
        guard let inherited = inheritedPublication else { return }
        strata_atomic_store_u64(mapping + 32, inherited.metaPage)
        strata_atomic_store_u64(mapping + 16, inherited.txid)
    }

    func publish(_ txid: UInt64, metaPage: UInt64) {
        strata_atomic_store_u64(mapping + 32, metaPage)
        strata_atomic_store_u64(mapping + 16, txid)
        _ = strata_atomic_add_u32(mapping + 24, 1)
        // Wake only if someone other than this process's quiet waiters waits (their owner
        // hears of this process's commits without a wake: StorageEngine.localCommitObserver).
        let others = quietWaiters.withLock { strata_atomic_load_u32(mapping + 28) > $0 }
        if others { strata_wake_all(mapping + 24) }
    }

    /// Threads waiting on the commit signal, in every process (for tests).
    var commitWaiters: UInt32 { strata_atomic_load_u32(mapping + 28) }

    /// How many of the threads counted at offset 28 are this process's *quiet* waiters, which
    /// this process's own publishes do not wake. A quiet waiter changes both counts together
    /// under this lock, and a publish reads the shared count under it, so the difference is
    /// exactly the other waiters (in this and every other process): a waiter of another
    /// process that counts itself after the read sees the new signal and does not sleep.
    private let quietWaiters = Locked<UInt32>(0)

    /// Wakes every waiter in every process without publishing anything (used at close).
    func wakeWaiters() {
        _ = strata_atomic_add_u32(mapping + 24, 1)
        strata_wake_all(mapping + 24)
    }

    /// Blocks until the published txid differs from `txid` or the timeout passes.
    /// Returns the published txid.
    /// A `quiet` waiter is not woken by this process's publishes (see `quietWaiters`).
    func waitForPublish(after txid: UInt64, timeoutNanoseconds: Int64, quiet: Bool = false, shouldStop: () -> Bool) -> UInt64 {
        if quiet {
            quietWaiters.withLock { count in
                _ = strata_atomic_add_u32(mapping + 28, 1)
                count += 1
            }
        } else {
            _ = strata_atomic_add_u32(mapping + 28, 1)
        }
        defer {
            if quiet {
                quietWaiters.withLock { count in
                    count -= 1
                    _ = strata_atomic_sub_u32(mapping + 28, 1)
                }
            } else {
                _ = strata_atomic_sub_u32(mapping + 28, 1)
            }
        }
        let signal = strata_atomic_load_u32(mapping + 24)
        let now = publishedTxid
        if now != txid || shouldStop() { return now }
        _ = strata_wait_on_address(mapping + 24, signal, timeoutNanoseconds)
        return publishedTxid
    }

    // MARK: Reader slots

    @inline(__always) private func slotAddress(_ slot: Int) -> UnsafeMutableRawPointer {
        mapping + Self.headerSize + slot * Self.slotSize
    }

    /// Takes a slot for a new snapshot: one this process already owns, or a free one.
    func acquireSlot() throws -> Int {
        if let slot = freeSlots.withLock({ $0.popLast() }) { return slot }
        for pass in 0..<2 {
            for slot in 0..<slotCount where strata_atomic_cas_u64(slotAddress(slot), 0, processID) != 0 {
                // Raise the scan bound to cover this slot.
                while true {
                    let bound = strata_atomic_load_u64(mapping + 40)
                    if bound > UInt64(slot) || strata_atomic_cas_u64(mapping + 40, bound, UInt64(slot) + 1) != 0 { break }
                }
                return slot
            }
            if pass == 0 { reclaimDeadSlots() }
        }
        throw StorageError.tooManyReaders(limit: slotCount)
    }

    func releaseSlot(_ slot: Int) {
        strata_atomic_store_u64(slotAddress(slot) + 8, Self.unpinned)
        freeSlots.withLock { $0.append(slot) }
    }

    /// Pins the slot to the published version and returns it. The re-check after the store
    /// closes the race with a writer that scans the table between our load and our store.
    func pinPublished(slot: Int) -> UInt64 {
        while true {
            let txid = publishedTxid
            strata_atomic_store_u64(slotAddress(slot) + 8, txid)
            if publishedTxid == txid { return txid }
        }
    }


    /// Pins the slot to `txid`, a version another slot of this process already pins.
    func pin(slot: Int, txid: UInt64) {
        strata_atomic_store_u64(slotAddress(slot) + 8, txid)
    }

    /// The version of every pinned slot (in every process), sorted, with repeats.
    func pins() -> [UInt64] {
        var versions: [UInt64] = []
        _ = appendPinnedVersions(to: &versions)
        return versions.sorted()
    }

    /// Slots at or past this index have never been claimed.
    private var usedSlots: Int { min(slotCount, Int(strata_atomic_load_u64(mapping + 40))) }

    /// Appends the version each reader slot pins (in every process) to `versions`, unsorted
    /// and possibly repeated; returns whether a slot of another process pins one (only those
    /// can belong to a process that died: see `reclaimDeadSlots`).
    func appendPinnedVersions(to versions: inout [UInt64]) -> Bool {
        var foreign = false
        for slot in 0..<usedSlots {
            let address = slotAddress(slot)
            let pid = strata_atomic_load_u64(address)
            guard pid != 0 else { continue }
            let txid = strata_atomic_load_u64(address + 8)
            guard txid != Self.unpinned else { continue }
            versions.append(txid)
            if pid != processID { foreign = true }
        }
        return foreign
    }

    /// The oldest version a reader slot pins (in every process), without making a list.
    func oldestPinnedVersion() -> UInt64? {
        var oldest: UInt64?
        for slot in 0..<usedSlots {
            let address = slotAddress(slot)
            guard strata_atomic_load_u64(address) != 0 else { continue }
            let txid = strata_atomic_load_u64(address + 8)
            if txid != Self.unpinned, txid < oldest ?? .max { oldest = txid }
        }
        return oldest
    }

    /// The versions pinned by live readers, sorted, without repeats.
    func pinnedVersions() -> [UInt64] {
        var versions: [UInt64] = []
        _ = appendPinnedVersions(to: &versions)
        Self.sortDroppingRepeats(&versions)
        return versions
    }

    /// Sorts `versions` in place and drops repeats, without a second array (a writer's pins
    /// are a handful: an insertion sort; many, the library's sort).
    static func sortDroppingRepeats(_ versions: inout [UInt64]) {
        guard versions.count > 1 else { return }
        if versions.count > 32 {
            versions.sort()
        } else {
            for i in 1..<versions.count {
                let item = versions[i]
                var j = i
                while j > 0 && versions[j - 1] > item {
                    versions[j] = versions[j - 1]
                    j -= 1
                }
                if j != i { versions[j] = item }
            }
        }
        var unique = 1
        for i in 1..<versions.count where versions[i] != versions[unique - 1] {
            versions[unique] = versions[i]
            unique += 1
        }
        while versions.count > unique { versions.removeLast() }
    }

    /// Number of slots holding a pinned version (in every process).
    func activeReaderCount() -> Int {
        var count = 0
        for slot in 0..<usedSlots where strata_atomic_load_u64(slotAddress(slot)) != 0 {
            if strata_atomic_load_u64(slotAddress(slot) + 8) != Self.unpinned { count += 1 }
        }
        return count
    }

    /// Frees the slots of processes that died. A process is alive while it holds its liveness
    /// lock; the kernel drops that lock when the process ends, however it ends.
    @discardableResult
    func reclaimDeadSlots() -> Int {
        var reclaimed = 0
        var alive: [UInt64: Bool] = [:]
        for slot in 0..<usedSlots {
            let address = slotAddress(slot)
            let pid = strata_atomic_load_u64(address)
            guard pid != 0, pid != processID else { continue }
            let isAlive: Bool
            if let known = alive[pid] { isAlive = known } else {
                isAlive = strata_ofd_is_locked(descriptor, Self.livenessOffset + Int64(pid), 1) != 0
                alive[pid] = isAlive
            }
            if !isAlive {
                strata_atomic_store_u64(address + 8, Self.unpinned)
                if strata_atomic_cas_u64(address, pid, 0) != 0 { reclaimed += 1 }
            }
        }
        return reclaimed
    }
}
