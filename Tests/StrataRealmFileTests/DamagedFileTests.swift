import Foundation
import Testing
@testable import StrataRealmFile

/// Damaged and foreign files: each gives a `RealmFileError`, never a crash or a hang.
@Suite("RealmFile damaged files")
struct DamagedFileTests {
    /// Opens `bytes` and reads every object of every class.
    @discardableResult
    static func readEverything(_ bytes: [UInt8]) throws -> Int {
        let file = try RealmFile(bytes: bytes)
        var count = 0
        for objectClass in file.schema.classes where !objectClass.isEmbedded {
            _ = try file.objectCount(ofClass: objectClass.name)
            try file.forEachObject(ofClass: objectClass.name) { _ in count += 1 }
        }
        return count
    }

    private static func isCorrupted(_ error: any Error) -> Bool {
        guard case .corrupted = error as? RealmFileError else { return false }
        return true
    }

    private static func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Fixtures.url(name + ".realm")))
    }

    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }

    @Test("a truncated file is damage", arguments: [("empty", 4_095), ("schema-v3", 2_048), ("all-types", 1_000_000), ("people-50k", 9_000_000)])
    func truncated(fixture: String, length: Int) throws {
        let bytes = Array(try Self.fixture(fixture).prefix(length))
        #expect(throws: RealmFileError.self) { try Self.readEverything(bytes) }
    }

    @Test("a file of zeros, and a foreign file, are not Realm files")
    func foreignFiles() throws {
        #expect(throws: RealmFileError.self) { try Self.readEverything([UInt8](repeating: 0, count: 4_096)) }
        let text = Array("SQLite format 3\0 this is not a Realm file at all, though it is long enough.".utf8)
        #expect(throws: RealmFileError.self) { try Self.readEverything(text) }
    }

    @Test("the encrypted fixture without its key is reported as not a Realm file")
    func encryptedWithoutKey() throws {
        #expect {
            try RealmFile(url: Fixtures.url("encrypted.realm"))
        } throws: { error in
            guard case .notARealmFile = error as? RealmFileError else { return false }
            return true
        }
    }

    @Test("a table ref pointing past the end of the file is damage")
    func tableRefPastEnd() throws {
        var bytes = try Self.fixture("schema-v3")
        let select = Int(bytes[23] & 1)
        let top = Int(Self.word(bytes, at: 8 * select))
        // Element 1 of the top array (32-bit elements in this file) is the tables array.
        #expect(bytes[top + 3] == 0x41 && bytes[top + 4] & 0x07 == 6)
        let tables = Int(UInt32(bytes[top + 12]) | UInt32(bytes[top + 13]) << 8 | UInt32(bytes[top + 14]) << 16 | UInt32(bytes[top + 15]) << 24)
        #expect(bytes[tables + 3] == 0x41)
        // Point the first table's ref past the end: its width is the tables array's width.
        let width = (1 << Int(bytes[tables + 4] & 0x07)) >> 1
        let bigRef = UInt64(bytes.count + 4_096)
        bytes.storeLittleEndian(bigRef, at: tables + 8, byteCount: width / 8)
        #expect(throws: RealmFileError.self) { try Self.readEverything(bytes) }
    }

    @Test("a B+tree whose child points back at its parent is a cycle, reported as damage")
    func bPlusTreeCycle() throws {
        // In all-types.realm, PrimitiveLists' 2,501-int list is an inner node at 1,107,664
        // (32-bit elements) whose first child is at 1,087,632.
        var bytes = try Self.fixture("all-types")
        let inner = 1_107_664
        try #require(bytes[inner + 3] == 0x41 && bytes[inner + 4] & 0x80 != 0 && bytes[inner + 4] & 0x07 == 6)
        try #require(UInt32(bytes[inner + 12]) | UInt32(bytes[inner + 13]) << 8 | UInt32(bytes[inner + 14]) << 16 == 1_087_632)
        bytes.storeLittleEndian(UInt64(inner), at: inner + 12, byteCount: 4)
        let file = try RealmFile(bytes: bytes)
        #expect(try file.objects(ofClass: "Scalars").count == 8)
        #expect { try file.objects(ofClass: "PrimitiveLists") } throws: { Self.isCorrupted($0) }
    }

    @Test("a cluster tree whose child points back at its root is a cycle, reported as damage")
    func clusterTreeCycle() throws {
        // In people-50k.realm, Person's cluster tree root is an inner node at 8,099,032
        // (32-bit elements); its children start at element 3.
        var bytes = try Self.fixture("people-50k")
        let root = 8_099_032
        try #require(bytes[root + 3] == 0x41 && bytes[root + 4] & 0x80 != 0 && bytes[root + 4] & 0x07 == 6)
        bytes.storeLittleEndian(UInt64(root), at: root + 8 + 3 * 4 + 4 * 5, byteCount: 4)
        let file = try RealmFile(bytes: bytes)
        #expect { try file.objects(ofClass: "Person") } throws: { Self.isCorrupted($0) }
    }

    @Test("a node header claiming millions of zero-width elements is damage, not a huge allocation")
    func absurdZeroWidthCount() throws {
        var bytes = try Self.fixture("schema-v3")
        let select = Int(bytes[23] & 1)
        let top = Int(Self.word(bytes, at: 8 * select))
        let names = Int(UInt32(bytes[top + 8]) | UInt32(bytes[top + 9]) << 8 | UInt32(bytes[top + 10]) << 16)
        try #require(bytes[names + 3] == 0x41)
        // Width 0, 16 million elements.
        bytes[names + 4] = bytes[names + 4] & 0xF8
        bytes[names + 5] = 0xFF
        bytes[names + 6] = 0xFF
        bytes[names + 7] = 0xFF
        #expect { try Self.readEverything(bytes) } throws: { Self.isCorrupted($0) }
    }
}

