// The `strata` command-line tool: a demo of the engine, and inspection of database files.

import Foundation
import StrataStorage

let usage = """
    usage: strata demo [DIRECTORY]        play a short scenario on a fresh database, printing what happens
           strata verify FILE             check a database file completely
           strata inspect FILE            print trees, entry counts and space statistics
           strata compact FILE COPY       write a compacted copy of FILE to COPY
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("strata: \(message)\n".utf8))
    exit(1)
}

func openExisting(_ path: String) -> StorageEngine {
    guard FileManager.default.fileExists(atPath: path) else { fail("no such file: \(path)") }
    do {
        return try StorageEngine.open(path: path, options: StorageOptions(readOnly: true))
    } catch let error as StorageError {
        fail("cannot open \(path): \(error)")
    } catch {
        fail("cannot open \(path): \(error)")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "demo":
    do {
        try runDemo(directory: arguments.count > 1 ? arguments[1] : nil)
    } catch {
        fail("demo failed: \(error)")
    }
case "verify" where arguments.count == 2:
    let engine = openExisting(arguments[1])
    do {
        let report = try engine.verify()
        print(report)
        exit(report.isHealthy ? 0 : 2)
    } catch {
        fail("cannot verify \(arguments[1]): \(error)")
    }
case "inspect" where arguments.count == 2:
    let engine = openExisting(arguments[1])
    do {
        let report = try engine.verify()
        try engine.read { txn in
            print("\(arguments[1]): version \(txn.version), page size \(engine.pageSize)")
            for name in try txn.treeNames() {
                guard let tree = try txn.tree(named: name) else { continue }
                print("  tree \(name): \(try txn.count(in: tree)) entries")
            }
        }
        print("pages: \(report.pageCount) (\(report.pageCount * UInt64(report.pageSize)) bytes), tree \(report.treePages), free \(report.freePages), pending \(report.pendingPages), free-list \(report.freeListPages)")
        print("active readers: \(engine.activeReaderCount)")
        if !report.isHealthy { print(report); exit(2) }
    } catch {
        fail("cannot inspect \(arguments[1]): \(error)")
    }
case "compact" where arguments.count == 3:
    let engine = openExisting(arguments[1])
    do {
        try engine.copyCompacted(to: arguments[2])
        print("wrote \(arguments[2])")
    } catch {
        fail("cannot compact \(arguments[1]): \(error)")
    }
default:
    print(usage)
    exit(arguments.isEmpty || arguments.first == "help" ? 0 : 64)
}
