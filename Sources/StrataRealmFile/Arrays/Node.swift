/// One node ("array") of Realm's node graph: an 8-byte header and its payload, checked to lie
/// inside the file.
///
/// Two header kinds exist in format 24. Kind `A` (byte 3 is `0x41`), used by every Realm Core
/// version: bytes 0–2 hold the capacity, byte 4 the flags (bit 7 inner B+tree node, bit 6 has
/// refs, bit 5 context), the width type (bits 3–4: bits, bytes or ignore) and the width as
/// log2(width)+1 (bits 0–2), bytes 5–7 the element count, big-endian. Kind `B`, Core 14's
/// compressed integer arrays: byte 2 holds the flags (high nibble: 4 inner, 2 has refs,
/// 1 context) and the encoding (low nibble); `Packed` stores each element as a signed
/// bit field of the width in bytes 4–5 (little-endian), for the count in bytes 6–7; `Flex`
/// stores a table of distinct signed values and then one unsigned index per element, its
/// 32-bit word at byte 4 holding value width − 1 (bits 26–31), index width − 1 (bits 20–25),
/// the number of values (bits 10–19) and the number of elements (bits 0–9). Bit fields are
/// packed least significant bit first.
struct Node {
    /// How the payload encodes its elements.
    enum Encoding: Equatable {
        /// Kind A, width type "bits": `width` bits per element (0, 1, 2, 4, 8, 16, 32 or 64).
        case bits(width: Int)
        /// Kind A, width type "multiply": `width` bytes per element.
        case bytes(width: Int)
        /// Kind A, width type "ignore": one byte per element (blobs).
        case ignore
        /// Kind B "Packed": signed `width`-bit fields.
        case packed(width: Int)
        /// Kind B "Flex": `valueCount` signed `valueWidth`-bit values, then `indexWidth`-bit indexes.
        case flex(valueWidth: Int, indexWidth: Int, valueCount: Int)
    }

    /// Where the node starts in the file.
    let ref: Int
    /// The number of elements (bytes for blobs and fixed-size byte arrays).
    let count: Int
    let encoding: Encoding
    let isInnerBPlusTreeNode: Bool
    let hasRefs: Bool
    let contextFlag: Bool
    /// The payload: the bytes after the header (which keep the memory they lie in alive).
    let payload: FileBytes

    static let headerSize = 8

    /// Reads the node at `ref`, checking that its header and payload lie inside `file`.
    init(file: FileMapping, ref: Int) throws {
        guard ref > 0, ref % 8 == 0, ref <= file.count - Node.headerSize else {
            throw RealmFileError.corrupted(reason: "ref \(ref) does not point at a node inside the \(file.count)-byte file")
        }
        let header = try file.bytes(at: ref, count: Node.headerSize)
        let kind = header[3]
        var payloadBits: Int
        switch kind {
        case 0x41:
            let flags = header[4]
            isInnerBPlusTreeNode = flags & 0x80 != 0
            hasRefs = flags & 0x40 != 0
            contextFlag = flags & 0x20 != 0
            let width = (1 << Int(flags & 0x07)) >> 1
            count = Int(header[5]) << 16 | Int(header[6]) << 8 | Int(header[7])
            switch (flags >> 3) & 0x03 {
            case 0:
                encoding = .bits(width: width)
                payloadBits = count * width
            case 1:
                encoding = .bytes(width: width)
                payloadBits = count * width * 8
            case 2:
                encoding = .ignore
                payloadBits = count * 8
            default:
                throw RealmFileError.corrupted(reason: "the node at \(ref) has an undefined width type")
            }
        case 0x42:
            let flags = header[2] >> 4
            isInnerBPlusTreeNode = flags & 0x4 != 0
            hasRefs = flags & 0x2 != 0
            contextFlag = flags & 0x1 != 0
            switch header[2] & 0x0F {
            case 0:
                let width = Int(header[4]) | Int(header[5]) << 8
                guard width <= 64 else {
                    throw RealmFileError.corrupted(reason: "the packed node at \(ref) claims \(width)-bit elements")
                }
                count = Int(header[6]) | Int(header[7]) << 8
                encoding = .packed(width: width)
                payloadBits = count * width
            case 3:
                let word = UInt32(header[4]) | UInt32(header[5]) << 8 | UInt32(header[6]) << 16 | UInt32(header[7]) << 24
                let valueWidth = Int(word >> 26) + 1
                let indexWidth = Int((word >> 20) & 0x3F) + 1
                let valueCount = Int((word >> 10) & 0x3FF)
                count = Int(word & 0x3FF)
                encoding = .flex(valueWidth: valueWidth, indexWidth: indexWidth, valueCount: valueCount)
                payloadBits = valueCount * valueWidth + count * indexWidth
            case let other:
                throw RealmFileError.unsupportedFeature("compressed array encoding \(other) (node at \(ref))")
            }
        default:
            throw RealmFileError.corrupted(reason: "the node at \(ref) has an unknown header kind 0x\(String(kind, radix: 16))")
        }
        self.ref = ref
        if payloadBits == 0 && count > Node.maximumZeroWidthCount {
            throw RealmFileError.corrupted(reason: "the node at \(ref) claims \(count) elements of width 0")
        }
        payload = try file.bytes(at: ref + Node.headerSize, count: (payloadBits + 7) / 8)
    }