/// Seeded random damage to the fixtures: whatever the mutation, reading gives a result or a
/// `RealmFileError`.
@Suite("RealmFile fuzzing", .timeLimit(.minutes(10)))
struct RealmFileFuzzTests {
    /// Applies 1–6 mutations: a random byte, a random bit of a node header (an 8-aligned
    /// word), or a word overwritten with a plausible ref or size.
    static func mutate(_ bytes: inout [UInt8], using generator: inout SplitMix64) {
        for _ in 0..<Int.random(in: 1...6, using: &generator) {
            let wordOffset = Int.random(in: 0..<(bytes.count / 8), using: &generator) * 8
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            case 1:
                bytes[wordOffset + Int.random(in: 0..<8, using: &generator)] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            case 2:
                let ref = UInt64.random(in: 0...UInt64(bytes.count + 64), using: &generator) & ~7
                bytes.storeLittleEndian(ref, at: wordOffset, byteCount: [2, 4, 8].randomElement(using: &generator) ?? 8)
            default:
                bytes.storeLittleEndian(UInt64.random(in: 0...UInt64.max, using: &generator), at: wordOffset)
            }
        }
    }

    @Test("thousands of mutated small fixtures never crash the reader", arguments: ["empty", "schema-v3"])
    func mutatedSmallFixtures(fixture: String) throws {
        let original = [UInt8](try Data(contentsOf: Fixtures.url(fixture + ".realm")))
        var generator = SplitMix64(seed: fixture == "empty" ? 33 : 34)
        var failures = 0
        var successes = 0
        for _ in 0..<2_500 {
            var bytes = original
            Self.mutate(&bytes, using: &generator)
            do {
                try DamagedFileTests.readEverything(bytes)
                successes += 1
            } catch is RealmFileError {
                failures += 1
            }
        }
        // Both outcomes occur: many mutations hit bytes the reader needs, some hit padding.
        #expect(failures > 100)
        #expect(successes > 0)
    }

    @Test("mutated node headers in the all-types fixture never crash the reader")
    func mutatedAllTypes() throws {
        let original = [UInt8](try Data(contentsOf: Fixtures.url("all-types.realm")))
        // Realm Core writes "AAAA" into the first four bytes of every node header it writes
        // in this file, so these offsets are (almost all) node headers.
        let headers = stride(from: 24, to: original.count - 8, by: 8).filter { offset in
            original[offset] == 0x41 && original[offset + 1] == 0x41 && original[offset + 2] == 0x41 && original[offset + 3] == 0x41
        }
        #expect(headers.count > 1_000)
        var generator = SplitMix64(seed: 35)
        var failures = 0
        for _ in 0..<120 {
            var bytes = original
            let header = headers.randomElement(using: &generator) ?? 24
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: bytes[header + 4] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            case 1: bytes[header + Int.random(in: 5..<8, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            default: bytes.storeLittleEndian(UInt64.random(in: 0...UInt64(bytes.count), using: &generator), at: header + 8, byteCount: 4)
            }
            do {
                try DamagedFileTests.readEverything(bytes)
            } catch is RealmFileError {
                failures += 1
            }
        }
        #expect(failures > 10)
    }
}

