import Synchronization

/// Whether an observation is still wanted, readable from any thread.
final class ObservationState: Sendable {
    /// Read for every observer in every delivery pass, so an atomic rather than a lock.
    private let active = Atomic<Bool>(true)
    var isActive: Bool { active.load(ordering: .acquiring) }
    func stop() { active.store(false, ordering: .releasing) }
}
