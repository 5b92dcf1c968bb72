// The actor an actor-isolated database instance belongs to, held weakly.
//
// An actor commonly keeps its own `Database` (and its notification tokens) in a stored
// property, as the seeds' `RealmActor` does. If the instance held its actor strongly, that would
// be a cycle: neither would ever go away, and the file would stay open with its watcher thread.
// So the instance keeps the actor weakly, plus the two things its checks need without touching
// the actor: the actor's identity and its executor.

/// An actor an instance is confined to, referenced weakly. Shared by copies of the instance's
/// `Confinement`; immutable after init except for the weak reference the runtime clears.
final class ConfinedActor: @unchecked Sendable {
    // @unchecked: `actor` is a weak reference (loads and the runtime's clearing are atomic);
    // the other properties are immutable.
    private(set) weak var actor: (any Actor)?
    /// The actor's identity, valid for comparisons while the instance lives.
    let id: ObjectIdentifier
    /// The actor's executor, captured at open. It is an unowned reference: used only to ask the
    /// runtime whether the caller is running on it, which never dereferences the actor.
    let executor: UnownedSerialExecutor
    /// The actor's type, for messages.
    let typeName: String

    init(_ actor: any Actor) {
        self.actor = actor
        self.id = ObjectIdentifier(actor)
        self.executor = actor.unownedExecutor
        self.typeName = String(describing: type(of: actor))
    }

    /// Whether `other` is this actor.
    @inline(__always)
    func isSame(as other: any Actor) -> Bool { ObjectIdentifier(other) == id }

    /// Whether the caller runs on the actor's executor, as far as the runtime can tell by
    /// identity; `verifyIsolated` finishes the check for custom executors.
    @inline(__always)
    var isCurrent: Bool { ExecutorIdentity(executor).isCurrent }

    /// Stops with `message` unless the caller is isolated to the actor. The fast path compares
    /// executors; otherwise the actor decides (custom executors can recognise their own
    /// threads), and a deallocated actor can isolate nobody.
    @inline(__always)
    func verifyIsolated(_ message: @autoclosure () -> String) {
        if isCurrent { return }
        guard let actor else {
            fatalError("""
                Database accessed after the actor it is confined to (\(typeName)) was deallocated. \
                An actor-isolated instance, and the objects and collections read from it, can only be used \
                while that actor exists and from code isolated to it.
                """)
        }
        actor.preconditionIsolated(message())
    }
}
