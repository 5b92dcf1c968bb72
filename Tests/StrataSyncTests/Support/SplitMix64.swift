/// A small seeded random number generator (Steele, Lea and Flood's SplitMix64): the same seed
/// gives the same sequence on every platform, which is what makes a fault schedule or a workload
/// reproducible from the seed a failing test prints.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// True with probability `chance` (0 never, 1 always).
    mutating func happens(_ chance: Double) -> Bool {
        chance > 0 && Double.random(in: 0..<1, using: &self) < chance
    }
}
