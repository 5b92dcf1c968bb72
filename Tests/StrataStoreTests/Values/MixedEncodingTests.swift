import Foundation
import Testing
import StrataStorage
@testable import StrataStore

/// How the store keeps mixed values: the encoding round-trips every kind, refuses malformed
/// bytes, and `strata verify` reports a damaged value; a typed link is refused by link columns.
@Suite struct MixedEncodingTests {
    static let values: [StoreValue] = [
        .bool(true), .bool(false), .int(.min), .int(.max), .float(-0.5), .double(.nan), .double(1e300),
        .string(""), .string("naïve ☃"), .data(Data()), .data(Data([9, 8, 7])),
        .date(Date(timeIntervalSinceReferenceDate: -1e9)), .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
        .objectId(ObjectId(bytes: Array(0..<12))!), .decimal128(Decimal128(-42)),
        .typedLink(table: 3, key: ObjectKey(0)), .typedLink(table: .max, key: ObjectKey(.max)),
    ]

    @Test func everyKindRoundTrips() {
        for value in Self.values {
            let decoded = MixedEncoding.withEncoded(value) { MixedEncoding.decode($0) }
            if case .double(let d) = value, d.isNaN {
                guard case .double(let back)? = decoded else { Issue.record("\(String(describing: decoded))"); continue }
                #expect(back.isNaN)
            } else {
                #expect(decoded == value, "\(value)")
            }
            #expect(MixedEncoding.withEncoded(value) { MixedEncoding.problem($0) } == nil)
        }
        #expect(MixedEncoding.withEncoded(.typedLink(table: 7, key: ObjectKey(42))) { MixedEncoding.link(in: $0) }.map { [Int($0.table), Int($0.key)] } == [7, 42])
        #expect(MixedEncoding.withEncoded(.int(42)) { MixedEncoding.link(in: $0) } == nil)
    }

    @Test func malformedBytesDecodeAsNothingAndAreDescribed() {
        let cases: [[UInt8]] = [
            [],                                           // no tag
            [0],                                          // no kind 0
            [PropertyKind.mixed.rawValue],                // a mixed value inside a mixed value
            [99, 1, 2],                                   // unknown tag
            [PropertyKind.int.rawValue, 1, 2, 3],         // too short
            [PropertyKind.bool.rawValue, 2],              // not 0 or 1
            [PropertyKind.uuid.rawValue] + [UInt8](repeating: 0, count: 15),
            [PropertyKind.link.rawValue] + [UInt8](repeating: 0xFF, count: 12),  // a negative key
        ]
        for bytes in cases {
            bytes.withUnsafeBytes { raw in
                #expect(MixedEncoding.decode(raw) == nil, "\(bytes)")
                #expect(MixedEncoding.problem(raw) != nil, "\(bytes)")
            }
        }
        // A string that is not UTF-8 decodes (repaired), and verification says so.
        [PropertyKind.string.rawValue, 0xFF, 0xFE].withUnsafeBytes { raw in
            #expect(MixedEncoding.decode(raw) != nil)
            #expect(MixedEncoding.problem(raw) == "a mixed string that is not UTF-8")
        }
    }

    static let schema = Schema([
        ObjectSchema(name: "Thing", properties: [
            PropertySchema(name: "id", kind: .int, isPrimaryKey: true),
            PropertySchema(name: "value", kind: .mixed),
            PropertySchema(name: "other", kind: .link, objectType: "Thing"),
        ]),
    ])

    /// Opens the `Thing` store at `path`, runs `body` with a session and its table, and closes
    /// both.
    private func withThings(_ path: String, _ body: (StoreSession, TableAccess) throws -> Void) throws {
        let store = try Store.open(path: path, schema: Self.schema)
        defer { store.close() }
        let session = try store.makeSession()
        defer { session.close() }
        try body(session, try #require(session.table(named: "Thing")))
    }

    @Test func theStoreChecksMixedValuesAndVerifyFindsDamage() throws {
        let folder = TemporaryFolder()
        let path = folder.file()
        var tree = "", column: UInt16 = 0
        try withThings(path) { session, things throws in
            #expect(things.schema.properties[1].isOptional)
            try session.beginWrite()
            for i in 0..<10 { _ = try things.insert([.int(Int64(i)), i == 3 ? .string("three") : .int(Int64(i)), .null]) }
            // A plain link has no table: a mixed property refuses it; a link column refuses a
            // typed link.
            #expect(throws: StoreError.self) { try things.set(.link(ObjectKey(1)), for: ObjectKey(1), property: 1) }
            #expect(throws: StoreError.self) { try things.set(.typedLink(table: things.tableID, key: ObjectKey(1)), for: ObjectKey(1), property: 2) }
            try things.set(.typedLink(table: things.tableID, key: ObjectKey(9)), for: ObjectKey(0), property: 1)
            _ = try session.commit()
            #expect(try things.value(ObjectKey(0), property: 1) == .typedLink(table: things.tableID, key: ObjectKey(9)))
            #expect(try things.value(ObjectKey(3), property: 1) == .string("three"))
            #expect(things.verifyObjects().problems.isEmpty)
            // Deleting the linked object clears the value.
            try session.beginWrite()
            try session.delete([ObjectKey(9)], from: things)
            _ = try session.commit()
            #expect(try things.value(ObjectKey(0), property: 1) == .null)
            tree = things.clusterTreeName
            column = things.columnIDs[1]
        }
        // Row 3's value (a variable chunk: header, 8 bytes of offset and length per row, then
        // the bytes) gets an unknown tag.
        try rewriteFirstClusterChunk(path, tree: tree, column: column) { _, chunk in
            let entry = ChunkFormat.headerSize + 3 * 8
            let offset = Int(chunk[entry]) | Int(chunk[entry + 1]) << 8
            let entriesEnd = ChunkFormat.headerSize + 9 * 8
            chunk[entriesEnd + offset] = 99
        }
        try withThings(path) { _, things throws in
            #expect(try things.value(ObjectKey(3), property: 1) == .null)
            let problems = things.verifyObjects().problems
            #expect(problems == ["'Thing': 'value' of object 3 holds a mixed value with tag 99 and 5 bytes"], "\(problems)")
        }
    }

    @Test func verifyFindsLinksToObjectsThatDoNotExist() throws {
        let folder = TemporaryFolder()
        let path = folder.file()
        var tree = "", column: UInt16 = 0
        try withThings(path) { session, things throws in
            try session.beginWrite()
            for i in 0..<4 { _ = try things.insert([.int(Int64(i)), .null, i == 0 ? .null : .link(ObjectKey(0))]) }
            try things.set(.typedLink(table: things.tableID, key: ObjectKey(3)), for: ObjectKey(1), property: 1)
            _ = try session.commit()
            #expect(things.verifyObjects().problems.isEmpty)
            tree = things.clusterTreeName
            column = things.columnIDs[2]
        }
        // One object's link (a nullable 8-byte chunk: the header, the null flags, then 8 bytes a
        // row) now names object 999.
        try rewriteFirstClusterChunk(path, tree: tree, column: column) { _, chunk in
            let row = ChunkFormat.headerSize + 8 + 2 * 8
            withUnsafeBytes(of: Int64(999).littleEndian) { chunk.replaceSubrange(row..<row + 8, with: $0) }
        }
        try withThings(path) { _, things throws in
            let problems = things.verifyObjects().problems
            #expect(problems.count == 1 && problems.first?.hasSuffix("links to 'Thing' object 999, which does not exist") == true, "\(problems)")
        }
    }
}
