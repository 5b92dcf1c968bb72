#define _GNU_SOURCE
#include "CStrataSystem.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>

int strata_wait_on_address(void *address, uint32_t expected, int64_t timeout_ns) {
    struct timespec ts;
    struct timespec *tsp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000);
        ts.tv_nsec = (long)(timeout_ns % 1000000000);
        tsp = &ts;
    }
    // Not FUTEX_PRIVATE_FLAG: the word is in a MAP_SHARED mapping used by several processes.
    long r = syscall(SYS_futex, address, FUTEX_WAIT, expected, tsp, NULL, 0);
    if (r == 0) return 0;
    if (errno == EAGAIN || errno == EINTR) return 0;
    return errno;
}

void strata_wake_all(void *address) {
    syscall(SYS_futex, address, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}
#elif defined(__APPLE__)
// Darwin's shared address wait (the primitive libc++ uses for std::atomic::wait).
extern int __ulock_wait(uint32_t operation, void *addr, uint64_t value, uint32_t timeout_us);
extern int __ulock_wake(uint32_t operation, void *addr, uint64_t wake_value);
#define STRATA_UL_COMPARE_AND_WAIT_SHARED 3
#define STRATA_ULF_WAKE_ALL 0x00000100

int strata_wait_on_address(void *address, uint32_t expected, int64_t timeout_ns) {
    uint32_t timeout_us = 0;
    if (timeout_ns >= 0) {
        int64_t us = timeout_ns / 1000;
        timeout_us = us <= 0 ? 1 : (us > 0xffffffffLL ? 0xffffffffU : (uint32_t)us);
    }
    int r = __ulock_wait(STRATA_UL_COMPARE_AND_WAIT_SHARED, address, expected, timeout_us);
    if (r >= 0) return 0;
    if (errno == EINTR || errno == EFAULT) return 0;
    return errno;
}

void strata_wake_all(void *address) {
    __ulock_wake(STRATA_UL_COMPARE_AND_WAIT_SHARED | STRATA_ULF_WAKE_ALL, address, 0);
}
#else
#error "CStrataSystem supports Linux and Apple platforms"
#endif

#if defined(__linux__)
#ifndef F_OFD_GETLK
#define F_OFD_GETLK 36
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#endif
#define STRATA_SETLK F_OFD_SETLK
#define STRATA_SETLKW F_OFD_SETLKW
#define STRATA_GETLK F_OFD_GETLK
#else
// Darwin has no OFD locks in its public headers; per-process locks are the fallback, and the
// engine shares one open file per process (see Registry.swift) so they still exclude correctly.
#define STRATA_SETLK F_SETLK
#define STRATA_SETLKW F_SETLKW
#define STRATA_GETLK F_GETLK
#endif

static void strata_fill_lock(struct flock *fl, short type, int64_t start, int64_t length) {
    memset(fl, 0, sizeof(*fl));
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
    fl->l_start = (off_t)start;
    fl->l_len = (off_t)length;
    fl->l_pid = 0;
}

int strata_ofd_lock(int fd, int64_t start, int64_t length, int wait) {
    struct flock fl;
    strata_fill_lock(&fl, F_WRLCK, start, length);
    for (;;) {
        if (fcntl(fd, wait ? STRATA_SETLKW : STRATA_SETLK, &fl) == 0) return 0;
        if (errno == EINTR) continue;
        if (errno == EACCES) return EAGAIN;
        return errno;
    }
}

int strata_ofd_unlock(int fd, int64_t start, int64_t length) {
    struct flock fl;
    strata_fill_lock(&fl, F_UNLCK, start, length);
    if (fcntl(fd, STRATA_SETLK, &fl) == 0) return 0;
    return errno;
}

int strata_ofd_is_locked(int fd, int64_t start, int64_t length) {
    struct flock fl;
    strata_fill_lock(&fl, F_WRLCK, start, length);
    if (fcntl(fd, STRATA_GETLK, &fl) != 0) return -errno;
    return fl.l_type == F_UNLCK ? 0 : 1;
}

int strata_sync_data(int fd) {
#if defined(__APPLE__)
    if (fcntl(fd, F_FULLFSYNC) == 0) return 0;
    if (fsync(fd) == 0) return 0;
    return errno;
#else
    for (;;) {
        if (fdatasync(fd) == 0) return 0;
        if (errno == EINTR) continue;
        return errno;
    }
#endif
}

int strata_allocate_past_end(int fd, int64_t offset, int64_t length) {
#if defined(__linux__)
    for (;;) {
        if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length) == 0) return 0;
        if (errno == EINTR) continue;
        // Not supported by the file system or the kernel: the caller goes on without.
        if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL) return ENOTSUP;
        return errno;
    }
