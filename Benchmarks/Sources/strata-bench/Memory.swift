#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

// Workload 13 (`peak-rss`) counts anonymous memory: heap, caches an engine allocates, decoded
// objects. Pages of a mapped database file are file-backed, shared with the page cache, and not
// counted, which is the point of comparing a mapped store with ones that copy into the heap.

/// This process's resident anonymous memory in bytes: the `Anonymous:` line of
/// /proc/self/smaps_rollup (Linux 4.14+), or nil where that file does not exist.
func anonymousMemoryBytes() -> Int? {
    let fd = open("/proc/self/smaps_rollup", O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    // The file is about 1 KiB; read it whole into a stack buffer, no allocation.
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer -> Int? in
        var length = 0
        while length < buffer.count {
            let n = read(fd, buffer.baseAddress! + length, buffer.count - length)
            if n <= 0 { break }
            length += n
        }
        let text = UnsafeBufferPointer(rebasing: buffer[0..<length])
        let label = Array("\nAnonymous:".utf8)
        guard let found = text.indices.first(where: { i in
            i + label.count <= text.count && label.indices.allSatisfy { text[i + $0] == label[$0] }
        }) else { return nil }
        var i = found + label.count
        while i < text.count, text[i] == UInt8(ascii: " ") { i += 1 }
        var kib = 0
        while i < text.count, text[i] >= UInt8(ascii: "0"), text[i] <= UInt8(ascii: "9") {
            kib = kib * 10 + Int(text[i] - UInt8(ascii: "0"))
            i += 1
        }
        return kib * 1024
    }
}

/// Measures the peak growth of anonymous memory over a stretch of work: it returns freed heap
/// to the system (`malloc_trim`, so memory earlier runs freed is not reused unseen), reads a
/// baseline, then a background thread reads /proc/self/smaps_rollup every millisecond until
/// `finish()`. Readings are in bytes above the baseline.
final class AnonymousMemorySampler: Sendable {
    let baseline: Int
    private let peak = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init() throws {
        releaseFreedHeap()
        guard let now = anonymousMemoryBytes() else {
            throw BenchError("peak-rss needs /proc/self/smaps_rollup (Linux)")
        }
        baseline = now
        Thread.detachNewThread { [self] in
            while !stopped.load(ordering: .acquiring) {
                _ = sample()
                usleep(1000)
            }
            done.signal()
        }
    }

    /// Takes a reading now (also folded into the peak) and returns it.
    @discardableResult
    func sample() -> Int {
        let growth = (anonymousMemoryBytes() ?? baseline) - baseline
        peak.max(growth, ordering: .relaxed)
        return growth
    }

    /// Stops the sampling thread, takes a last reading, and returns the peak growth.
    func finish() -> Int {
        stopped.store(true, ordering: .releasing)
        done.wait()
        sample()
        return peak.load(ordering: .relaxed)
    }
}

/// glibc's `malloc_trim(0)`: consolidates the free chunks of every arena and returns free heap
/// pages to the system. The runner calls it before every run, so that one engine's garbage (the
/// JSON repository frees millions of small objects) does not make the next engine pay for
/// glibc consolidating it on its first large allocation: without it, GRDB's `open` after the
/// JSON engine's measured 200–300 ms instead of 2. <malloc.h> is not part of Swift's Glibc
/// module, so the function is looked up at run time; a no-op elsewhere.
func releaseFreedHeap() {
    #if canImport(Glibc)
    typealias MallocTrim = @convention(c) (Int) -> Int32
    guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    #endif
}

func formatBytes(_ bytes: Int) -> String {
    let mib = Double(bytes) / 1_048_576
    return String(format: "%.1f MiB", mib)
}
