import Foundation
import Testing
@testable import StrataStore
import StrataStorage

/// A commit leaves its tables' counters and last cluster to the session's next write
/// transaction (`TableAccess.carryOver`), which uses them only when it starts from the version
/// that commit made. Other sessions' commits, rolled-back transactions, updates and full
/// clusters in between must never let a stale copy be written back.
@Suite struct NextWriteTableStateTests {
    private static func insert(_ table: TableAccess, _ id: Int64) throws -> ObjectKey {
        try table.insert([.int(id), .string("p\(id)"), .int(id % 90), .double(Double(id) / 2), .null, .null])
    }

    @Test func oneObjectCommitsInterleavedWithOtherWriters() throws {
        let folder = TemporaryFolder()
        var expectedAge: [Int64: Int64] = [:]
        var lastKeyOfA: ObjectKey?
        var takenByA = 0
        var treesTakenByA = 0
        do {
            let store = try Store.open(path: folder.file(), schema: personSchema)
            let a = try store.makeSession()
            let b = try store.makeSession()
            let people = a.table(named: "Person")!
            let peopleOfB = b.table(named: "Person")!
            for id in Int64(0)..<700 {
                if id % 7 == 3 {
                    // Another session commits: the carried state of `a` is stale now.
                    try b.beginWrite()
                    _ = try Self.insert(peopleOfB, id)
                    _ = try b.commit()
                } else {
                    try a.beginWrite()
                    lastKeyOfA = try Self.insert(people, id)
                    _ = try a.commit()
                }
                expectedAge[id] = id % 90
                if id % 11 == 5 {
                    // Inserted, then rolled back: nothing of it may reach a later commit.
                    try a.beginWrite()
                    _ = try Self.insert(people, 100_000 + id)
                    a.rollback()
                }
                if id % 13 == 0, let key = lastKeyOfA {
                    // An update of an object of the last cluster, in a transaction of its own.
                    try a.beginWrite()
                    try people.set(.int(1_000 + id), for: key, property: 2)
                    _ = try a.commit()
                    let updated = try people.value(key, property: 0)
                    if case .int(let updatedID) = updated { expectedAge[updatedID] = 1_000 + id }
                }
            }
            takenByA = people.carriedClustersTaken
            treesTakenByA = people.carriedTreesTaken
            #expect(try people.count == 700)
            a.close()
            b.close()
            store.close()
        }
        // Most of `a`'s commits follow one of its own, and so take the carried cluster.
        #expect(takenByA > 300)
        // ... and the trees its commit left, without catalog look-ups (the engine refuses them
        // after another session's commit: `EngineTests.aCommittedTreeIsTakenOnlyFromTheVersionItsCommitMade`).
        #expect(treesTakenByA > 300)
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let session = try store.makeSession()
        let people = session.table(named: "Person")!
        #expect(try people.count == 700)
        for id in Int64(0)..<700 {
            let key = try #require(try people.find(primaryKey: .int(id)))
            #expect(try people.value(key, property: 1) == .string("p\(id)"))
            #expect(try people.value(key, property: 2) == .int(expectedAge[id]!))
            #expect(try people.value(key, property: 3) == .double(Double(id) / 2))
        }
        for id in Int64(0)..<700 where id % 11 == 5 {
            #expect(try people.find(primaryKey: .int(100_000 + id)) == nil)
        }
    }

    /// A transaction that takes the carried cluster and deletes from it, then rolls back: the
    /// next transaction reads the cluster from the file again.
    @Test func aRolledBackChangeToTheCarriedClusterIsForgotten() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let session = try store.makeSession()
        let people = session.table(named: "Person")!
        var keys: [ObjectKey] = []
        for id in Int64(0)..<10 {
            try session.beginWrite()
            keys.append(try Self.insert(people, id))
            _ = try session.commit()
        }
        try session.beginWrite()
        try people.delete([keys[9], keys[8]])
        _ = try Self.insert(people, 50)
        session.rollback()
        try session.beginWrite()
        _ = try Self.insert(people, 10)
        _ = try session.commit()
        #expect(try people.count == 11)
        for id in Int64(0)...10 {
            let key = try #require(try people.find(primaryKey: .int(id)))
            #expect(try people.value(key, property: 1) == .string("p\(id)"))
        }
        #expect(try people.find(primaryKey: .int(50)) == nil)
    }

    /// The change log keeps exactly the entries above the oldest pinned version, whether the
    /// prune finds the stale entries by name (the session's last commit left the log) or with
    /// a cursor (a reader held many versions, or another session committed last).
    @Test func theChangeLogIsPrunedToTheOldestPin() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let writer = try store.makeSession()
        let other = try store.makeSession()
        let people = writer.table(named: "Person")!
        func logKeys() throws -> [UInt64] {
            let session = try store.makeSession()
            defer { session.close() }
            guard let tree = try session.reading.tree(named: Store.logTree) else { return [] }
            var keys: [UInt64] = []
            try session.reading.forEach(in: tree) { key, _ in
                keys.append(TreeKey.readU64(key))
                return true
            }
            return keys
        }
        var id: Int64 = 0
        func commit(_ session: StoreSession) throws {
            try session.beginWrite()
            if session === writer { _ = try Self.insert(people, id) } else { _ = try Self.insert(session.table(named: "Person")!, id) }
            id += 1
            _ = try session.commit()
            try other.refresh()  // its pin follows, so only the reader below holds old versions
        }
        for _ in 0..<5 { try commit(writer) }
        // Only the entries above the oldest pin (the writer's own, before its commit) stay.
        #expect(try logKeys() == [writer.version])
        let reader = try store.makeSession()
        let pinned = reader.version
        for round in 0..<100 {
            try commit(round % 17 == 0 ? other : writer)
        }
        #expect(try logKeys() == Array((pinned + 1)...writer.version))
        #expect(try reader.refresh())
        #expect(try reader.changes(since: pinned)?.tables[people.tableID]?.inserted.count == 100)
        reader.close()
        try commit(writer)  // the reader's hundred stale entries go (by cursor)
        try commit(writer)  // and the next by name
        #expect(try logKeys() == [writer.version])
        #expect(try people.count == 107)
    }

    /// The change-log entry's encoding reads back as the same changes, for one table and for
    /// several, with ranges of inserted keys, deletions and modifications.
    @Test func changeLogEntriesRoundTrip() throws {
        var one = ChangeSet(version: 7)
        var single = TableChanges()
        single.inserted = [ObjectKey(41)]
        one.tables[3] = single
        var many = ChangeSet(version: 9)
        var first = TableChanges()
        first.inserted = [1, 2, 3, 7, 9, 10].map(ObjectKey.init)
        first.deleted = [ObjectKey(-4), ObjectKey(0)]
        first.modified = [ObjectKey(12): 0b101, ObjectKey(5): 1 << 63, ObjectKey(8): 2]
        var second = TableChanges()
        second.modified = [ObjectKey(2): 4]
        many.tables[8] = first
        many.tables[2] = second
        many.tables[5] = TableChanges()
        for set in [one, many, ChangeSet(version: 1)] {
            let bytes = set.encoded()
            let decoded = try bytes.withUnsafeBytes { try ChangeSet.decode($0, version: set.version) }
            #expect(decoded == set)
        }
        // Tables in id order, modified keys in key order: the bytes do not depend on hashing.
        #expect(many.encoded() == ChangeSet(version: 9, tables: [5: TableChanges(), 2: second, 8: first]).encoded())
    }
}
