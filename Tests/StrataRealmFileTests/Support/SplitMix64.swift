/// A seeded generator, so a fuzz case that fails can be replayed from its seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

extension Array where Element == UInt8 {
    /// Writes `value` little-endian at `offset`.
    mutating func storeLittleEndian(_ value: UInt64, at offset: Int, byteCount: Int = 8) {
        for index in 0..<byteCount {
            self[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))
        }
    }
}
