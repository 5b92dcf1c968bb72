import Testing
@testable import StrataStorage

/// Dropping a tree deletes its catalog entry at commit; that must not underflow the
/// catalog's (unused) entry count, which starts at 0 in every transaction.
@Test func droppingACommittedTreeCommits() throws {
    let directory = TemporaryDirectory(); defer { directory.remove() }
    let engine = try StorageEngine.open(path: directory.file("drop.strata"))
    defer { engine.close() }
    try engine.write { txn in
        try txn.put([UInt8]("v"), forKey: [UInt8]("k"), in: txn.createTree(named: "a"))
        try txn.put([UInt8]("v"), forKey: [UInt8]("k"), in: txn.createTree(named: "b"))
    }
    let dropped = try engine.write { txn in try txn.dropTree(named: "a") }
    #expect(dropped)
    let names = try engine.read { txn in try txn.treeNames() }
    #expect(names == ["b"])
    #expect(try engine.verify().isHealthy)
}
