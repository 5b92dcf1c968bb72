// Remembers which pages this process has already checksummed, so each page's CRC is computed
// once per content rather than on every access.
//
// For page p it stores (birth txid + 1) of the content that verified. A page is rewritten only
// with a new birth txid (a later commit), so a header whose txid matches the stored value is
// content we already checked. The table is a fixed directory of lazily allocated segments;
// entries are read and written with relaxed atomics (a stale read only costs a re-check).
// Segments are never freed before the verifier is, so lookups need no lock.
//
// Unsafe: the verifier owns its directory (allocated in `init`, freed in `deinit`) and the
// segments it maps lazily (unmapped only in `deinit`); a page number is checked against the
// directory's capacity before its segment and entry are addressed.

import CStrataSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class PageVerifier: @unchecked Sendable {
    // @unchecked: all shared state is accessed with C11 atomics.
    private static let segmentShift = 16
    private static let segmentPages = 1 << segmentShift
    private static let segmentBytes = segmentPages * MemoryLayout<UInt64>.size
    private let directory: UnsafeMutablePointer<UInt64>
    private let directoryCount: Int

    init(maximumPages: UInt64) {
        directoryCount = Int((maximumPages >> UInt64(Self.segmentShift)) + 1)
        directory = .allocate(capacity: directoryCount)
        directory.initialize(repeating: 0, count: directoryCount)
    }

    deinit {
        for i in 0..<directoryCount {
            let bits = strata_atomic_load_u64(directory + i)
            if bits != 0 { munmap(UnsafeMutableRawPointer(bitPattern: UInt(bits)), Self.segmentBytes) }
        }
        directory.deallocate()
    }

    @inline(__always)
    func isVerified(_ page: PageNumber, birth: UInt64) -> Bool {
        let index = Int(page >> UInt64(Self.segmentShift))
        guard index < directoryCount else { return false }
        let bits = strata_relaxed_load_u64(directory + index)
        guard bits != 0, let segment = UnsafeMutablePointer<UInt64>(bitPattern: UInt(bits)) else { return false }
        return strata_relaxed_load_u64(segment + Int(page & UInt64(Self.segmentPages - 1))) == birth &+ 1
    }

    func markVerified(_ page: PageNumber, birth: UInt64) {
        let index = Int(page >> UInt64(Self.segmentShift))
        guard index < directoryCount else { return }
        var bits = strata_atomic_load_u64(directory + index)
        if bits == 0 {
            // An anonymous mapping is zeroed by the kernel a page at a time, when touched, so a
            // new segment costs nothing up front (allocating and clearing 512 KiB would touch
            // every page of it).
            let fresh = mmap(nil, Self.segmentBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            guard let fresh, fresh != MAP_FAILED else { return }
            let freshBits = UInt64(UInt(bitPattern: fresh))
            if strata_atomic_cas_u64(directory + index, 0, freshBits) != 0 {
                bits = freshBits
            } else {
                munmap(fresh, Self.segmentBytes)
                bits = strata_atomic_load_u64(directory + index)
            }
        }
        guard let segment = UnsafeMutablePointer<UInt64>(bitPattern: UInt(bits)) else { return }
        strata_relaxed_store_u64(segment + Int(page & UInt64(Self.segmentPages - 1)), birth &+ 1)
    }

    /// Forgets everything (used when pages may have changed under an unchanged birth txid).
    func reset() {
        for i in 0..<directoryCount {
            let bits = strata_atomic_load_u64(directory + i)
            if bits != 0, let segment = UnsafeMutablePointer<UInt64>(bitPattern: UInt(bits)) {
                for j in 0..<Self.segmentPages { strata_relaxed_store_u64(segment + j, 0) }
            }
        }
    }
}
