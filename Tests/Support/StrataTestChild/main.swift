// A child process for the cross-process tests (Tests/StrataStorageTests/Files/ProcessTests.swift).
//
//   StrataTestChild write-forever PATH SEED     commit Workload(SEED) versions forever, printing
//                                               "commit V" before and "V" after each commit
//   StrataTestChild hold-write PATH             put keys in a write txn, print "locked", sleep
//   StrataTestChild hold-read PATH              pin a version, print "reading VERSION", sleep
//   StrataTestChild crash-at STEP SHAPE PATH    commit a SHAPE (small/large/other) txn, _exit(9) at STEP
//   StrataTestChild alternate PATH ID ROUNDS    ping-pong commits with another process
//   StrataTestChild commit-once PATH KEY VALUE  commit one put to tree "kv"
//   StrataTestChild compact-crash-at STEP PATH  compact the file in place, _exit(9) after STEP
//                                               (a CompactionStep, or "none": print "compacted")
//   StrataTestChild crowded PATH KEY VALUE      take the address space until no free range of
//                                               16 GiB is left, then open, commit one put to tree
//                                               "kv", read it back and print "mappable BYTES"
//
// Every line is written unbuffered: the parent synchronises on these lines. Exit status
// 0 means success; failures print "error: ..." to stderr and exit 1.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StrataStorage
import StrataTestWorkloads

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
        // "logged": the "small" commit through the commit log; the other shapes without it.
        let shape = arguments[2] == "logged" ? "small" : arguments[2]
        options.logsCommits = arguments[2] == "logged"
        let engine = try StorageEngine.open(path: arguments[3], options: options)
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for (key, value) in CrashShape.entries(shape, version: txn.version + 1) {
                try txn.put(value, forKey: key, in: tree)
            }
        }
        say("committed")  // the step was never reached

    case ("compact-crash-at", 3):
        let step = CompactionStep(rawValue: arguments[1])
        guard step != nil || arguments[1] == "none" else { fail("unknown compaction step \(arguments[1])") }
        let compacted = try StorageEngine.compactIfUnused(path: arguments[2], options: StorageOptions(), decide: { _, _ in true },
                                                          failpoint: { if $0 == step { _exit(9) } })
        guard compacted else { fail("the file was not compacted") }
        say("compacted")

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

    case ("crowded", 4):
        // Hold PROT_NONE ranges (no memory behind them) from 1 TiB down to 16 GiB, each size
        // until the process has no free range of it: afterwards none of 16 GiB is left.
        var held = 0
        var size = 1 << 40
        while size >= 16 << 30 {
            let range = mmap(nil, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
            if let range, range != MAP_FAILED { held += 1 } else { size /= 2 }
        }
        guard held > 0 else { fail("took no address space") }
        let engine = try StorageEngine.open(path: arguments[1])
        try engine.write { txn in
            try txn.put(bytes(arguments[3]), forKey: bytes(arguments[2]), in: try txn.createTree(named: "kv"))
        }
        let read = try engine.read { txn in try txn.tree(named: "kv").flatMap { try txn.value(forKey: bytes(arguments[2]), in: $0) } }
        guard read == bytes(arguments[3]) else { fail("read back \(String(describing: read))") }
        engine.close()
        let file = try PosixFile(path: arguments[1], create: false, maximumSize: 1 << 40)
        defer { file.close() }
        say("mappable \(file.mappableLength ?? 0)")

    default:
        fail("usage: see Tests/Support/StrataTestChild/main.swift; got \(arguments)")
    }
} catch {
    fail("\(error)")
}

