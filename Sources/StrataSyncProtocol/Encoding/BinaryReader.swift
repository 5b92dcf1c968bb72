/// Reads the encodings ``BinaryWriter`` writes from untrusted bytes: every read checks the
/// bytes left first and throws a ``SyncProtocolError`` naming the item and its offset, so no
/// input can make it crash, loop or allocate more than the input's own size.
///
/// Counts of elements are bounded by the bytes left (every element takes at least one byte)
/// before anyone reserves room for them; nested values are bounded by ``maximumDepth``.
///
/// ```swift
/// var reader = BinaryReader(bytes)
/// let count = try reader.readVarint("count")
/// let name = try reader.readString("name")
/// try reader.expectEnd()
/// ```
public struct BinaryReader: Sendable {
    /// How deeply values may nest (embedded objects inside embedded objects) before the input
    /// is refused; bounds the decoder's recursion.
    public static let maximumDepth = 64

    /// The bytes being read.
    public let bytes: [UInt8]
    /// The offset of the next byte to read.
    public private(set) var offset: Int
    /// How many nested values enclose the one being read.
    var depth = 0

    /// A reader at the start of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        offset = 0
    }

    /// A reader over a copy of `bytes`.
    public init(_ bytes: some Collection<UInt8>) { self.init(Array(bytes)) }

    /// The bytes not yet read.
    public var remaining: Int { bytes.count - offset }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset == bytes.count }

    /// Throws unless every byte has been read: trailing bytes are malformed, not ignored.
    public func expectEnd() throws(SyncProtocolError) {
        guard isAtEnd else {
            throw .malformed("\(remaining) unexpected trailing byte(s) at offset \(offset)")
        }
    }

    /// Reads one byte.
    public mutating func readByte(_ what: @autoclosure () -> String = "a byte") throws(SyncProtocolError) -> UInt8 {
        guard offset < bytes.count else { throw .malformed("the input ends at offset \(offset) where \(what()) was expected") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads a byte that must be 0 (false) or 1 (true).
    public mutating func readBool(_ what: @autoclosure () -> String = "a boolean") throws(SyncProtocolError) -> Bool {
        let start = offset
        switch try readByte(what()) {
        case 0: return false
        case 1: return true
        case let other: throw .malformed("\(what()) at offset \(start) is \(other), not 0 or 1")
        }
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes whose value fits 64 bits.
    public mutating func readVarint(_ what: @autoclosure () -> String = "a varint") throws(SyncProtocolError) -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else { throw .malformed("the input ends inside \(what()) starting at offset \(start)") }
            let byte = bytes[offset]
            offset += 1
            let payload = UInt64(byte & 0x7F)
            // The tenth byte holds the 64th bit alone.
            if shift == 63 && payload > 1 { throw .malformed("\(what()) at offset \(start) overflows 64 bits") }
            value |= payload << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            if shift > 63 { throw .malformed("\(what()) at offset \(start) is longer than 10 bytes") }
        }
    }

    /// Reads a zig-zag varint as a signed integer.
    public mutating func readSignedVarint(_ what: @autoclosure () -> String = "a signed varint") throws(SyncProtocolError) -> Int64 {
        let raw = try readVarint(what())
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// Reads a varint that must fit a `UInt32`.
    public mutating func readVarintUInt32(_ what: @autoclosure () -> String = "a varint") throws(SyncProtocolError) -> UInt32 {
        let start = offset
        let raw = try readVarint(what())
        guard let value = UInt32(exactly: raw) else { throw .malformed("\(what()) at offset \(start) is \(raw), over UInt32.max") }
        return value
    }

    /// Reads a little-endian `UInt16`.
    public mutating func readUInt16(_ what: @autoclosure () -> String = "a UInt16") throws(SyncProtocolError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readLittleEndian(2, what()))
    }

    /// Reads a little-endian `UInt32`.
    public mutating func readUInt32(_ what: @autoclosure () -> String = "a UInt32") throws(SyncProtocolError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(4, what()))
    }

    /// Reads a little-endian `UInt64`.
    public mutating func readUInt64(_ what: @autoclosure () -> String = "a UInt64") throws(SyncProtocolError) -> UInt64 {
        try readLittleEndian(8, what())
    }

    /// Reads a little-endian unsigned integer of `width` bytes (at most 8).
    private mutating func readLittleEndian(_ width: Int, _ what: @autoclosure () -> String) throws(SyncProtocolError) -> UInt64 {
        var value: UInt64 = 0
        // A slice keeps its base's indices.
        for (index, byte) in try readRawBytes(width, what()).enumerated() { value |= UInt64(byte) << UInt64(8 * index) }
        return value
    }

    /// Reads a `Float` from its bit pattern.
    public mutating func readFloat(_ what: @autoclosure () -> String = "a float") throws(SyncProtocolError) -> Float {
        Float(bitPattern: try readUInt32(what()))
    }

    /// Reads a `Double` from its bit pattern.
    public mutating func readDouble(_ what: @autoclosure () -> String = "a double") throws(SyncProtocolError) -> Double {
        Double(bitPattern: try readUInt64(what()))
    }

    /// Reads exactly `count` bytes (no length prefix). The slice keeps the indices of
    /// ``bytes``.
    public mutating func readRawBytes(_ count: Int, _ what: @autoclosure () -> String = "bytes") throws(SyncProtocolError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else {
            throw .malformed("\(what()) at offset \(offset) needs \(count) byte(s), \(remaining) left")
        }
        defer { offset += count }
        return bytes[offset ..< offset + count]
    }

    /// Reads a varint length, then that many bytes.
    public mutating func readBytes(_ what: @autoclosure () -> String = "a byte array") throws(SyncProtocolError) -> [UInt8] {
        let start = offset
        let length = try readVarint("the length of \(what())")
        guard length <= UInt64(remaining) else {
            throw .malformed("the length of \(what()) at offset \(start) is \(length), but only \(remaining) byte(s) follow")
        }
        return Array(try readRawBytes(Int(length), what()))
    }

    /// Reads a length-prefixed string, refusing bytes that are not valid UTF-8.
    public mutating func readString(_ what: @autoclosure () -> String = "a string") throws(SyncProtocolError) -> String {
        let start = offset
        let raw = try readBytes(what())
        guard let string = String(validating: raw, as: UTF8.self) else {
            throw .malformed("\(what()) at offset \(start) is not valid UTF-8")
        }
        return string
    }

    /// Reads a presence byte, then the string if present.
    public mutating func readOptionalString(_ what: @autoclosure () -> String = "a string") throws(SyncProtocolError) -> String? {
        try readBool("whether \(what()) is present") ? try readString(what()) : nil
    }

    /// Reads a count of elements that follow, refusing one larger than the bytes left could
    /// hold at `minimumElementSize` bytes each, so a hostile count cannot make anyone reserve
    /// memory for elements that are not there.
    public mutating func readCount(_ what: @autoclosure () -> String = "a count", minimumElementSize: Int = 1) throws(SyncProtocolError) -> Int {
        let start = offset
        let count = try readVarint(what())
        let limit = UInt64(remaining / max(1, minimumElementSize))
        guard count <= limit else {
            throw .malformed("\(what()) at offset \(start) is \(count), more than the \(remaining) byte(s) left can hold")
        }
        return Int(count)
    }

    /// Runs `body` one nesting level deeper, refusing input nested beyond ``maximumDepth``.
    public mutating func nested<T>(_ what: @autoclosure () -> String, _ body: (inout BinaryReader) throws(SyncProtocolError) -> T) throws(SyncProtocolError) -> T {
        guard depth < Self.maximumDepth else {
            throw .malformed("\(what()) at offset \(offset) nests deeper than \(Self.maximumDepth) levels")
        }
        depth += 1
        defer { depth -= 1 }
        return try body(&self)
    }
}
