/// What a `FaultProxy` does to the traffic it forwards, drawn from a seeded generator: each
/// connection gets its own generator (from the seed and the connection's number), so a
/// connection's faults follow from the seed alone whatever the other connections do.
///
/// Faults keep TCP's one promise: the bytes that arrive are a prefix of the bytes sent, in order.
/// A delay holds a chunk (and every later chunk of its direction) back; a drop closes both sides
/// after a few chunks; a cut forwards part of a chunk and then closes both sides.
struct FaultSchedule: Sendable {
    /// The seed every connection's generator derives from.
    var seed: UInt64
    /// The chance that a chunk is held back before it is forwarded.
    var delayChance: Double = 0
    /// The longest a held-back chunk waits, in milliseconds.
    var maximumDelayMilliseconds: Int64 = 0
    /// The chance that a connection is dropped after a few chunks.
    var dropChance: Double = 0
    /// After how many forwarded chunks a dropped connection closes.
    var dropAfterChunks: ClosedRange<Int> = 1...40
    /// The chance that a chunk is cut: part of it is forwarded, then both sides close.
    var cutChance: Double = 0

    /// Forwards everything at once.
    static func none(seed: UInt64 = 0) -> FaultSchedule {
        FaultSchedule(seed: seed)
    }

    /// A hostile network for convergence tests: frequent short delays, some drops and cuts.
    static func hostile(seed: UInt64) -> FaultSchedule {
        FaultSchedule(seed: seed, delayChance: 0.2, maximumDelayMilliseconds: 30,
                      dropChance: 0.15, dropAfterChunks: 2...60, cutChance: 0.01)
    }

    /// The fault plan of the connection numbered `connection` (0 for the first accepted).
    func plan(forConnection connection: Int) -> ConnectionFaultPlan {
        var random = SplitMix64(seed: seed ^ (UInt64(truncatingIfNeeded: connection) &* 0xD6E8_FEB8_6659_FD93))
        let dropAfter: Int? = random.happens(dropChance) ? Int.random(in: dropAfterChunks, using: &random) : nil
        return ConnectionFaultPlan(schedule: self, dropAfterChunks: dropAfter, random: random)
    }
}

/// One connection's faults: whether it is dropped, and the generator its per-chunk faults come
/// from.
struct ConnectionFaultPlan: Sendable {
    /// What a chunk suffers.
    enum ChunkFault: Equatable, Sendable {
        /// Forwarded after `milliseconds` (0: at once, still behind any held-back chunk).
        case delay(milliseconds: Int64)
        /// The first `forwardedBytes` are forwarded, then both sides close.
        case cut(forwardedBytes: Int)
    }

    let schedule: FaultSchedule
    /// After how many chunks (both directions together) the connection closes; nil: never.
    let dropAfterChunks: Int?
    private(set) var random: SplitMix64

    init(schedule: FaultSchedule, dropAfterChunks: Int?, random: SplitMix64) {
        self.schedule = schedule
        self.dropAfterChunks = dropAfterChunks
        self.random = random
    }

    /// The fault for the next chunk of `length` bytes.
    mutating func nextChunkFault(length: Int) -> ChunkFault {
        if random.happens(schedule.cutChance) {
            return .cut(forwardedBytes: Int.random(in: 0...max(0, length - 1), using: &random))
        }
        if schedule.maximumDelayMilliseconds > 0, random.happens(schedule.delayChance) {
            return .delay(milliseconds: Int64.random(in: 1...schedule.maximumDelayMilliseconds, using: &random))
        }
        return .delay(milliseconds: 0)
    }
}
