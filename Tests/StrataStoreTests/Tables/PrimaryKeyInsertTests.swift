import Foundation
import Testing
@testable import StrataStore
import StrataStorage
import StrataTestWorkloads

/// The insert path: primary-key index entries go in with one descent (`insertIfAbsent`, the
/// value encoded on the stack), before the object's row, so a duplicate changes nothing. The
/// stored entries must be the bytes the general encoding gives (`IndexKey.encode` → the
/// 8-byte big-endian object key), whatever order the keys arrive in.
@Suite struct PrimaryKeyInsertTests {
    private static let stringKeyed = Schema([
        ObjectSchema(name: "Doc", properties: [
            PropertySchema(name: "path", kind: .string, isPrimaryKey: true),
            PropertySchema(name: "size", kind: .int),
        ]),
    ])

    /// Every entry of the primary-key tree of `table`, as (key bytes, value bytes).
    private static func primaryKeyEntries(_ session: StoreSession, _ table: TableAccess) throws -> [[UInt8]: [UInt8]] {
        guard let tree = try session.reading.tree(named: "t\(table.tableID).pk") else { return [:] }
        var entries: [[UInt8]: [UInt8]] = [:]
        try session.reading.forEach(in: tree) { key, value in
            entries[[UInt8](key)] = [UInt8](value)
            return true
        }
        return entries
    }

    private static func expectedEntry(_ value: StoreValue, _ key: ObjectKey) -> ([UInt8], [UInt8]) {
        var objectKey: [UInt8] = []
        UnsafeBytes.appendBigEndian(UInt64(bitPattern: key.rawValue), to: &objectKey)
        return (IndexKey.encode(value).bytes, objectKey)
    }

    @Test(arguments: ["ascending", "descending", "random"])
    func primaryKeyEntriesMatchTheGeneralEncoding(order: String) throws {
        let folder = TemporaryFolder()
        var ids = Array(Int64(-600)..<1_400)
        var rng = SplitMix64(seed: 11)
        switch order {
        case "descending": ids.reverse()
        case "random": ids.shuffle(using: &rng)
        default: break
        }
        var expected: [[UInt8]: [UInt8]] = [:]
        var keys: [Int64: ObjectKey] = [:]
        do {
            let store = try Store.open(path: folder.file(), schema: personSchema)
            let session = try store.makeSession()
            let people = session.table(named: "Person")!
            // Two transactions: the second appends to the first one's last cluster and tree.
            for half in [ids[..<700], ids[700...]] {
                try session.beginWrite()
                for id in half {
                    let key = try people.insert([.int(id), .string("p\(id)"), .int(id % 90), .double(Double(id)), .null, .null])
                    keys[id] = key
                    let (k, v) = Self.expectedEntry(.int(id), key)
                    expected[k] = v
                }
                // A duplicate of a value inserted in this transaction and of one from the snapshot.
                for id in [half.first!, ids[0]] {
                    let count = try people.count
                    #expect(throws: StoreError.duplicatePrimaryKey(type: "Person", value: "\(StoreValue.int(id))")) {
                        try people.insert([.int(id), .string("dup"), .int(1), .null, .null, .null])
                    }
                    #expect(try people.count == count)
                }
                #expect(try Self.primaryKeyEntries(session, people) == expected)
                _ = try session.commit()
            }
            session.close()
            store.close()
        }
        let store = try Store.open(path: folder.file(), schema: personSchema)
        let session = try store.makeSession()
        let people = session.table(named: "Person")!
        #expect(try Self.primaryKeyEntries(session, people) == expected)
        #expect(try people.count == ids.count)
        // Object keys are handed out in insert order with none burned by the refused duplicates.
        #expect(Set(keys.values.map(\.rawValue)) == Set(0..<Int64(ids.count)))
        for id in ids {
            let key = try #require(try people.find(primaryKey: .int(id)))
            #expect(key == keys[id])
            #expect(try people.value(key, property: 1) == .string("p\(id)"))
            #expect(try people.find(.string("p\(id)"), inIndexOf: 1) == [key])
        }
        session.close()
        store.close()
    }

    @Test func longStringKeysSharingACutPrefixAreConfirmed() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: Self.stringKeyed)
        let session = try store.makeSession()
        let docs = session.table(named: "Doc")!
        let prefix = String(repeating: "/very/long/folder", count: 20)
        try session.beginWrite()
        let a = try docs.insert([.string(prefix + "/a"), .int(1)])
        let b = try docs.insert([.string(prefix + "/b"), .int(2)])
        let short = try docs.insert([.string("/short"), .int(3)])
        #expect(throws: StoreError.duplicatePrimaryKey(type: "Doc", value: "\(StoreValue.string(prefix + "/a"))")) {
            try docs.insert([.string(prefix + "/a"), .int(9)])
        }
        #expect(throws: StoreError.duplicatePrimaryKey(type: "Doc", value: "\(StoreValue.string("/short"))")) {
            try docs.insert([.string("/short"), .int(9)])
        }
        _ = try session.commit()
        #expect(try docs.count == 3)
        #expect(try docs.find(primaryKey: .string(prefix + "/a")) == a)
        #expect(try docs.find(primaryKey: .string(prefix + "/b")) == b)
        #expect(try docs.find(primaryKey: .string("/short")) == short)
        #expect(try docs.find(primaryKey: .string(prefix + "/c")) == nil)
        var expected: [[UInt8]: [UInt8]] = [:]
        for (value, key) in [(prefix + "/a", a), (prefix + "/b", b), ("/short", short)] {
            let (k, v) = Self.expectedEntry(.string(value), key)
            expected[k] = v
        }
        #expect(try Self.primaryKeyEntries(session, docs) == expected)
        session.close()
        store.close()
    }
}
