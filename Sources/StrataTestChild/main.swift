// A child process for the cross-process tests (Tests/StrataStorageTests/ProcessTests.swift).
//
//   StrataTestChild write-forever PATH SEED     commit Workload(SEED) versions forever, printing
//                                               "commit V" before and "V" after each commit
//   StrataTestChild hold-write PATH             put keys in a write txn, print "locked", sleep
//   StrataTestChild hold-read PATH              pin a version, print "reading VERSION", sleep
//   StrataTestChild crash-at STEP SHAPE PATH    commit a SHAPE (small/large/other) txn, _exit(9) at STEP
//   StrataTestChild alternate PATH ID ROUNDS    ping-pong commits with another process
//   StrataTestChild commit-once PATH KEY VALUE  commit one put to tree "kv"
//
// Every line is written unbuffered: the parent synchronises on these lines. Exit status
// 0 means success; failures print "error: ..." to stderr and exit 1.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StrataStorage

/// Writes a line straight to the file descriptor (unbuffered: the parent is waiting for it).
func emit(_ line: String, to descriptor: Int32) {
    var data = Array((line + "\n").utf8)[...]
    while !data.isEmpty {
        let n = data.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        if n < 0 { if errno == EINTR { continue }; return }
        data = data.dropFirst(n)
    }
}

func say(_ line: String) { emit(line, to: STDOUT_FILENO) }

func fail(_ message: String) -> Never {
    emit("error: \(message)", to: STDERR_FILENO)
    exit(1)
}

func sleepForever() -> Never {
    while true { pause() }
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

let arguments = Array(CommandLine.arguments.dropFirst())

do {
    switch (arguments.first, arguments.count) {
    case ("write-forever", 3):
        let engine = try StorageEngine.open(path: arguments[1])
        guard let seed = UInt64(arguments[2]) else { fail("bad seed") }
        while true {
            let txn = try engine.beginWrite()
            let tree = try txn.createTree(named: Workload.tree)
            let version = txn.version + 1
            try Workload.apply(seed: seed, version: version) { key, value in
                if let value { try txn.put(value, forKey: key, in: tree) } else { _ = try txn.delete(forKey: key, in: tree) }
            }
            say("commit \(version)")
            try txn.commit()
            say("\(version)")
        }

    case ("hold-write", 2):
        let engine = try StorageEngine.open(path: arguments[1])
        let txn = try engine.beginWrite()
        let tree = try txn.createTree(named: "kv")
        for i in 0..<100 { try txn.put(bytes("uncommitted-\(i)"), forKey: bytes("uncommitted-\(i)"), in: tree) }
        say("locked")
        sleepForever()

    case ("hold-read", 2):
        let engine = try StorageEngine.open(path: arguments[1])
        let txn = try engine.beginRead()
        say("reading \(txn.version)")
        sleepForever()

    case ("crash-at", 4):
        guard let step = CommitStep(rawValue: arguments[1]) else { fail("unknown step \(arguments[1])") }
        var options = StorageOptions()
        options.failpoint = { if $0 == step { _exit(9) } }
        let engine = try StorageEngine.open(path: arguments[3], options: options)
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for (key, value) in CrashShape.entries(arguments[2], version: txn.version + 1) {
                try txn.put(value, forKey: key, in: tree)
            }
        }
        say("committed")  // the step was never reached

    case ("alternate", 4):
        guard let id = UInt64(arguments[2]), id < 2, let rounds = UInt64(arguments[3]) else { fail("bad arguments") }
        let engine = try StorageEngine.open(path: arguments[1])
        let counterKey = bytes("counter")
        func counter(_ txn: some TransactionReading) throws -> UInt64 {
            guard let tree = try txn.tree(named: "pingpong"), let raw = try txn.value(forKey: counterKey, in: tree), raw.count == 8
            else { fail("no counter") }
            return raw.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        }
        var lastWritten: UInt64?  // the counter value this process last committed
        var observed: Set<UInt64> = []  // the other process's commits this process saw
        while true {
            let (value, version) = try engine.read { (try counter($0), $0.version) }
            // Process 0 writes the odd values, process 1 the even ones (from 2).
            if value > 0 && value % 2 == id { observed.insert(value) }
            if value == 2 * rounds { break }
            if value % 2 == id {
                // Our turn: the other process committed exactly once since our last commit.
                if let lastWritten, value != lastWritten + 1 { fail("expected \(lastWritten + 1), found \(value)") }
                try engine.write { txn in
                    let now = try counter(txn)
                    guard now == value else { fail("counter moved during our turn: \(value) -> \(now)") }
                    let tree = try txn.createTree(named: "pingpong")
                    var next = now + 1
                    try txn.put(withUnsafeBytes(of: &next) { Array($0) }, forKey: counterKey, in: tree)
                    try txn.put([UInt8(id)], forKey: bytes("by-\(now)"), in: tree)
                }
                lastWritten = value + 1
            } else {
                let newer = engine.waitForVersion(newerThan: version, timeout: .seconds(60))
                if newer <= version { fail("timed out waiting for the other process at counter \(value)") }
            }
        }
        let expected = Set((1...2 * rounds).filter { $0 % 2 == id })
        if observed != expected { fail("saw \(observed.count) of the other process's \(expected.count) commits") }
        say("done \(observed.count)")

    case ("commit-once", 4):
        let engine = try StorageEngine.open(path: arguments[1])
        let version = try engine.write { txn in
            try txn.put(bytes(arguments[3]), forKey: bytes(arguments[2]), in: try txn.createTree(named: "kv"))
            return txn.version + 1
        }
        say("\(version)")

    default:
        fail("usage: see Sources/StrataTestChild/main.swift; got \(arguments)")
    }
} catch {
    fail("\(error)")
}

// MARK: Workloads (kept in step with the copies in ProcessTests.swift)

/// The deterministic transaction committed as each version by `write-forever`.
enum Workload {
    static let tree = "kv"

    static func apply(seed: UInt64, version: UInt64, _ body: ([UInt8], [UInt8]?) throws -> Void) rethrows {
        // Always a real change (a commit with no changes would not make a version).
        try body(Array("version".utf8), Array("\(version)".utf8))
        var rng = WorkloadRNG(seed: seed &* 0x9E37_79B9_7F4A_7C15 ^ version)
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
enum CrashShape {
    static func entries(_ shape: String, version: UInt64) -> [([UInt8], [UInt8])] {
        let count = shape == "large" ? 3000 : 10
        let tag = shape == "other" ? "w" : "v"  // "other": a small commit unlike "small"
        return (0..<count).map { i in (Array("crash-\(i)".utf8), Array("\(tag)\(version)-\(i)".utf8) + [UInt8](repeating: 7, count: 400)) }
    }
}

struct WorkloadRNG {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