#else
    (void)fd; (void)offset; (void)length;
    return ENOTSUP;
#endif
}

#if defined(__linux__)
#include <sys/vfs.h>
#endif

int strata_supports_in_place_writes(int fd) {
#if defined(__linux__)
    struct statfs info;
    if (fstatfs(fd, &info) != 0) return 0;
    // TMPFS_MAGIC only. Not ext4, although it overwrites allocated blocks in place: since
    // Linux 6.16 its page cache holds large folios, and a store through a shared mapping marks
    // the whole folio dirty (a write call marks only the blocks it wrote), so the next sync
    // writes back up to the folio's size for each page stored, many times what write calls
    // would make it write.
    return info.f_type == 0x01021994 ? 1 : 0;
#else
    (void)fd;
    return 0;
#endif
}

int strata_start_writeback(int fd, int64_t offset, int64_t length) {
#if defined(__linux__)
    for (;;) {
        if (sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE) == 0) return 0;
        if (errno == EINTR) continue;
        return errno;
    }
#else
    (void)fd; (void)offset; (void)length;
    return 0;
#endif
}

#if defined(__APPLE__)
#include <stdio.h>
#endif

int strata_rename_noreplace(const char *from, const char *to) {
#if defined(__linux__) && defined(SYS_renameat2)
    // 1 is RENAME_NOREPLACE (older C libraries do not declare it or renameat2).
    if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1u) == 0) return 0;
    return errno;
#elif defined(__APPLE__)
    if (renamex_np(from, to, RENAME_EXCL) == 0) return 0;
    return errno;
#else
    (void)from; (void)to;
    return ENOSYS;
#endif
}

// ---- CRC32C ----

static uint32_t strata_crc_table[8][256];
static int strata_crc_table_ready = 0;

static void strata_crc_init_table(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        strata_crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = strata_crc_table[0][i];
        for (int t = 1; t < 8; t++) {
            c = strata_crc_table[0][c & 0xff] ^ (c >> 8);
            strata_crc_table[t][i] = c;
        }
    }
    __atomic_store_n(&strata_crc_table_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t strata_crc32c_software(uint32_t crc, const uint8_t *p, size_t n) {
    if (!__atomic_load_n(&strata_crc_table_ready, __ATOMIC_ACQUIRE)) strata_crc_init_table();
    crc = ~crc;
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        word ^= crc;
        crc = strata_crc_table[7][word & 0xff] ^ strata_crc_table[6][(word >> 8) & 0xff] ^
              strata_crc_table[5][(word >> 16) & 0xff] ^ strata_crc_table[4][(word >> 24) & 0xff] ^
              strata_crc_table[3][(word >> 32) & 0xff] ^ strata_crc_table[2][(word >> 40) & 0xff] ^
              strata_crc_table[1][(word >> 48) & 0xff] ^ strata_crc_table[0][word >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) crc = strata_crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <pthread.h>

// The instruction's latency is three cycles and one can start every cycle, so one chain of
// them uses a third of the unit. Long inputs are therefore taken in blocks of three stretches
// of STRATA_CRC_STRETCH bytes, each with its own chain, and the three results are joined: the
// CRC (without the inversions) of A then B is the CRC of A shifted over B's length (as if B
// were zeros) xor the CRC of B from 0. The shift over a stretch is a linear map of the 32-bit
// state, kept as four byte tables. 3 × 1,360 = 4,080 bytes: a 4 KiB page's checksummed bytes
// (4,092) are one block and a 12-byte tail.
#define STRATA_CRC_STRETCH 1360
static uint32_t strata_crc_shift_table[4][256];
static pthread_once_t strata_crc_shift_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2")))
static void strata_crc_init_shift(void) {
    uint32_t basis[32];
    for (int bit = 0; bit < 32; bit++) {
        uint64_t c = (uint64_t)1 << bit;
        for (int i = 0; i < STRATA_CRC_STRETCH / 8; i++) c = _mm_crc32_u64(c, 0);
        basis[bit] = (uint32_t)c;
    }
    for (int k = 0; k < 4; k++) {
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int j = 0; j < 8; j++) if (b & (1u << j)) v ^= basis[8 * k + j];
            strata_crc_shift_table[k][b] = v;
        }
    }
}

