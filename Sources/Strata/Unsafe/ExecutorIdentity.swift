// Asking the Swift runtime directly whether the caller runs on an executor, without going
// through an actor (which may be gone) or `assumeIsolated` (which traps).
//
// Invariants it relies on:
// - An `UnownedSerialExecutor` is two words, the executor's identity and its implementation
//   (the witness table, with flag bits), as the runtime passes it (`SerialExecutorRef`). The
//   bit-cast takes it apart into those words; it never dereferences them.
// - `strata_is_current_executor` (CStrataSystem) compares the identity with the runtime's
//   current executor and otherwise asks `swift_task_isCurrentExecutorWithFlags`, the runtime's
//   own check (the one `preconditionIsolated` makes). Neither dereferences the identity, so
//   asking about the executor of an actor that is gone never touches freed memory.

import CStrataSystem

/// An executor reference taken apart into the runtime's two words.
struct ExecutorIdentity {
    let identity: UnsafeRawPointer?
    let implementation: UInt

    @inline(__always)
    init(_ executor: UnownedSerialExecutor) {
        (identity, implementation) = unsafeBitCast(executor, to: (UnsafeRawPointer?, UInt).self)
    }

    /// Whether the caller is running on this executor.
    @inline(__always)
    var isCurrent: Bool { strata_is_current_executor(identity, implementation) }
}
