/// One client's hybrid logical clock: hands out increasing timestamps and moves past every
/// timestamp it observes, so an operation made after seeing another is ordered after it even
/// when the wall clocks of the two devices disagree.
public struct HybridClock: Sendable {
    /// The client whose timestamps this clock makes.
    public let clientID: UInt64
    /// The newest timestamp made or observed.
    public private(set) var latest: HybridTimestamp

    /// A clock for `clientID` that has made or observed nothing newer than `latest`.
    public init(clientID: UInt64, latest: HybridTimestamp = .zero) {
        self.clientID = clientID
        self.latest = latest
    }

    /// A new timestamp after every one made or observed so far. `wallMilliseconds` is the
    /// current wall time (passed in so tests can choose it).
    ///
    /// The clock saturates rather than traps at the last representable time (wall time and
    /// counter both at their maximum): only an observed timestamp half a billion years ahead
    /// gets it there, which a peer should refuse before it reaches the clock.
    public mutating func tick(wallMilliseconds: UInt64) -> HybridTimestamp {
        if wallMilliseconds > latest.wallMilliseconds {
            latest = HybridTimestamp(wallMilliseconds: wallMilliseconds, counter: 0, clientID: clientID)
        } else if latest.counter == UInt32.max && latest.wallMilliseconds == UInt64.max {
            latest = HybridTimestamp(wallMilliseconds: .max, counter: .max, clientID: clientID)
        } else if latest.counter == UInt32.max {
            latest = HybridTimestamp(wallMilliseconds: latest.wallMilliseconds + 1, counter: 0, clientID: clientID)
        } else {
            latest = HybridTimestamp(wallMilliseconds: latest.wallMilliseconds, counter: latest.counter + 1, clientID: clientID)
        }
        return latest
    }

    /// Moves the clock past a timestamp received from elsewhere.
    public mutating func observe(_ timestamp: HybridTimestamp) {
        if timestamp.wallMilliseconds > latest.wallMilliseconds
            || (timestamp.wallMilliseconds == latest.wallMilliseconds && timestamp.counter > latest.counter) {
            latest = HybridTimestamp(wallMilliseconds: timestamp.wallMilliseconds, counter: timestamp.counter, clientID: clientID)
        }
    }
}
