import Testing
import StrataStorage
@testable import StrataStore

/// `TableAccess.verifyObjects()` (what `strata verify` adds to the engine's checks) finds
/// damage that page checksums cannot: chunks rewritten with valid checksums.
@Suite struct TableVerificationTests {
    /// A file of `count` people (ids 0..<count, every fifth with tags); returns the cluster
    /// tree's name and the column ids.
    private func makeFile(_ folder: TemporaryFolder, count: Int = 40) throws -> (tree: String, columns: [UInt16]) {
        try withPeople(folder.file()) { session, people in
            try session.beginWrite()
            for i in 0..<count {
                let key = try people.insert([.int(Int64(i)), .string("p\(i)"), .int(Int64(i)), .null, .null, .null])
                if i % 5 == 0 { try people.setList([.string("t\(i)")], for: key, property: 5) }
            }
            _ = try session.commit()
            return (people.clusterTreeName, people.columnIDs)
        }
    }

    private func verify(_ folder: TemporaryFolder) throws -> TableAccess.ObjectVerification {
        try withPeople(folder.file()) { _, people in people.verifyObjects() }
    }

    @Test func aHealthyTableHasNoProblems() throws {
        let folder = TemporaryFolder()
        _ = try makeFile(folder, count: 600)
        let result = try verify(folder)
        #expect(result.objects == 600)
        #expect(result.problems.isEmpty, "\(result.problems)")
    }

    @Test func aPrimaryKeyTheIndexDoesNotKnowIsReported() throws {
        let folder = TemporaryFolder()
        let (tree, columns) = try makeFile(folder)
        // Row 3's id (an Int chunk without nulls: header, then 8 bytes per row) becomes 999.
        try rewriteFirstClusterChunk(folder.file(), tree: tree, column: columns[0]) { _, chunk in
            withUnsafeBytes(of: Int64(999).littleEndian) { chunk.replaceSubrange(ChunkFormat.headerSize + 24..<ChunkFormat.headerSize + 32, with: $0) }
        }
        let result = try verify(folder)
        #expect(result.objects == 40)
        #expect(result.problems.count == 1, "\(result.problems)")
        #expect(result.problems.first?.contains("primary-key index leads from 999 to nothing") == true, "\(result.problems)")
    }

    @Test func missingAndStrayIndexEntriesAreReported() throws {
        let folder = TemporaryFolder()
        let indexTree = try withPeople(folder.file()) { session, people in
            try session.beginWrite()
            // Many objects share a name: the check must find the one entry that is missing.
            for i in 0..<300 { _ = try people.insert([.int(Int64(i)), .string(i == 7 ? "seven" : "same"), .int(0), .null, .null, .null]) }
            _ = try session.commit()
            return try #require(people.indexTreeNames[1])
        }
        do {
            let engine = try StorageEngine.open(path: folder.file(), options: StorageOptions())
            defer { engine.close() }
            try engine.write { t in
                let tree = try #require(try t.tree(named: indexTree))
                #expect(try t.delete(forKey: IndexKey.entry(.string("same"), ObjectKey(200)), in: tree))
                // Two stray entries: object 7 filed under a name it does not hold, and an
                // object that does not exist.
                try t.put([], forKey: IndexKey.entry(.string("same"), ObjectKey(7)), in: tree)
                try t.put([], forKey: IndexKey.entry(.string("same"), ObjectKey(999)), in: tree)
            }
        }
        let result = try verify(folder)
        #expect(result.problems == [
            "'Person': the index of 'name' has no entry for object 200 (\(StoreValue.string("same")))",
            "'Person': the index of 'name' files object 7 under a value it does not hold",
            "'Person': the index of 'name' has an entry for object 999, which does not exist",
        ], "\(result.problems)")
    }

    @Test func keysOutOfOrderAreReported() throws {
        let folder = TemporaryFolder()
        let (tree, _) = try makeFile(folder)
        // Rows 5 and 6 of the key chunk swapped.
        try rewriteFirstClusterChunk(folder.file(), tree: tree, column: Cluster.keyColumn) { _, chunk in
            let five = ChunkFormat.headerSize + 40, six = five + 8
            let saved = Array(chunk[five..<six])
            chunk.replaceSubrange(five..<six, with: chunk[six..<six + 8])
            chunk.replaceSubrange(six..<six + 8, with: saved)
        }
        let result = try verify(folder)
        #expect(result.problems.contains { $0.contains("keys must ascend") }, "\(result.problems)")
    }

    @Test func anOversizedClusterIsReported() throws {
        let folder = TemporaryFolder()
        let (tree, _) = try makeFile(folder)
        try rewriteFirstClusterChunk(folder.file(), tree: tree, column: Cluster.keyColumn) { first, chunk in
            chunk = keyChunk(first: first, rows: Cluster.capacity + 1)
        }
        let result = try verify(folder)
        #expect(result.problems.contains { $0.contains("more than the \(Cluster.capacity) a cluster can hold") }, "\(result.problems)")
    }
}
