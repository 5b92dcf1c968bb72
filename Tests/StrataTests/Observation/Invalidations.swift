import Observation

/// Counts the invalidations of what `access` reads from an `@Observable` model, every one:
/// the tracking is registered again inside each `onChange`, so a second change to the same
/// property in the same main-actor job counts too. Models here change on the main actor, so
/// `onChange` runs there, before the new value is stored.
@MainActor final class Invalidations {
    private(set) var count = 0
    private let access: @MainActor () -> Void
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(_ access: @escaping @MainActor () -> Void) {
        self.access = access
        track()
    }

    private func track() {
        withObservationTracking { access() } onChange: { [weak self] in
            MainActor.assumeIsolated { self?.fired() }
        }
    }

    private func fired() {
        count += 1
        track()
        let ready = waiters.filter { $0.count <= count }
        waiters.removeAll { $0.count <= count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once at least `expected` invalidations have happened.
    func wait(for expected: Int) async {
        guard count < expected else { return }
        await withCheckedContinuation { waiters.append((expected, $0)) }
    }
}
