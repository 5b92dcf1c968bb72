import StrataSyncProtocol

/// Shorthand for the merge tests: timestamps and operations on one object.
enum Ops {
    static let todo = ObjectRef(className: "Todo", primaryKey: .int(1))

    static func time(_ wall: UInt64, client: UInt64 = 1, counter: UInt32 = 0) -> HybridTimestamp {
        HybridTimestamp(wallMilliseconds: wall, counter: counter, clientID: client)
    }

    static func op(_ wall: UInt64, client: UInt64 = 1, _ change: SyncOperation.Change) -> SyncOperation {
        SyncOperation(timestamp: time(wall, client: client), object: todo, change: change)
    }

    /// The state after applying `operations` in this order.
    static func state(_ operations: [SyncOperation]) -> SyncObjectState {
        var state = SyncObjectState(object: todo)
        for operation in operations { state.apply(operation) }
        return state
    }

    /// Every order of a few operations (all permutations, for up to 6).
    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        var result: [[T]] = []
        for index in items.indices {
            var rest = items
            let first = rest.remove(at: index)
            for tail in permutations(rest) { result.append([first] + tail) }
        }
        return result
    }

    /// The one state every order of `operations` reaches; records an issue naming the order
    /// if two orders disagree.
    static func stateInEveryOrder(_ operations: [SyncOperation]) -> (state: SyncObjectState, allAgree: Bool) {
        let orders = permutations(operations)
        let first = state(orders[0])
        let allAgree = orders.allSatisfy { state($0) == first && state($0).encoded() == first.encoded() }
        return (first, allAgree)
    }
}
