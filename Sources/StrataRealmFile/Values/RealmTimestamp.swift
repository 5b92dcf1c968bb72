/// A Realm timestamp: seconds and nanoseconds since 1970-01-01 UTC, both with the sign of the
/// whole value (−1.5 s is −1 s and −500,000,000 ns), as Realm stores them.
public struct RealmTimestamp: Hashable, Sendable {
    /// Whole seconds since 1970-01-01 UTC.
    public let seconds: Int64
    /// The nanoseconds within the second, with the sign of `seconds` (|value| < 10⁹).
    public let nanoseconds: Int32

    /// A timestamp from its two stored parts.
    public init(seconds: Int64, nanoseconds: Int32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }
}
