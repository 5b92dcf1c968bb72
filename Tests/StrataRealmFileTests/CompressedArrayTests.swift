import Testing
@testable import StrataRealmFile

/// Format 24's compressed integer nodes (header kind `B`), built by hand from the layout in
/// Realm Core's node_header.hpp: none of the fixtures happens to contain one.
@Suite("Realm compressed arrays")
struct CompressedArrayTests {
    /// A minimal file: a 24-byte header (format 24, no top ref) followed by `node` at ref 24.
    private func file(node: [UInt8]) -> FileMapping {
        var bytes = [UInt8](repeating: 0, count: 24)
        bytes.replaceSubrange(16..<20, with: Array("T-DB".utf8))
        bytes[20] = 24
        bytes[21] = 24
        return FileMapping(bytes: bytes + node + [UInt8](repeating: 0, count: 8))
    }

    /// `values` as `width`-bit fields, least significant bit first.
    private func bitFields(_ values: [UInt64], width: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: (values.count * width + 7) / 8)
        for (index, value) in values.enumerated() {
            for bit in 0..<width where (value >> UInt64(bit)) & 1 == 1 {
                let position = index * width + bit
                bytes[position / 8] |= 1 << UInt8(position % 8)
            }
        }
        return bytes
    }

    private func twosComplement(_ value: Int64, width: Int) -> UInt64 {
        UInt64(bitPattern: value) & (width == 64 ? UInt64.max : (1 << UInt64(width)) - 1)
    }

    @Test("a Packed node holds signed fields of the width in its header", arguments: [1, 3, 4, 13, 33, 64])
    func packed(width: Int) throws {
        var generator = SplitMix64(seed: UInt64(width))
        let low = width == 64 ? Int64.min : -(Int64(1) << Int64(width - 1))
        let high = width == 64 ? Int64.max : (Int64(1) << Int64(width - 1)) - 1
        let values = (0..<37).map { _ in Int64.random(in: low...high, using: &generator) }
        let header: [UInt8] = [0, 0, 0x00, 0x42, UInt8(width), 0, UInt8(values.count), 0]
        let node = try Node(file: file(node: header + bitFields(values.map { twosComplement($0, width: width) }, width: width)), ref: 24)
        #expect(node.encoding == .packed(width: width))
        #expect(try node.integers() == values)
    }

    @Test("a Flex node maps each element's index to its value table")
    func flex() throws {
        let table: [Int64] = [-100_000, 5, 70_000, Int64.min >> 40]
        let indexes: [UInt64] = [2, 0, 1, 1, 0, 3, 2]
        let valueWidth = 25
        let indexWidth = 2
        let word = UInt32(valueWidth - 1) << 26 | UInt32(indexWidth - 1) << 20 | UInt32(table.count) << 10 | UInt32(indexes.count)
        let header: [UInt8] = [0, 0, 0x03, 0x42, UInt8(word & 0xFF), UInt8((word >> 8) & 0xFF), UInt8((word >> 16) & 0xFF), UInt8(word >> 24)]
        let bits = table.map { twosComplement($0, width: valueWidth) }
        let payload = bitFields(bits, width: valueWidth)
        // The indexes start right after the value table's bits, not at a byte boundary.
        var combined = [UInt8](repeating: 0, count: (table.count * valueWidth + indexes.count * indexWidth + 7) / 8)
        combined.replaceSubrange(0..<payload.count, with: payload)
        for (index, value) in indexes.enumerated() {
            for bit in 0..<indexWidth where (value >> UInt64(bit)) & 1 == 1 {
                let position = table.count * valueWidth + index * indexWidth + bit
                combined[position / 8] |= 1 << UInt8(position % 8)
            }
        }
        let node = try Node(file: file(node: header + combined), ref: 24)
        #expect(node.count == indexes.count)
        #expect(try node.integers() == indexes.map { table[Int($0)] })
    }

    @Test("a Flex index past the value table is damage")
    func flexIndexOutOfRange() throws {
        // One 8-bit value, two 2-bit indexes, the second pointing at value 3.
        let word = UInt32(7) << 26 | UInt32(1) << 20 | UInt32(1) << 10 | UInt32(2)
        let header: [UInt8] = [0, 0, 0x03, 0x42, UInt8(word & 0xFF), UInt8((word >> 8) & 0xFF), UInt8((word >> 16) & 0xFF), UInt8(word >> 24)]
        let node = try Node(file: file(node: header + [0x2A, 0b0000_1100]), ref: 24)
        #expect(try node.integer(at: 0) == 42)
        #expect(throws: RealmFileError.self) { try node.integer(at: 1) }
    }

    @Test("the flags of a kind-B header (inner, has refs, context) are read from byte 2")
    func kindBFlags() throws {
        let header: [UInt8] = [0, 0, 0x60, 0x42, 8, 0, 1, 0]
        let node = try Node(file: file(node: header + [7]), ref: 24)
        #expect(node.hasRefs && node.isInnerBPlusTreeNode && !node.contextFlag)
    }

    @Test("encodings this reader does not know are a typed error", arguments: [UInt8(1), 2, 9])
    func unknownEncoding(encoding: UInt8) throws {
        let header: [UInt8] = [0, 0, encoding, 0x42, 8, 0, 1, 0]
        #expect(throws: RealmFileError.self) { try Node(file: file(node: header + [0]), ref: 24) }
    }

    @Test("a Packed width over 64 bits is damage")
    func packedWidthTooLarge() throws {
        let header: [UInt8] = [0, 0, 0x00, 0x42, 65, 0, 1, 0]
        #expect(throws: RealmFileError.self) { try Node(file: file(node: header + [UInt8](repeating: 0, count: 16)), ref: 24) }
    }
}
