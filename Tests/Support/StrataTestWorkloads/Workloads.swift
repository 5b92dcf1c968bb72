// The workloads the cross-process tests and their child process both run, so the parent can
// model exactly what a child committed.

/// The deterministic transaction committed as each version by `write-forever`.
public enum Workload {
    public static let tree = "kv"

    public static func apply(seed: UInt64, version: UInt64, _ body: ([UInt8], [UInt8]?) throws -> Void) rethrows {
        // Always a real change (a commit with no changes would not make a version).
        try body(Array("version".utf8), Array("\(version)".utf8))
        var rng = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 ^ version)
        let operations = 1 + Int(rng.next() % 8)
        for _ in 0..<operations {
            let key = Array("key-\(rng.next() % 300)".utf8)
            if rng.next() % 5 == 0 {
                try body(key, nil)
            } else {
                let length = Int(rng.next() % 600)
                let fill = UInt8(truncatingIfNeeded: version)
                try body(key, Array("v\(version):".utf8) + [UInt8](repeating: fill, count: length))
            }
        }
    }
}

/// The transactions `crash-at` commits: "small" or "other" (one-sync commits) or "large" (more pages than
/// a meta can list, so it syncs its data first).
public enum CrashShape {
    public static func entries(_ shape: String, version: UInt64) -> [([UInt8], [UInt8])] {
        let count = shape == "large" ? 3000 : 10
        let tag = shape == "other" ? "w" : "v"  // "other": a small commit unlike "small"
        return (0..<count).map { i in (Array("crash-\(i)".utf8), Array("\(tag)\(version)-\(i)".utf8) + [UInt8](repeating: 7, count: 400)) }
    }
}
