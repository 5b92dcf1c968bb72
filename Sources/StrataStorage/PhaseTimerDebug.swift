#if canImport(Glibc)
import Glibc
#endif
public enum _PhaseTimer {
    nonisolated(unsafe) static var sums = [UInt64](repeating: 0, count: 16)
    nonisolated(unsafe) static var hists = [[Int]](repeating: [Int](repeating: 0, count: 12), count: 16)
    nonisolated(unsafe) static var last: UInt64 = 0
    nonisolated(unsafe) static var count = 0
    @inline(__always) static func now() -> UInt64 { var t = timespec(); clock_gettime(CLOCK_MONOTONIC, &t); return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec) }
    public static func start() { last = now() }
    public static func mark(_ i: Int) { let n = now(); let d = n &- last; sums[i] &+= d; last = n; hists[i][min(Int(d / 4_000), 11)] += 1 }
    public static func end() {
        mark(15); count += 1
        if count == 2000 {
            var s = ""
            for i in 0..<16 where sums[i] != 0 { s += " p\(i)=" + String(Double(sums[i]) / Double(count) / 1000) }
            print("PHASES(us):" + s)
            for i in [Int]() { print("  hist4us p\(i):", hists[i]) }
            sums = [UInt64](repeating: 0, count: 16); count = 0
            hists = [[Int]](repeating: [Int](repeating: 0, count: 12), count: 16)
        }
    }
}
