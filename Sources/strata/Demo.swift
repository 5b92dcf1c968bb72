import Foundation
import StrataStorage

/// The engine demo: a writer commits while readers hold snapshots, then the file is verified.
/// (The object-level demo from the seed documents replaces this once the object API exists.)
func runDemo(directory: String?) throws {
    let folder = directory ?? NSTemporaryDirectory() + "strata-demo-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let path = folder + "/demo.strata"
    try? FileManager.default.removeItem(atPath: path)
    let engine = try StorageEngine.open(path: path)
    defer { engine.close() }
    print("opened \(path) (page size \(engine.pageSize), durability: full)")

    func key(_ i: Int) -> [UInt8] { Array(String(format: "todo-%05d", i).utf8) }

    try engine.write { txn in
        let todos = try txn.createTree(named: "todos")
        for i in 0..<1000 { try txn.put(Array("buy milk #\(i)".utf8), forKey: key(i), in: todos) }
    }
    print("version \(engine.latestVersion): wrote 1,000 todos in one transaction")

    let snapshot = try engine.beginRead()
    print("a reader pins version \(snapshot.version)")

    for round in 1...4 {
        try engine.write { txn in
            let todos = try txn.createTree(named: "todos")
            for i in stride(from: round, to: 1000, by: 5) { try txn.put(Array("done (round \(round))".utf8), forKey: key(i), in: todos) }
            try txn.delete(forKey: key(round * 100), in: todos)
        }
        print("version \(engine.latestVersion): round \(round) updated 200 todos and deleted one")
    }

    // Concurrent readers: each sees exactly the version it started on.
    let group = DispatchGroup()
    let results = ResultBox()
    for reader in 0..<4 {
        group.enter()
        DispatchQueue.global().async {
            defer { group.leave() }
            do {
                try engine.read { txn in
                    let todos = try txn.tree(named: "todos")!
                    let count = try txn.count(in: todos)
                    results.append("reader \(reader): version \(txn.version), \(count) todos")
                }
            } catch {
                results.append("reader \(reader) failed: \(error)")
            }
        }
    }
    group.wait()
    for line in results.lines.sorted() { print(line) }

    let todos = try snapshot.tree(named: "todos")!
    let old = try snapshot.value(forKey: key(1), in: todos).map { String(decoding: $0, as: UTF8.self) } ?? "nil"
    print("the pinned reader still sees version \(snapshot.version): todo-00001 = \"\(old)\", \(try snapshot.count(in: todos)) todos")
    snapshot.close()

    let now = try engine.read { txn in
        try txn.value(forKey: key(1), in: txn.tree(named: "todos")!).map { String(decoding: $0, as: UTF8.self) } ?? "nil"
    }
    print("a new reader at version \(engine.latestVersion) sees todo-00001 = \"\(now)\"")

    let report = try engine.verify()
    print("verify: \(report.isHealthy ? "healthy" : "PROBLEMS"), \(report.entryCount) entries in \(report.treePages) tree pages, \(report.freePages) free pages")
    if !report.isHealthy { print(report) }
}

final class ResultBox: @unchecked Sendable {
    // @unchecked: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ line: String) { lock.lock(); storage.append(line); lock.unlock() }
    var lines: [String] { lock.lock(); defer { lock.unlock() }; return storage }
}
