import Foundation
import Testing
@testable import StrataStore

/// Packed Int chunks (format 3): exact round trips, the fixed form when packing does not pay
/// or the range is too wide, fixed-form chunks (older files) still read, and damaged headers
/// are typed errors.
@Suite struct PackedChunkTests {
    static func buffer(_ values: [Int64?], optional: Bool, packs: Bool = true) -> ColumnBuffer {
        let buffer = ColumnBuffer(width: 8, hasNulls: optional, capacity: max(values.count, 1), packsIntegers: packs)
        for (row, value) in values.enumerated() {
            buffer.insertRow(at: row)
            if let value { buffer.setFixed(value, at: row) } else { buffer.setNull(row) }
        }
        return buffer
    }

    static func roundTrip(_ values: [Int64?], optional: Bool, packs: Bool = true) throws -> (format: UInt8, view: [Int64?], loaded: [Int64?]) {
        var encoded: [UInt8] = []
        buffer(values, optional: optional, packs: packs).encode(into: &encoded)
        return try encoded.withUnsafeBytes { raw in
            let view = try ChunkView(encoded: raw, expectedCount: values.count)
            let read = (0..<values.count).map { view.isNull($0) ? nil : view.int($0) }
            let loaded = ColumnBuffer(width: 8, hasNulls: optional, capacity: max(values.count, 1), packsIntegers: true)
            loaded.load(view, count: values.count)
            let again = (0..<values.count).map { loaded.view.isNull($0) ? nil : loaded.view.int($0) }
            var unpacked = [Int64](repeating: -7, count: values.count)
            unpacked.withUnsafeMutableBufferPointer { view.unpackInts(0..<values.count, into: $0.baseAddress!) }
            #expect(unpacked == (0..<values.count).map { view.int($0) })
            return (raw[4], read, again)
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func randomColumnsRoundTripExactly(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let count = random.int(1..<257)
            let width = random.int(0..<64)
            let offset = Int64(bitPattern: random.next())
            let optional = random.int(0..<2) == 0
            let values: [Int64?] = (0..<count).map { _ in
                if optional && random.int(0..<5) == 0 { return nil }
                let field = width == 0 ? 0 : random.next() >> UInt64(64 - width)
                return offset &+ Int64(bitPattern: field)
            }
            let (format, read, loaded) = try Self.roundTrip(values, optional: optional)
            #expect(read == values)
            #expect(loaded == values)
            #expect(format == ChunkFormat.packed || format == ChunkFormat.fixed)
        }
    }

    @Test func packsWhenItPaysAndFallsBackOtherwise() throws {
        let ages: [Int64?] = (0..<256).map { Int64($0 % 75) }
        #expect(try Self.roundTrip(ages, optional: false).format == ChunkFormat.packed)
        var encoded: [UInt8] = []
        Self.buffer(ages, optional: false).encode(into: &encoded)
        #expect(encoded.count == 8 + 8 + ChunkFormat.packedBytes(count: 256, bits: 8))  // 280 bytes, not 2,056
        // All equal: zero bits a value.
        #expect(try Self.roundTrip(Array(repeating: -5, count: 100), optional: false) == (ChunkFormat.packed, Array(repeating: -5, count: 100), Array(repeating: -5, count: 100)))
        // The whole Int64 range does not fit in 56 bits: fixed form.
        let wide: [Int64?] = [.min, 0, .max, nil]
        let result = try Self.roundTrip(wide, optional: true)
        #expect(result.format == ChunkFormat.fixed)
        #expect(result.view == wide)
        // One value: the fixed form is smaller.
        #expect(try Self.roundTrip([42], optional: false).format == ChunkFormat.fixed)
    }

    @Test func fixedIntChunksOfOlderFilesStillRead() throws {
        var random = SplitMix64(seed: 9)
        let values: [Int64?] = (0..<200).map { _ in random.int(0..<4) == 0 ? nil : Int64(random.int(-1000..<1000)) }
        let result = try Self.roundTrip(values, optional: true, packs: false)
        #expect(result.format == ChunkFormat.fixed)
        #expect(result.view == values)
        #expect(result.loaded == values)
    }

    @Test func damagedPackedChunksAreTypedErrors() throws {
        var encoded: [UInt8] = []
        Self.buffer((0..<100).map { Int64($0) }, optional: false).encode(into: &encoded)
        #expect(encoded[4] == ChunkFormat.packed)
        var tooWide = encoded
        tooWide[5] = 60
        var truncated = encoded
        truncated.removeLast()
        var longer = encoded
        longer[5] = 16
        for damaged in [tooWide, truncated, longer] {
            #expect(throws: StoreError.self) {
                try damaged.withUnsafeBytes { _ = try ChunkView(encoded: $0) }
            }
        }
    }

    /// Kernels over packed chunks of every field width, with constants inside, at the edges of
    /// and far outside each cluster's range, against a count in Swift.
    @Test func kernelsOnPackedChunksMatchSwift() throws {
        let schema = Schema([ObjectSchema(name: "V", properties: [
            PropertySchema(name: "v", kind: .int),
            PropertySchema(name: "ov", kind: .int, isOptional: true),
        ])])
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: schema)
        let session = try store.makeSession()
        let table = session.table(named: "V")!
        var random = SplitMix64(seed: 21)
        var rows: [(Int64, Int64?)] = []
        let bases: [Int64] = [0, -100, 1_000_000, .min + 5, .max - 70_000, -3_000_000_000]
        let spans: [UInt64] = [0, 1, 200, 255, 256, 60_000, 65_535, 4_000_000_000, 1 << 40]
        try session.beginWrite()
        for cluster in 0..<24 {
            let base = bases[cluster % bases.count], span = spans[cluster % spans.count]
            for _ in 0..<256 {
                let v = base &+ Int64(bitPattern: span == 0 ? 0 : random.next() % (span + 1))
                let ov: Int64? = random.int(0..<4) == 0 ? nil : base &+ Int64(bitPattern: span == 0 ? 0 : random.next() % (span + 1))
                rows.append((v, ov))
                try table.insert([.int(v), ov.map { .int($0) } ?? .null])
            }
        }
        _ = try session.commit()
        var constants: Set<Int64> = [.min, .max, 0, -1, 1]
        for base in bases {
            for span in spans {
                for delta in [-1, 0, 1] as [Int64] {
                    constants.insert(base &+ delta)
                    constants.insert(base &+ Int64(bitPattern: span) &+ delta)
                }
            }
        }
        let ops: [(String, QueryOperator, (Int64, Int64) -> Bool)] = [
            ("==", .equal, { $0 == $1 }), ("!=", .notEqual, { $0 != $1 }), ("<", .less, { $0 < $1 }),
            ("<=", .lessOrEqual, { $0 <= $1 }), (">", .greater, { $0 > $1 }), (">=", .greaterOrEqual, { $0 >= $1 }),
        ]
        for c in constants.sorted() {
            for (name, op, test) in ops {
                let plain = try TableQuery(table: table, predicate: .comparison(QueryComparison(.keyPath(["v"]), op, .constant(.int(c)))))
                #expect(try plain.count() == rows.filter { test($0.0, c) }.count, "v \(name) \(c)")
                let optional = try TableQuery(table: table, predicate: .comparison(QueryComparison(.keyPath(["ov"]), op, .constant(.int(c)))))
                #expect(try optional.count() == rows.filter { $0.1.map { test($0, c) } ?? (op == .notEqual) }.count, "ov \(name) \(c)")
            }
        }
        session.close()
        store.close()
    }
}
