// CStrataSystem: the handful of system facilities Swift cannot call directly.
//
// - C11 atomics on memory shared between processes (the lock file's mapping): Swift's
//   Synchronization.Atomic is defined for Swift-owned storage, these work on any aligned address.
// - futex wait/wake on a shared word (Linux), the cross-process commit signal. `syscall` is
//   variadic and cannot be imported into Swift.
// - Open-file-description lock commands, which Glibc only declares under _GNU_SOURCE.
// - CRC32C with the CPU's instruction where there is one.
// - A cache prefetch hint (`__builtin_prefetch`), for the engine's page searches.
//
// Every function here is small, has no state, and reports failure through its return value.
#ifndef CSTRATASYSTEM_H
#define CSTRATASYSTEM_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>

static inline uint64_t strata_atomic_load_u64(const void *address) {
    return atomic_load_explicit((_Atomic uint64_t *)address, memory_order_seq_cst);
}
static inline void strata_atomic_store_u64(void *address, uint64_t value) {
    atomic_store_explicit((_Atomic uint64_t *)address, value, memory_order_seq_cst);
}
static inline int strata_atomic_cas_u64(void *address, uint64_t expected, uint64_t desired) {
    return atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)address, &expected, desired,
                                                   memory_order_seq_cst, memory_order_seq_cst);
}
static inline uint64_t strata_atomic_add_u64(void *address, uint64_t delta) {
    return atomic_fetch_add_explicit((_Atomic uint64_t *)address, delta, memory_order_seq_cst);
}
static inline uint32_t strata_atomic_load_u32(const void *address) {
    return atomic_load_explicit((_Atomic uint32_t *)address, memory_order_seq_cst);
}
static inline uint32_t strata_atomic_add_u32(void *address, uint32_t delta) {
    return atomic_fetch_add_explicit((_Atomic uint32_t *)address, delta, memory_order_seq_cst);
}
static inline uint32_t strata_atomic_sub_u32(void *address, uint32_t delta) {
    return atomic_fetch_sub_explicit((_Atomic uint32_t *)address, delta, memory_order_seq_cst);
}
static inline uint64_t strata_relaxed_load_u64(const void *address) {
    return atomic_load_explicit((_Atomic uint64_t *)address, memory_order_relaxed);
}
static inline void strata_relaxed_store_u64(void *address, uint64_t value) {
    atomic_store_explicit((_Atomic uint64_t *)address, value, memory_order_relaxed);
}

/// Asks the CPU to start loading the cache line at `address` for reading. Only a hint: it
/// never faults, whatever the address, and changes no result.
static inline void strata_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

/// Blocks while `*address == expected`, until woken, for at most `timeout_ns` nanoseconds
/// (negative: no limit). The word may live in memory shared between processes.
/// Returns 0 when woken or when the value already differed, ETIMEDOUT on timeout, else errno.
int strata_wait_on_address(void *address, uint32_t expected, int64_t timeout_ns);

/// Wakes every thread, in any process, waiting on `address`.
void strata_wake_all(void *address);

/// Takes (or with `wait`, waits for) an open-file-description write lock on bytes
/// [start, start+length) of `fd`. Returns 0 or an errno value (EAGAIN: held elsewhere).
int strata_ofd_lock(int fd, int64_t start, int64_t length, int wait);
/// Releases an open-file-description lock taken with strata_ofd_lock.
int strata_ofd_unlock(int fd, int64_t start, int64_t length);
/// 1 when another open file description holds a lock on the byte range, 0 when none does,
/// -errno when the query failed.
int strata_ofd_is_locked(int fd, int64_t start, int64_t length);

/// Flushes a file's data (and the metadata needed to read it) to stable storage:
/// fdatasync on Linux, F_FULLFSYNC (falling back to fsync) on Apple platforms.
int strata_sync_data(int fd);

/// Has the file system allocate the blocks of bytes [offset, offset+length) of `fd` without
/// changing the file's size (Linux: fallocate with FALLOC_FL_KEEP_SIZE), so that later writes
/// there, past the end too, need no new space. Returns 0, ENOSPC (or EDQUOT) when the volume
/// refuses, ENOTSUP where the system or file system cannot do it, or another errno value.
int strata_allocate_past_end(int fd, int64_t offset, int64_t length);

/// Starts writing back a file range's dirty pages without waiting for them
/// (sync_file_range with SYNC_FILE_RANGE_WRITE on Linux; nothing elsewhere). Only a head
/// start for a later `strata_sync_data`, never a durability guarantee. Returns 0 or errno.
int strata_start_writeback(int fd, int64_t offset, int64_t length);

/// Whether stores through a writable shared mapping of `fd` can replace write calls for
/// ranges the file system has already allocated: 1 on Linux for tmpfs (memory: a store into
/// an allocated page needs nothing more and nothing is written back), 0 everywhere else.
/// Copy-on-write file systems (btrfs, XFS with reflinks, ZFS, APFS) allocate on every
/// overwrite, and a failed allocation under a store is a SIGBUS. ext4 overwrites in place, but
/// its page cache holds large folios (Linux 6.16 and later) and a store through a mapping marks
/// the whole folio dirty where a write call marks only the blocks it wrote, so every page
/// stored would cost a write-back of up to the folio's size at the next sync.
int strata_supports_in_place_writes(int fd);

/// Renames `from` to `to` only if nothing is at `to` (renameat2 with RENAME_NOREPLACE on
/// Linux, renamex_np with RENAME_EXCL on Apple platforms): atomic, so nothing that appears at
/// `to` meanwhile is ever replaced. Returns 0, EEXIST when something is there, or another
/// errno value (EINVAL, ENOSYS or ENOTSUP when the system or file system cannot do it).
int strata_rename_noreplace(const char *from, const char *to);

/// CRC32C (Castagnoli) of `length` bytes, continuing from `crc` (start with 0).
uint32_t strata_crc32c(uint32_t crc, const void *bytes, size_t length);

/// Whether the serial executor (identity, implementation) runs the caller: the question Swift's
/// `preconditionIsolated` asks the concurrency runtime before it traps, asked without trapping.
bool strata_is_current_executor(const void *identity, uintptr_t implementation);

/// The 64-bit word at `address`, loaded atomically with relaxed ordering (for reading a Swift
/// object's inline reference count, which the runtime updates atomically).
uint64_t strata_load_word_relaxed(const void *address);

#endif
