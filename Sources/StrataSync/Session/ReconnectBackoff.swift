/// The delays between reconnect attempts: exponential (doubling from `initial` up to
/// `maximum`) with full jitter, so that many clients cut off at once do not return at once.
/// The jitter comes from a seeded generator, so a test can predict every delay.
package struct ReconnectBackoff: Sendable {
    package var initial: Duration
    package var maximum: Duration
    private var generator: SplitMix64
    private var failures = 0

    package init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(60), seed: UInt64) {
        self.initial = initial
        self.maximum = maximum
        self.generator = SplitMix64(seed: seed)
    }

    /// The delay before the next attempt: a uniform random point in the upper half of the
    /// current ceiling (`initial` · 2^failures, at most `maximum`), which keeps a delay from
    /// collapsing to nothing while still spreading clients out.
    package mutating func nextDelay() -> Duration {
        let ceiling = min(maximum, initial * (1 << min(failures, 30)))
        failures += 1
        let ceilingNanoseconds = ceiling.nanoseconds
        guard ceilingNanoseconds > 1 else { return ceiling }
        let half = ceilingNanoseconds / 2
        let jitter = generator.next() % UInt64(ceilingNanoseconds - half + 1)
        return .nanoseconds(half + Int64(jitter))
    }

    /// A connection that reached `welcome` starts the next series from `initial` again.
    package mutating func reset() { failures = 0 }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : scaled &+ attoseconds / 1_000_000_000
    }
}

/// A small, fast, seedable generator (Steele, Lea & Flood's SplitMix64).
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
