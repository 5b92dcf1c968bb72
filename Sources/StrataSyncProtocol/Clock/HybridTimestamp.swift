/// A hybrid logical clock reading: wall-clock milliseconds, a counter for events within one
/// millisecond (or while the wall clock lags a clock already seen), and the client that made it.
///
/// Timestamps are totally ordered (wall time, then counter, then client), and a device's clock
/// never goes backwards past one it has observed, so the order respects causality on each
/// device. Every operation carries one; the conflict rules compare them.
public struct HybridTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970 (the largest wall time seen, not necessarily the local clock).
    public var wallMilliseconds: UInt64
    /// Orders events within one `wallMilliseconds`.
    public var counter: UInt32
    /// The client that made the timestamp; breaks ties, so no two clients' timestamps are equal.
    public var clientID: UInt64

    /// Makes a timestamp.
    public init(wallMilliseconds: UInt64, counter: UInt32, clientID: UInt64) {
        self.wallMilliseconds = wallMilliseconds
        self.counter = counter
        self.clientID = clientID
    }

    /// Before every real timestamp.
    public static let zero = HybridTimestamp(wallMilliseconds: 0, counter: 0, clientID: 0)

    /// Orders by wall time, then counter, then client id.
    public static func < (lhs: HybridTimestamp, rhs: HybridTimestamp) -> Bool {
        if lhs.wallMilliseconds != rhs.wallMilliseconds { return lhs.wallMilliseconds < rhs.wallMilliseconds }
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        return lhs.clientID < rhs.clientID
    }

    /// `wall.counter@client` (client in hex), for logs.
    public var description: String { "\(wallMilliseconds).\(counter)@\(String(clientID, radix: 16))" }
}
