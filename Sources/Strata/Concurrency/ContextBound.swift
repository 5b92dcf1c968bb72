/// Something that may only be touched in the context it was made in, carried through a
/// `Sendable` closure that runs in that same context.
struct ContextBound<Value>: @unchecked Sendable {
    let value: Value
}
