/// The end of a deadline's current stage, counting only time in which the process ran its
/// tasks. The server's store calls (`withDeadline` in StrataSyncServer) and the client's fixed
/// deadlines (``sleep(forRunTime:)``: the login's answer, the session's handshake, the auth
/// route's request) all count time this way.
///
/// A limit bounds the work it waits for, not time that work could not run: when the
/// concurrency pool is held by long synchronous work (a two-core machine running many such
/// tasks), the work and the deadline's timer wait alike, and a stage starved past its end
/// would fail the moment the pool frees, before its work had a chance. So the timer sleeps in
/// slices of at most ``slice``, and a wake later than planned by more than ``tolerance`` (the
/// timer, and so the work, could not run) moves the end on by that whole sleep. The end never moves past
/// ``maximumStretch`` times the limit from the stage's start, so a process that stays starved
/// still gives up; and work that waits on something that never answers (a dropped PostgreSQL
/// query, a server that accepts a connection and says nothing) ends once the limit has passed
/// in a process that runs.
package struct DeadlineStageClock: Sendable {
    /// The longest sleep of the timer: starvation is noticed at this granularity.
    package static let slice: Duration = .seconds(1)
    /// Lateness of a wake that counts as scheduling noise, not starvation.
    package static let tolerance: Duration = .milliseconds(100)
    /// How many times its limit a stage may stretch to, however starved.
    package static let maximumStretch = 10

    package private(set) var operation: String
    package private(set) var limit: Duration
    private var started: ContinuousClock.Instant
    /// When the stage ends, moved on by every starved sleep.
    package private(set) var due: ContinuousClock.Instant
    /// When the timer's current sleep began.
    private var sleepStarted: ContinuousClock.Instant

    package init(limit: Duration, operation: String, now: ContinuousClock.Instant) {
        self.operation = operation
        self.limit = limit
        started = now
        due = now + limit
        sleepStarted = now
    }

    /// Ends the current stage and starts `operation`, which must finish within `limit` from `now`.
    package mutating func begin(_ limit: Duration, _ operation: String, now: ContinuousClock.Instant) {
        self.operation = operation
        self.limit = limit
        started = now
        due = now + limit
    }

    /// The timer goes to sleep at `now`: when it should wake, the stage's end or one slice on
    /// if sooner.
    package mutating func nextWake(now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        sleepStarted = now
        return min(due, now + Self.slice)
    }

    /// The timer planned to wake at `planned` and woke at `now`: moves the end on by the
    /// sleep if it was starved, then returns the message of the stage if it has run out, else
    /// nil.
    package mutating func woke(planned: ContinuousClock.Instant, now: ContinuousClock.Instant) -> String? {
        if now - planned > Self.tolerance {
            due = min(due + (now - sleepStarted), started + limit * Self.maximumStretch)
        }
        return now >= due ? "\(operation) did not finish within \(limit)" : nil
    }
}
