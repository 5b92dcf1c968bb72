/// Appends the protocol's primitive encodings to a byte array: LEB128 varints (zig-zag for
/// signed integers), fixed-width little-endian integers, floating-point values as their bit
/// patterns, and length-prefixed byte arrays and UTF-8 strings.
///
/// The frame codec builds on it, and so do the client and the server to store changesets and
/// object states (see ``ClientChangeset/encoded()`` and its siblings). ``BinaryReader`` reads
/// what it writes.
///
/// ```swift
/// var writer = BinaryWriter()
/// writer.writeVarint(300)
/// writer.writeString("todo")
/// let bytes = writer.bytes
/// ```
public struct BinaryWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer; `capacity` reserves room for that many bytes.
    public init(capacity: Int = 0) {
        bytes = []
        if capacity > 0 { bytes.reserveCapacity(capacity) }
    }

    /// Appends one byte.
    public mutating func writeByte(_ byte: UInt8) { bytes.append(byte) }

    /// Appends `false` as 0, `true` as 1.
    public mutating func writeBool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// Appends an unsigned LEB128 varint: 7 bits per byte, low bits first, the high bit set on
    /// every byte but the last (1 to 10 bytes).
    public mutating func writeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Appends a signed integer zig-zag encoded (0, -1, 1, -2, … → 0, 1, 2, 3, …) as a varint,
    /// so small negative numbers stay short.
    public mutating func writeSignedVarint(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Appends a `UInt16`, little-endian.
    public mutating func writeUInt16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    /// Appends a `UInt32`, little-endian.
    public mutating func writeUInt32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// Appends a `UInt64`, little-endian.
    public mutating func writeUInt64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// Appends a `Float`'s bit pattern (4 bytes, little-endian); every NaN payload survives.
    public mutating func writeFloat(_ value: Float) { writeUInt32(value.bitPattern) }

    /// Appends a `Double`'s bit pattern (8 bytes, little-endian); every NaN payload survives.
    public mutating func writeDouble(_ value: Double) { writeUInt64(value.bitPattern) }

    /// Appends bytes as they are, without a length.
    public mutating func writeRawBytes(_ raw: some Sequence<UInt8>) { bytes.append(contentsOf: raw) }

    /// Appends a varint length, then the bytes.
    public mutating func writeBytes(_ raw: some Collection<UInt8>) {
        writeVarint(UInt64(raw.count))
        bytes.append(contentsOf: raw)
    }

    /// Appends a string as its UTF-8 bytes, length-prefixed.
    public mutating func writeString(_ string: String) { writeBytes(string.utf8) }

    /// Appends a presence byte (0 or 1), then the string if present.
    public mutating func writeOptionalString(_ string: String?) {
        writeBool(string != nil)
        if let string { writeString(string) }
    }

    /// Appends a count of elements that follow (a varint).
    public mutating func writeCount(_ count: Int) { writeVarint(UInt64(count)) }
}
