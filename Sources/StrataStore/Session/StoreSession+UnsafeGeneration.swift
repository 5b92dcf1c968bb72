// The session's generation counter, which lives outside the session object so that a managed
// object's accessor can compare it through a pointer it holds, without touching the session.
//
// Invariants:
// - The session owns the memory: `allocateGeneration()` runs once, for the stored
//   `generationPointer`, and `deallocateGeneration()` once, from the session's `deinit`.
// - A pointer handed out (an object slot's `sessionGeneration`) is read only while the
//   session lives: an object reaches it through its table context, which holds the session.
// - Like the rest of the session, the counter is read and bumped by its one owner at a time.

extension StoreSession {
    /// A new counter for `generationPointer`, starting at 1.
    static func allocateGeneration() -> UnsafeMutablePointer<UInt64> {
        let pointer = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        pointer.initialize(to: 1)
        return pointer
    }

    /// Frees the counter; called once, by `deinit`.
    func deallocateGeneration() {
        generationPointer.deallocate()
    }

    /// Bumped whenever views handed out earlier (clusters, chunks) may be stale.
    package var generation: UInt64 {
        @inline(__always) get { generationPointer.pointee }
        @inline(__always) set { generationPointer.pointee = newValue }
    }
}
