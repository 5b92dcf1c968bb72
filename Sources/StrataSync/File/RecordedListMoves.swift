// Recording `List.move(from:to:)` and `swapAt` as the calls that were made: a `listMove` of
// the element each call moved. Comparing the list with its state cannot tell which element
// moved (moving one element by one place gives the list that moving its neighbour does), so
// the list notes its moves in the transaction (`ListMove`) and the recorder reads them here.

import StrataStore
import StrataSyncProtocol

/// The operations of a list property that only moves changed in this transaction.
enum RecordedListMoves {
    /// The operations that make the list of `property` in `state` read `new` by moving, for
    /// each of `moves` in order, the element at its `from` to its `to`: a `listMove` of that
    /// element after its new predecessor's position (or the front), stamped by
    /// `makeTimestamp`, which must return increasing timestamps newer than everything in
    /// `state` (a client's ``HybridClock`` does). So the element moved is the one recorded,
    /// and "the newest move of an element wins" applies to the element the caller moved.
    ///
    /// Nil when the moves alone do not turn the state's list into `new` (the transaction also
    /// inserted, removed or replaced elements of that list, or the list was not the state's
    /// when it was moved); the caller then records the change by comparison (``ListDiff``).
    /// A non-nil result is checked: applied to `state`, it gives `new`.
    static func changes(property: String, moves: [ListMove], in state: SyncObjectState, to new: [SyncValue],
                        makeTimestamp: () -> HybridTimestamp) -> [SyncOperation]? {
        var entries = state.listEntries(of: property)
        var values = entries.map(\.value)
        for move in moves {
            guard values.indices.contains(move.from), values.indices.contains(move.to) else { return nil }
            values.insert(values.remove(at: move.from), at: move.to)
        }
        guard values == new else { return nil }

        var operations: [SyncOperation] = []
        var after = state
        for move in moves {
            var entry = entries.remove(at: move.from)
            let anchor = move.to > 0 ? entries[move.to - 1].position : nil
            let timestamp = makeTimestamp()
            let operation = SyncOperation(timestamp: timestamp, object: state.object,
                                          change: .listMove(property: property, element: entry.element, after: anchor))
            after.apply(operation)
            operations.append(operation)
            entry.position = timestamp
            entries.insert(entry, at: move.to)
        }
        // Each move lands right after its anchor because it is the newest position there; a
        // state that reads otherwise (which the merge rules rule out) is recorded by comparison.
        guard after.listEntries(of: property).map(\.value) == new else { return nil }
        return operations
    }
}