static inline uint32_t strata_crc_shift(uint32_t c) {
    return strata_crc_shift_table[0][c & 0xff] ^ strata_crc_shift_table[1][(c >> 8) & 0xff] ^
           strata_crc_shift_table[2][(c >> 16) & 0xff] ^ strata_crc_shift_table[3][c >> 24];
}

__attribute__((target("sse4.2")))
static uint32_t strata_crc32c_hardware(uint32_t crc, const uint8_t *p, size_t n) {
    uint64_t c = ~crc;
    if (n >= 3 * STRATA_CRC_STRETCH) {
        pthread_once(&strata_crc_shift_once, strata_crc_init_shift);
        do {
            uint64_t c1 = 0, c2 = 0;
            const uint8_t *p1 = p + STRATA_CRC_STRETCH, *p2 = p + 2 * STRATA_CRC_STRETCH;
            for (size_t i = 0; i < STRATA_CRC_STRETCH; i += 8) {
                uint64_t w0, w1, w2;
                memcpy(&w0, p + i, 8);
                memcpy(&w1, p1 + i, 8);
                memcpy(&w2, p2 + i, 8);
                c = _mm_crc32_u64(c, w0);
                c1 = _mm_crc32_u64(c1, w1);
                c2 = _mm_crc32_u64(c2, w2);
            }
            c = strata_crc_shift((uint32_t)c) ^ (uint32_t)c1;
            c = strata_crc_shift((uint32_t)c) ^ (uint32_t)c2;
            p += 3 * STRATA_CRC_STRETCH;
            n -= 3 * STRATA_CRC_STRETCH;
        } while (n >= 3 * STRATA_CRC_STRETCH);
    }
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}
uint32_t strata_crc32c(uint32_t crc, const void *bytes, size_t length) {
    static int has_sse42 = -1;
    int known = __atomic_load_n(&has_sse42, __ATOMIC_RELAXED);
    if (known < 0) {
        known = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        __atomic_store_n(&has_sse42, known, __ATOMIC_RELAXED);
    }
    return known ? strata_crc32c_hardware(crc, bytes, length)
                     : strata_crc32c_software(crc, bytes, length);
}
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
uint32_t strata_crc32c(uint32_t crc, const void *bytes, size_t length) {
    const uint8_t *p = bytes;
    uint32_t c = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __crc32cd(c, word);
        p += 8;
        length -= 8;
    }
    while (length--) c = __crc32cb(c, *p++);
    return ~c;
}
#else
uint32_t strata_crc32c(uint32_t crc, const void *bytes, size_t length) {
    return strata_crc32c_software(crc, bytes, length);
}
#endif

// The Swift concurrency runtime's entry point (swiftcall; an executor reference is passed as
// its two words). Flags 0: answer without asserting (the plain entry point traps on "no" in
// Swift 6 mode, as preconditionIsolated does).
__attribute__((swiftcall)) extern bool swift_task_isCurrentExecutorWithFlags(const void *identity, uintptr_t implementation, uint64_t flags);

// The executor the current job runs on (swiftcall; an executor reference comes back in two
// registers). A thread-local load in the runtime, without the full check's hooks and options.
typedef struct { const void *identity; uintptr_t implementation; } strata_executor_ref;
__attribute__((swiftcall)) extern strata_executor_ref swift_task_getCurrentExecutor(void);

bool strata_is_current_executor(const void *identity, uintptr_t implementation) {
    // The same identity means the caller runs on that executor; anything else (no current
    // executor, another one, executors that compare equal in other ways) gets the runtime's
    // full answer.
    if (swift_task_getCurrentExecutor().identity == identity) return true;
    return swift_task_isCurrentExecutorWithFlags(identity, implementation, 0);
}

uint64_t strata_load_word_relaxed(const void *address) {
    return __atomic_load_n((const uint64_t *)address, __ATOMIC_RELAXED);
}