/// Embedded objects whose links loop back (which Realm cannot write) end in an error.
@Suite("RealmFile embedded cycles")
struct EmbeddedCycleTests {
    @Test("an embedded object linking to itself is reported as damage, not followed forever")
    func selfLinkingEmbeddedObject() throws {
        // In all-types.realm, Address (embedded) has the link `geo` to the embedded class Geo.
        // Rewrite the target table of Address.geo to Address itself, and every stored link
        // in the column to Address's first object: following it never ends.
        let file = try Fixtures.open("all-types")
        #expect(file.schema[className: "Address"]?[property: "geo"]?.linkTarget == "Geo")
        var bytes = [UInt8](try Data(contentsOf: Fixtures.url("all-types.realm")))
        let graph = NodeGraph(file: FileMapping(bytes: bytes))
        let select = Int(bytes[23] & 1)
        var topRef = 0
        for index in 0..<8 { topRef |= Int(bytes[8 * select + index]) << (8 * index) }
        let group = try Group(graph: graph, topRef: topRef)
        let address = try #require(group.table(className: "Address"))
        let geo = try #require(address.columns.first { $0.name == "geo" })
        // The table's top array (found through the group's tables array) holds the opposite
        // table keys at 7.
        let top = try graph.node(topRef)
        let tables = try #require(try graph.child(of: top, at: 1))
        var addressTop: Node?
        for index in 0..<tables.count {
            if let ref = try tables.ref(at: index), let table = try? TableInfo(graph: graph, name: "", ref: ref), table.key == address.key {
                addressTop = try graph.node(ref)
            }
        }
        let addressTopNode = try #require(addressTop)
        let opposite = try #require(try graph.child(of: addressTopNode, at: 7))
        guard case let .bits(width) = opposite.encoding, width >= 8 else {
            Issue.record("unexpected opposite-table layout")
            return
        }
        bytes.storeLittleEndian(UInt64(address.key), at: opposite.ref + 8 + geo.key.index * width / 8, byteCount: width / 8)
        let root = try #require(address.clusterTreeRef)
        let leaf = try #require(try graph.clusterLeaves(root: root).first)
        let firstKey = try #require(try graph.objectKeys(of: leaf).first)
        let column = try #require(try graph.child(of: leaf.node, at: geo.key.clusterSlot))
        guard case let .bits(columnWidth) = column.encoding, columnWidth > 0, firstKey + 1 < (1 << Int64(min(columnWidth, 62))) else {
            Issue.record("unexpected link column layout")
            return
        }
        for row in 0..<column.count {
            for bit in 0..<columnWidth {
                let position = (column.ref + 8) * 8 + row * columnWidth + bit
                let mask = UInt8(1) << UInt8(position % 8)
                if (UInt64(firstKey + 1) >> UInt64(bit)) & 1 == 1 {
                    bytes[position / 8] |= mask
                } else {
                    bytes[position / 8] &= ~mask
                }
            }
        }
        let damaged = try RealmFile(bytes: bytes)
        #expect {
            try damaged.objects(ofClass: "Owner")
        } throws: { error in
            guard case .corrupted = error as? RealmFileError else { return false }
            return true
        }
    }
}

/// Random node graphs fed to every leaf decoder: a value is decoded or a `RealmFileError` is
/// thrown, whatever the bytes.
@Suite("Realm leaf decoders on random nodes")
struct RandomLeafTests {
    /// A 4 KiB file of random words, most of them shaped like node headers with small sizes,
    /// so that decoders get past the header and into payloads and child refs.
    static func randomFile(using generator: inout SplitMix64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 4_096)
        for offset in stride(from: 0, to: bytes.count, by: 8) {
            bytes.storeLittleEndian(generator.next(), at: offset)
            if offset >= 24 && Bool.random(using: &generator) {
                bytes[offset + 3] = Int.random(in: 0..<8, using: &generator) == 0 ? 0x42 : 0x41
                bytes[offset + 5] = 0
                bytes[offset + 6] = 0
                bytes[offset + 7] = UInt8.random(in: 0...12, using: &generator)
            } else if Bool.random(using: &generator) {
                // A plausible ref.
                bytes.storeLittleEndian(UInt64.random(in: 3...511, using: &generator) * 8, at: offset, byteCount: [2, 4, 8].randomElement(using: &generator) ?? 8)
            }
        }
        bytes.replaceSubrange(0..<24, with: [UInt8](repeating: 0, count: 24))
        bytes.replaceSubrange(16..<20, with: Array("T-DB".utf8))
        bytes[20] = 24
        return bytes
    }

    @Test("every element kind decodes random nodes or throws a typed error")
    func decodersNeverTrap() throws {
        var generator = SplitMix64(seed: 3_300)
        let kinds: [ElementKind] = [.int, .bool, .float, .double, .string, .binary, .timestamp, .objectID, .uuid, .decimal, .mixed, .link(targetTableKey: 0)]
        var decoded = 0
        var rejected = 0
        for _ in 0..<150 {
            let mapping = FileMapping(bytes: Self.randomFile(using: &generator))
            let graph = NodeGraph(file: mapping)
            let reader = ObjectReader(graph: graph, group: try Group(graph: graph, topRef: 0))
            for _ in 0..<24 {
                let ref = Int.random(in: 3..<512, using: &generator) * 8
                for kind in kinds {
                    do {
                        let node = try graph.node(ref)
                        _ = try reader.values(of: node, kind: kind, nullable: Bool.random(using: &generator), depth: 0,
                                              inCollection: Bool.random(using: &generator))
                        _ = try reader.collectionElements(root: ref, kind: kind, nullable: true, depth: 0)
                        _ = try reader.dictionaryEntries(root: ref, depth: 0)
                        decoded += 1
                    } catch is RealmFileError {
                        rejected += 1
                    }
                }
            }
        }
        // Both outcomes occur: the random graphs are neither all valid nor all rejected at
        // the first header.
        #expect(rejected > 0)
        #expect(decoded > 100)
        #expect(decoded + rejected == 150 * 24 * 12)
    }
}
