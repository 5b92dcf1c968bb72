import Testing
import StrataStorage
@testable import StrataStore

/// A table's counters (the next object key, the object count) damaged with valid checksums.
/// Reading them must not stop the process (a count past Int.max; a next key of Int64.max
/// that would overflow on the next insert), and a next key at or below an existing one must
/// not make inserts overwrite existing objects. Each must be `.corrupted`, and the objects
/// already in the file must read back unchanged afterwards.
@Suite struct DamagedCounterTests {
    @Test(arguments: [
        ("a count past Int.max", UInt64(10), UInt64.max),
        ("more objects than keys handed out", 10, 11),
        ("a next key of Int64.max", UInt64(Int64.max), 10),
        ("a negative next key", UInt64.max, 10),
        ("a next key of 0", 0, 10),
        ("a next key below the last object's", 5, 5),
        ("a next key equal to the last object's", 9, 9),
    ] as [(String, UInt64, UInt64)])
    func damagedCountersAreReportedAndLoseNothing(damage: String, next: UInt64, count: UInt64) throws {
        let folder = TemporaryFolder()
        let tableID = try withPeople(folder.file()) { session, people in
            try session.beginWrite()
            for i in 0..<10 { _ = try people.insert([.int(Int64(i)), .string("p\(i)"), .int(Int64(i)), .null, .null, .null]) }
            _ = try session.commit()
            return people.tableID
        }
        do {
            let engine = try StorageEngine.open(path: folder.file(), options: StorageOptions())
            defer { engine.close() }
            try engine.write { t in
                let tree = try #require(try t.tree(named: Store.tablesTree))
                var value = (next.bigEndian, count.bigEndian)
                try withUnsafeBytes(of: &value) { try t.put(Array($0), forKey: TreeKey.u64(UInt64(tableID)), in: tree) }
            }
        }
        try withPeople(folder.file()) { session, people in
            switch Self.insertThree(people, session: session) {
            case .success:
                Issue.record("\(damage): inserts went through")
            case .failure(.corrupted(let message)):
                #expect(message.contains("counters are damaged"), "\(damage): \(message)")
            case .failure(let error):
                Issue.record("\(damage): \(error) is not .corrupted")
            }
        }
        // Nothing was lost: the ten objects read back as they were written.
        try withPeople(folder.file()) { _, people in
            // Through the clusters: `allKeys()` reads the (damaged) count first.
            var keys: [ObjectKey] = []
            try people.forEachCluster { view in
                for row in 0..<view.count { keys.append(view.key(at: row)) }
                return true
            }
            #expect(keys.map(\.rawValue) == Array(0..<10), "\(damage)")
            for key in keys { #expect(try people.value(key, property: 1) == .string("p\(key.rawValue)"), "\(damage)") }
        }
    }

    private static func insertThree(_ people: TableAccess, session: StoreSession) -> Result<Void, StoreError> {
        do {
            try session.beginWrite()
            for i in 100..<103 { _ = try people.insert([.int(Int64(i)), .string("q\(i)"), .int(Int64(i)), .null, .null, .null]) }
            _ = try session.commit()
            return .success(())
        } catch {
            if session.isInWriteTransaction { session.rollback() }
            return .failure(error)
        }
    }
}