    /// Whether the elements are integers (readable with `integer(at:)`).
    var holdsIntegers: Bool {
        switch encoding {
        case .bits, .packed, .flex: return true
        case .bytes, .ignore: return false
        }
    }

    /// The integer element at `index`. Throws if the node does not hold integers or a Flex
    /// index points past its value table.
    func integer(at index: Int) throws -> Int64 {
        guard index >= 0, index < count else {
            throw RealmFileError.corrupted(reason: "element \(index) read from the \(count)-element node at \(ref)")
        }
        switch encoding {
        case let .bits(width):
            switch width {
            case 0: return 0
            case 1, 2, 4: return Int64(bitField(at: index * width, width: width))
            case 8: return Int64(Int8(bitPattern: payload[index]))
            case 16: return Int64(payload.loadUnaligned(fromByteOffset: index * 2, as: Int16.self).littleEndian)
            case 32: return Int64(payload.loadUnaligned(fromByteOffset: index * 4, as: Int32.self).littleEndian)
            default: return payload.loadUnaligned(fromByteOffset: index * 8, as: Int64.self).littleEndian
            }
        case let .packed(width):
            return Node.signExtend(bitField(at: index * width, width: width), width: width)
        case let .flex(valueWidth, indexWidth, valueCount):
            let valueIndex = Int(bitField(at: valueCount * valueWidth + index * indexWidth, width: indexWidth))
            guard valueIndex < valueCount else {
                throw RealmFileError.corrupted(reason: "a compressed node at \(ref) indexes value \(valueIndex) of \(valueCount)")
            }
            return Node.signExtend(bitField(at: valueIndex * valueWidth, width: valueWidth), width: valueWidth)
        case .bytes, .ignore:
            throw RealmFileError.corrupted(reason: "the node at \(ref) was expected to hold integers")
        }
    }

    /// The element at `index` of an unsigned array (Realm's `ArrayUnsigned`, used for object
    /// keys and key offsets in clusters): 8-, 16- and 32-bit elements are not sign-extended.
    func unsignedInteger(at index: Int) throws -> Int64 {
        guard case let .bits(width) = encoding, width >= 8, width < 64 else {
            return try integer(at: index)
        }
        guard index >= 0, index < count else {
            throw RealmFileError.corrupted(reason: "element \(index) read from the \(count)-element node at \(ref)")
        }
        switch width {
        case 8: return Int64(payload[index])
        case 16: return Int64(UInt16(littleEndian: payload.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)))
        default: return Int64(UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
        }
    }

    /// All integer elements.
    func integers() throws -> [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(count)
        for index in 0..<count { result.append(try integer(at: index)) }
        return result
    }

    /// The element at `index` as a ref, or nil for 0. Throws for a tagged value (odd) where a
    /// ref must be.
    func ref(at index: Int) throws -> Int? {
        let value = try integer(at: index)
        if value == 0 { return nil }
        guard value > 0, value & 1 == 0 else {
            throw RealmFileError.corrupted(reason: "element \(index) of the node at \(ref) should be a ref but is \(value)")
        }
        return Int(value)
    }

    /// The element at `index` as a tagged integer (stored as `value << 1 | 1`).
    func tagged(at index: Int) throws -> Int64 {
        let value = try integer(at: index)
        guard value & 1 == 1 else {
            throw RealmFileError.corrupted(reason: "element \(index) of the node at \(ref) should be a tagged integer but is \(value)")
        }
        return value >> 1
    }

    /// `width` bits starting at bit `position` of the payload, least significant bit first.
    /// Bits past the payload's end read as zero.
    private func bitField(at position: Int, width: Int) -> UInt64 {
        guard width > 0 else { return 0 }
        var value: UInt64 = 0
        let firstByte = position >> 3
        let shift = position & 7
        let byteCount = (shift + width + 7) / 8
        for offset in 0..<byteCount where firstByte + offset < payload.count {
            let byte = UInt64(payload[firstByte + offset])
            let bitOffset = offset * 8 - shift
            if bitOffset >= 0 {
                if bitOffset < 64 { value |= byte << UInt64(bitOffset) }
            } else {
                value |= byte >> UInt64(-bitOffset)
            }
        }
        return width == 64 ? value : value & ((1 << UInt64(width)) - 1)
    }

    private static func signExtend(_ value: UInt64, width: Int) -> Int64 {
        guard width > 0, width < 64 else { return Int64(bitPattern: value) }
        let shift = UInt64(64 - width)
        return Int64(bitPattern: value << shift) >> Int64(shift)
    }
}
