/// CRC-32C (Castagnoli), computed a byte at a time from a 256-entry table: the checksum of
/// download frames (``Checkpoint/checksum(of:)``). Pure Swift, so the protocol module depends
/// on the toolchain alone.
struct CRC32C {
    /// The reflected Castagnoli polynomial.
    static let polynomial: UInt32 = 0x82F6_3B78

    /// The CRC of every byte value, for the byte-at-a-time update.
    static let table: [UInt32] = (0 ..< 256).map { index in
        var crc = UInt32(index)
        for _ in 0 ..< 8 { crc = crc & 1 != 0 ? (crc >> 1) ^ polynomial : crc >> 1 }
        return crc
    }

    private var state: UInt32 = 0xFFFF_FFFF

    /// Feeds bytes into the checksum.
    mutating func update(_ bytes: some Sequence<UInt8>) {
        let table = Self.table
        for byte in bytes { state = table[Int(UInt8(truncatingIfNeeded: state) ^ byte)] ^ (state >> 8) }
    }

    /// The checksum of the bytes fed so far.
    var value: UInt32 { state ^ 0xFFFF_FFFF }
}
